package render

import (
	"io"

	lrender "github.com/osteele/liquid/render"
)

func renderNode(c *compiled, w io.Writer, b map[string]any) error {
	if err := lrender.Render(c.root, w, b, *engine); err != nil {
		return err
	}
	return nil
}
