package main

import (
	"encoding/json"
	"fmt"

	"github.com/urfave/cli/v2"

	"quire/ledger"
	"quire/ledger/refusal"
)

func callCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "call",
		Usage:     "run any operation of the table and print its JSON answer (or the refusal object, exit 1)",
		ArgsUsage: "OPERATION",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "args", Usage: jsonUsage("the arguments, a JSON object,"), Value: "{}"},
			&cli.BoolFlag{Name: "list", Usage: "list the operations"},
			&cli.BoolFlag{Name: "json", Usage: "the answer is JSON with or without it; with --list, the operations as JSON"},
		},
		Action: func(c *cli.Context) error {
			if c.Bool("list") {
				if c.Bool("json") {
					type opInfo struct {
						Name        string `json:"name"`
						Description string `json:"description"`
						ReadOnly    bool   `json:"read_only"`
					}
					var ops []opInfo
					for _, op := range ledger.Ops() {
						ops = append(ops, opInfo{op.Name, op.Description, op.ReadOnly})
					}
					return e.printJSON(ops)
				}
				for _, op := range ledger.Ops() {
					fmt.Fprintf(e.out, "%-24s %s\n", op.Name, op.Description)
				}
				return nil
			}
			if err := needArgs(c, 1, 1, "OPERATION (quire call --list shows them)"); err != nil {
				return err
			}
			name := c.Args().First()
			if _, ok := ledger.Lookup(name); !ok {
				var names []string
				for _, op := range ledger.Ops() {
					names = append(names, op.Name)
				}
				msg := fmt.Sprintf("no operation %q; quire call --list shows them", name)
				if near := closest(name, names); near != "" {
					msg = fmt.Sprintf("no operation %q; did you mean %q? (quire call --list shows them)", name, near)
				}
				e.printed = true
				err := refusal.At(refusal.NotFound, "OPERATION", "%s", msg)
				e.printJSON(err.Object())
				return err
			}
			res, err := e.call(c, name)
			if err == nil {
				return e.printJSON(res)
			}
			e.printed = true
			e.printJSON(refusal.Of(err).Object())
			return err
		},
	}
}

// call reads --args and runs the operation.
func (e *env) call(c *cli.Context, name string) (any, error) {
	raw, err := e.jsonBytes("--args", c.String("args"))
	if err != nil {
		return nil, err
	}
	l, err := openLedger(c)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	return l.Call(c.Context, name, json.RawMessage(raw))
}
