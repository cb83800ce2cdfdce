package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"quire/words/near"
	"quire/words/refusal"
	"quire/words/shape"
)

// quire shape check SHAPE FILE: a JSON file against an output shape.
func shapeCommand(e *env) *cli.Command {
	return &cli.Command{
		Name: "shape", Usage: "output shapes",
		Subcommands: []*cli.Command{{
			Name: "check", Usage: "check a JSON file against a shape: " + strings.Join(shape.Names(), ", "), ArgsUsage: "SHAPE FILE",
			Flags: []cli.Flag{jsonFlag},
			Action: func(c *cli.Context) error {
				if err := needArgs(c, 2, 2, "SHAPE FILE"); err != nil {
					return err
				}
				name, file := c.Args().Get(0), c.Args().Get(1)
				if !shape.Known(name) {
					return refusal.Invalid("SHAPE", "%q is not a shape%s", name, near.Suggest(name, shape.Names(), "the shapes"))
				}
				data, err := os.ReadFile(file)
				if err != nil {
					return refusal.Invalid("FILE", "%v", err)
				}
				issues := shape.Check(name, data)
				if c.Bool("json") && len(issues) == 0 {
					return e.printJSON(map[string]any{"shape": name, "fits": true})
				}
				for _, is := range issues {
					if c.Bool("json") {
						break
					}
					fmt.Fprintln(e.out, shape.Format(is))
				}
				if len(issues) > 0 {
					return &refusal.Error{Code: refusal.InvalidInput, Message: fmt.Sprintf("%s does not fit the shape %s: %d issues", file, name, len(issues)), Issues: issues}
				}
				fmt.Fprintf(e.out, "%s fits the shape %s.\n", file, name)
				return nil
			},
		}},
	}
}
