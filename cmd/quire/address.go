package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"quire/ledger"
)

// `quire address explain ADDRESS` and `quire activity`: the commands of the
// addresses, and of the activity whose rows are named by them.

func init() {
	extraCommands = append(extraCommands, addressCommand, activityCommand)
}

func addressCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "address",
		Usage: "read addresses",
		Subcommands: []*cli.Command{{
			Name: "explain", Usage: "say what an address names and the calls that read and act on it (JSON, with or without --json)", ArgsUsage: "ADDRESS",
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
				return e.printJSON(res)
			},
		}},
	}
}

func activityCommand(e *env) *cli.Command {
	return &cli.Command{
		Name: "activity", Usage: "list the organization's activity, newest first",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "playbook", Usage: "only this playbook's rows"},
			&cli.StringFlag{Name: "since", Usage: "RFC 3339 time: only rows after it"},
			&cli.IntFlag{Name: "limit", Usage: "at most this many rows (default 50)"},
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
