package main

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"quire/ledger"
	"quire/words/address"
)

// `quire address explain ADDRESS` and `quire activity`: the commands of the
// addresses, and of the activity whose rows are named by them.

func addressCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "address",
		Usage: "read addresses",
		Subcommands: []*cli.Command{{
			Name: "explain", Usage: "say what an address names, its segments and the calls that read and act on it", ArgsUsage: "ADDRESS",
			Flags: []cli.Flag{jsonFlag},
			Action: func(c *cli.Context) error {
				if err := needArgs(c, 1, 1, "ADDRESS, one address"); err != nil {
					return err
				}
				raw, _ := json.Marshal(map[string]string{"address": c.Args().First()})
				// explain_address reads no vault, so it runs without one:
				// an address is explained wherever the command is run.
				var l *ledger.Ledger
				res, err := l.Call(c.Context, "explain_address", raw)
				if err != nil {
					return err
				}
				if c.Bool("json") {
					return e.printJSON(res)
				}
				showExplanation(e.out, res.(*address.Explanation))
				return nil
			},
		}},
	}
}

// argRank orders a call's arguments: these first, the others by name.
var argRank = map[string]int{"playbook": 1, "type": 2, "name": 3}

// showExplanation prints an explanation for a person: the address, what it
// names, its segments by their names, then each call with its arguments
// (the playbook first, the type and name next) and its note on the line
// below, and the explanation's note. --json prints all of it as it is.
func showExplanation(w io.Writer, ex *address.Explanation) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "address\t%s\n", ex.Address)
	fmt.Fprintf(tw, "names\t%s\n", ex.Thing)
	if ex.Of != "" {
		fmt.Fprintf(tw, "kind\t%s of a %s\n", ex.Kind, ex.Of)
	} else {
		fmt.Fprintf(tw, "kind\t%s\n", ex.Kind)
	}
	seg := reflect.ValueOf(ex.Segments)
	for i := 0; i < seg.NumField(); i++ {
		if f := seg.Field(i); !f.IsZero() {
			name, _, _ := strings.Cut(seg.Type().Field(i).Tag.Get("json"), ",")
			fmt.Fprintf(tw, "%s\t%v\n", name, reflect.Indirect(f).Interface())
		}
	}
	show := func(what string, c address.Call) {
		if c.Tool == "" { // not served here, or the person's: the note says so
			fmt.Fprintf(tw, "%s\t%s\n", what, c.Note)
			return
		}
		keys := make([]string, 0, len(c.Args))
		for k := range c.Args {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			ri, rj := argRank[keys[i]], argRank[keys[j]]
			if ri == 0 || rj == 0 {
				return ri > rj || ri == rj && keys[i] < keys[j]
			}
			return ri < rj
		})
		call := c.Tool
		for _, k := range keys {
			call += " " + k + "=" + c.Args[k]
		}
		fmt.Fprintf(tw, "%s\t%s\n", what, call)
		if c.Note != "" {
			fmt.Fprintf(tw, "\t  %s\n", c.Note)
		}
	}
	for _, c := range ex.Read {
		show("read", c)
	}
	for _, c := range ex.Act {
		show("act", c)
	}
	if ex.Resolve != nil {
		show("resolve", *ex.Resolve)
	}
	if ex.Note != "" {
		fmt.Fprintf(tw, "note\t%s\n", ex.Note)
	}
	tw.Flush()
}

func activityCommand(e *env) *cli.Command {
	return &cli.Command{
		Name: "activity", Usage: "list the organization's activity, newest first",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "playbook", Usage: "only this playbook's rows"},
			&cli.StringFlag{Name: "since", Usage: "RFC 3339 time: only rows after it"},
			&cli.IntFlag{Name: "limit", Usage: "at most this many rows", DefaultText: "50"},
			&cli.StringFlag{Name: "member", Usage: "mark the rows this member has seen"},
			jsonFlag,
		},
		Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
			if c.NArg() > 0 {
				return unknownCommand(c.Args().First(), c.Command)
			}
			args := map[string]any{"playbook": c.String("playbook"), "since": c.String("since"), "member": c.String("member")}
			if c.IsSet("limit") {
				args["limit"] = c.Int("limit")
			}
			return callAndShow(e, c, l, "list_activity", args, func(res any) {
				tw := tabwriter.NewWriter(e.out, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "AT\tKIND\tACTOR\tADDRESS\tSUMMARY")
				for _, it := range res.(*ledger.ActivityPage).Items {
					mark := ""
					if it.Seen != nil && !*it.Seen {
						mark = "* "
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s%s\n", it.At, it.Kind, it.Actor, it.Address, mark, it.Summary)
				}
				tw.Flush()
			})
		}),
		Subcommands: []*cli.Command{{
			Name: "seen", Usage: "mark rows of the activity as seen by a member", ArgsUsage: "ADDRESS...",
			Flags: []cli.Flag{&cli.StringFlag{Name: "member", Required: true, Usage: "the member who saw them"}, jsonFlag},
			Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
				return callAndShow(e, c, l, "mark_activity_seen", map[string]any{"member": c.String("member"), "items": c.Args().Slice()},
					func(res any) {
						m := res.(*ledger.SeenMarks)
						fmt.Fprintf(e.out, "%s saw %d at %s\n", m.Member, len(m.Items), m.At)
					})
			}),
		}},
	}
}
