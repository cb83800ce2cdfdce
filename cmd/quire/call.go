package main

import (
	"encoding/json"
	"fmt"
	"io"

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
			&cli.StringFlag{Name: "args", Usage: "the arguments as a JSON object; - reads them from standard input", Value: "{}"},
			&cli.BoolFlag{Name: "list", Usage: "list the operations"},
		},
		Action: func(c *cli.Context) error {
			if c.Bool("list") {
				for _, op := range ledger.Ops() {
					fmt.Fprintf(e.out, "%-24s %s\n", op.Name, op.Description)
				}
				return nil
			}
			name := c.Args().First()
			if name == "" {
				return refusal.Invalid("OPERATION", "quire call needs an operation; quire call --list shows them")
			}
			raw := []byte(c.String("args"))
			if c.String("args") == "-" {
				var err error
				if raw, err = io.ReadAll(e.in); err != nil {
					return err
				}
			}
			l, err := openLedger(c)
			if err == nil {
				defer l.Close()
				var res any
				if res, err = l.Call(c.Context, name, json.RawMessage(raw)); err == nil {
					return e.printJSON(res)
				}
			}
			e.printJSON(refusal.Of(err).Object())
			return err
		},
	}
}
