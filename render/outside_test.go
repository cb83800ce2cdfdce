package render

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osteele/liquid/parser"
	lrender "github.com/osteele/liquid/render"
)

// No template reads a file: include is refused by the check, and the
// engine itself cannot run it, whatever reaches it.
func TestTemplatesReadNoFileOutside(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret.liquid")
	if err := os.WriteFile(secret, []byte("PLANTED-SECRET-7"), 0o644); err != nil {
		t.Fatal(err)
	}
	// include joins its name to the template's folder: the file as named
	// from the working folder.
	wd, _ := os.Getwd()
	if rel, err := filepath.Rel(wd, secret); err == nil {
		secret = rel
	}
	for _, src := range []string{
		"{% include '" + secret + "' %}",
		"{%- include '" + secret + "' -%}",
		"{% liquid\ninclude '" + secret + "'\n%}",
		"{% render '" + secret + "' %}",
	} {
		issues := CheckTemplate("result", src, 1, nil, "")
		if len(issues) == 0 || !strings.Contains(issues[0].Message, "each template stands alone") {
			t.Errorf("%q: issues %+v", src, issues)
		}
		for _, is := range issues {
			if strings.Contains(is.Message, "PLANTED-SECRET") {
				t.Errorf("%q: an issue quotes the file: %s", src, is.Message)
			}
		}
		if out := Result(src, done, workflow("fulfill-order"), []byte(`{}`), readTime, Options{}); strings.Contains(out, "PLANTED-SECRET") {
			t.Errorf("%q renders the file: %s", src, out)
		}
	}
	// The engine, past the check.
	root, err := engine.Compile("{% include '"+secret+"' %}", parser.SourceLoc{LineNo: 1})
	if err == nil {
		var buf bytes.Buffer
		err = lrender.Render(root, &buf, map[string]any{}, *engine)
		if strings.Contains(buf.String(), "PLANTED-SECRET") {
			t.Fatalf("the engine read the file: %s", buf.String())
		}
	}
	if err == nil || strings.Contains(err.Error(), "PLANTED-SECRET") {
		t.Fatalf("the engine ran include: %v", err)
	}
}
