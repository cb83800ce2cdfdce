package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/urfave/cli/v2"

	"quire/ledger"
	"quire/words/refusal"
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
			args := func() (string, string, error) { return e.readAt("--args", c.String("args"), true) }
			open := func() (*ledger.Ledger, func(), error) {
				l, err := openLedger(c)
				if err != nil {
					return nil, nil, err
				}
				return l, func() { l.Close() }, nil
			}
			return e.callOp(c.Context, c.Args().First(), args, open)
		},
	}
}

// callOp is `quire call OPERATION` from its operation on: the one place
// its answer is printed, for the command and for the resident engine
// (resident.go), which serves the quire front's calls with a warm ledger
// and must print byte for byte what the command prints. args gives the
// --args text and where it came from (read only once the operation is
// known, as it always was); open gives the ledger and what to do with it
// after. The answer, or on a refusal the refusal object, goes to standard
// output; a refusal is returned for fail, which says it on standard error.
func (e *env) callOp(ctx context.Context, name string, args func() (text, from string, err error), open func() (*ledger.Ledger, func(), error)) error {
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
	res, err := e.call(ctx, args, open, name)
	if err == nil {
		return e.printJSON(res)
	}
	e.printed = true
	e.printJSON(refusal.Of(err).Object())
	return err
}

// call reads --args, checks it is one JSON value and runs the operation.
func (e *env) call(ctx context.Context, args func() (string, string, error), open func() (*ledger.Ledger, func(), error), name string) (any, error) {
	s, from, err := args()
	if err != nil {
		return nil, err
	}
	if err := checkJSONValue("--args", from, []byte(s)); err != nil {
		return nil, err
	}
	l, done, err := open()
	if err != nil {
		return nil, err
	}
	defer done()
	return l.Call(ctx, name, json.RawMessage(s))
}
