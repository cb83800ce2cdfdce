package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/urfave/cli/v2"

	"quire/ledger"
	"quire/words/near"
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
			return e.callOp(c.Context, c.Args().First(), os.Getenv("QUIRE_ACTOR"), args, open)
		},
	}
}

// callOp is `quire call OPERATION` from its operation on: the one place
// its answer is printed, for the command and for the resident engine
// (resident.go), which serves the quire front's calls with a warm ledger
// and must print byte for byte what the command prints. args gives the
// --args text and where it came from (read only once the operation is
// known, as it always was); actor is QUIRE_ACTOR's value, who acts when
// the arguments do not say (actingAs); open gives the ledger and what to
// do with it after. The answer, or on a refusal the refusal object, goes to standard
// output; a refusal is returned for fail, which says it on standard error.
func (e *env) callOp(ctx context.Context, name, actor string, args func() (text, from string, err error), open func() (*ledger.Ledger, func(), error)) error {
	op, ok := ledger.Lookup(name)
	if !ok {
		msg := fmt.Sprintf("no operation %q; quire call --list shows them", name)
		if n := near.Closest(name, opNames()); n != "" {
			msg = fmt.Sprintf("no operation %q; did you mean %q? (quire call --list shows them)", name, n)
		}
		e.printed = true
		err := refusal.At(refusal.NotFound, "OPERATION", "%s", msg)
		e.printJSON(err.Object())
		return err
	}
	res, err := e.call(ctx, args, open, op, actor)
	if err == nil {
		return e.printJSON(res)
	}
	e.printed = true
	e.printJSON(refusal.Of(err).Object())
	return err
}

// call reads --args, checks it is one JSON value and runs the operation
// as actor when the arguments name no one.
func (e *env) call(ctx context.Context, args func() (string, string, error), open func() (*ledger.Ledger, func(), error), op *ledger.Op, actor string) (any, error) {
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
	return l.Call(ctx, op.Name, actingAs(op, json.RawMessage(s), actor))
}

// actingAs fills who acts into a call's arguments, as the verbs' --actor
// takes QUIRE_ACTOR and as a token's principal fills them over HTTP and
// MCP: an operation that takes an actor (or an author, where it has no
// actor) and is not told one, or told "", acts as actor. Arguments that
// are no JSON object are left for the operation to refuse in its words.
func actingAs(op *ledger.Op, raw json.RawMessage, actor string) json.RawMessage {
	if actor == "" {
		return raw
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return raw
	}
	for _, name := range []string{"actor", "author"} {
		if !takesArg(op, name) {
			continue
		}
		if v, ok := fields[name]; ok && string(v) != `""` && string(v) != "null" {
			return raw
		}
		fields[name], _ = json.Marshal(actor)
		out, err := json.Marshal(fields)
		if err != nil {
			return raw
		}
		return out
	}
	return raw
}

// takesArg says whether an operation has an argument of that JSON name.
func takesArg(op *ledger.Op, name string) bool {
	t := op.Args
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for i := 0; i < t.NumField(); i++ {
		if n, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); n == name {
			return true
		}
	}
	return false
}
