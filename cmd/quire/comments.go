package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"quire/ledger"
)

// `quire comment make|list|resolve`: the comment operations for people.
// Without --playbook each works on the organization's own comments.

func commentCommand(e *env) *cli.Command {
	playbook := func() cli.Flag {
		return &cli.StringFlag{Name: "playbook", Usage: "the playbook whose comments; the organization's own when left out"}
	}
	showOne := func(res any) {
		c := res.(*ledger.Comment)
		state := "open"
		if c.Resolved {
			state = "resolved (" + c.How + ") by " + c.ResolvedBy
		}
		fmt.Fprintf(e.out, "%s  %s  %s  %s\n", c.ID, c.Address, c.Author, state)
	}
	return &cli.Command{
		Name:  "comment",
		Usage: "make, list and resolve comments on addresses",
		Subcommands: []*cli.Command{
			{
				Name: "make", Usage: "make a comment on an address (a reply is a new comment on the same address)", ArgsUsage: "TEXT (- or @- reads it from standard input, @FILE from a file)",
				Flags: []cli.Flag{playbook(),
					&cli.StringFlag{Name: "address", Required: true, Usage: "the address commented on (quire address explain says what one names)"},
					&cli.StringFlag{Name: "author", EnvVars: []string{"QUIRE_ACTOR"}, Required: true, Usage: "who comments"},
					jsonFlag},
				Before: wantArgs(1, -1, "TEXT"),
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					text, err := e.textArgs(c)
					if err != nil {
						return err
					}
					return callAndShow(e, c, l, "make_comment", map[string]any{"playbook": c.String("playbook"),
						"address": c.String("address"), "text": text, "author": c.String("author")}, showOne)
				}),
			},
			{
				Name: "list", Usage: "list comments, oldest first",
				Flags: []cli.Flag{playbook(),
					&cli.StringFlag{Name: "under", Usage: "only comments on this address and what it holds"},
					&cli.StringFlag{Name: "address", Usage: "only comments on exactly this address"},
					&cli.BoolFlag{Name: "resolved", Usage: "only the resolved"},
					&cli.BoolFlag{Name: "open", Usage: "only the open"},
					jsonFlag},
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					args := map[string]any{"playbook": c.String("playbook"), "under": c.String("under"), "address": c.String("address")}
					switch {
					case c.Bool("resolved") && c.Bool("open"):
					case c.Bool("resolved"):
						args["resolved"] = true
					case c.Bool("open"):
						args["resolved"] = false
					}
					return callAndShow(e, c, l, "list_comments", args, func(res any) {
						tw := tabwriter.NewWriter(e.out, 2, 4, 2, ' ', 0)
						fmt.Fprintln(tw, "ID\tADDRESS\tAUTHOR\tCREATED\tSTATE\tTEXT")
						for _, cm := range res.([]*ledger.Comment) {
							state := "open"
							if cm.Resolved {
								state = cm.How
							}
							text, _, more := strings.Cut(strings.TrimSpace(cm.Text), "\n")
							if more {
								text += " …"
							}
							fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", cm.ID, cm.Address, cm.Author, cm.Created, state, text)
						}
						tw.Flush()
					})
				}),
			},
			{
				Name: "resolve", Usage: "resolve a comment: acted, declined, answered or obsolete", ArgsUsage: "ID",
				Flags: []cli.Flag{playbook(),
					&cli.StringFlag{Name: "how", Required: true, Usage: "acted, declined, answered or obsolete"},
					&cli.StringFlag{Name: "actor", EnvVars: []string{"QUIRE_ACTOR"}, Usage: "who resolves it"},
					jsonFlag},
				Before: wantArgs(1, 1, "ID (quire comment list shows them)"),
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					return callAndShow(e, c, l, "resolve_comment", map[string]any{"playbook": c.String("playbook"),
						"id": c.Args().First(), "how": c.String("how"), "actor": c.String("actor")}, showOne)
				}),
			},
		},
	}
}
