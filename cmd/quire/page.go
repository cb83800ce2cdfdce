package main

import (
	"encoding/json"
	"fmt"
	"quire/words/refusal"
	"time"

	"github.com/urfave/cli/v2"

	"quire/ledger"
)

// quire page status|render|receipt|verify: a definition's page, its
// standing, its renders, its receipt and the check of it.
func pageCommand(e *env) *cli.Command {
	defFlags := func() []cli.Flag {
		return []cli.Flag{playbookFlag(), typeFlag(),
			&cli.StringFlag{Name: "name", Required: true, Usage: "the definition's name"}}
	}
	return &cli.Command{
		Name: "page", Usage: "read a definition's page: its standing and its renders",
		Subcommands: []*cli.Command{
			{
				Name: "status", Usage: "the standing of a page's views", Flags: append(defFlags(), jsonFlag),
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					return callShowThen(e, c, l, "get_definition", map[string]any{
						"playbook": c.String("playbook"), "type": c.String("type"), "name": c.String("name"),
					}, func(res any) {
						d := res.(*ledger.Definition)
						if d.Page == nil || d.Page.Standing == nil {
							fmt.Fprintf(e.out, "%s/%s has no page with data: it keeps no views.\n", d.Type, d.Name)
							return
						}
						s := d.Page.Standing
						fmt.Fprintf(e.out, "%s/%s, views of version %d: %s\n", d.Type, d.Name, s.Version, s.State)
						fmt.Fprintf(e.out, "  folded %d events", s.Folded)
						if s.LastEvent != nil {
							fmt.Fprintf(e.out, ", the last %s at %s", s.LastEvent.ID, s.LastEvent.Time)
						}
						fmt.Fprintln(e.out)
						if s.Checkpoint != nil {
							fmt.Fprintf(e.out, "  checkpoint %s", *s.Checkpoint)
							if s.CheckpointAt != nil {
								fmt.Fprintf(e.out, " (recorded %s)", s.CheckpointAt.Format(time.RFC3339))
							}
							fmt.Fprintf(e.out, ", %s behind the newest record\n", inWords(time.Duration(s.LagMs)*time.Millisecond))
						}
						if r := d.Page.Receipt; r != nil {
							fmt.Fprintf(e.out, "  receipt: records %d to %d (chain %s), views %s\n", r.History.From, r.History.Through, r.History.Chain, r.Views)
							fmt.Fprintf(e.out, "  check it, here or on any clone: quire page verify --playbook %s --type %s --name %s\n", d.Playbook, d.Type, d.Name)
						}
						if st := s.Stalled; st != nil {
							fmt.Fprintf(e.out, "  stalled at event %s (%s at %s), %s: %s\n", st.Event.ID, st.Event.Type, st.Event.Time, st.Kind, st.Error)
							if st.Line > 0 {
								fmt.Fprintf(e.out, "  at line %d of the definition's document\n", st.Line)
							}
						}
					}, func(res any) error {
						// Views that stopped are not a page's standing a script
						// may go on from.
						d := res.(*ledger.Definition)
						if d.Page != nil && d.Page.Standing != nil && d.Page.Standing.Stalled != nil {
							return refusal.New(refusal.Conflict, "the views of %s/%s are stalled: mend the page's module and save the definition again, and they are folded anew", d.Type, d.Name)
						}
						return nil
					})
				}),
			},
			{
				Name: "render", Usage: "render a page: runs, and result over a sample output (--sample) or as of a run (--run)",
				Flags: append(defFlags(), &cli.StringFlag{Name: "sample", Usage: jsonUsage("a sample output to render the result over")},
					&cli.StringFlag{Name: "run", Usage: "render as of this run (its id)"}, &cli.BoolFlag{Name: "text", Usage: "print chart blocks as tables"}, jsonFlag),
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					sample, err := e.jsonValue(c, "sample")
					if err != nil {
						return err
					}
					format := ""
					if c.Bool("text") {
						format = "text"
					}
					return callAndShow(e, c, l, "render_page", map[string]any{
						"playbook": c.String("playbook"), "type": c.String("type"), "name": c.String("name"),
						"sample_output": sample, "run_id": c.String("run"), "format": format,
					}, func(res any) {
						d := res.(*ledger.Definition)
						p := d.Page
						if p == nil {
							return
						}
						if p.Result != "" {
							fmt.Fprintf(e.out, "# result\n\n%s\n\n", p.Result)
						} else if !c.IsSet("sample") && c.String("run") == "" && !hasRun(c, l, d) {
							// Said on standard error: the Markdown on standard
							// output stays the page's alone.
							fmt.Fprintf(e.err, "%s/%s has no run yet, so its result has nothing to render: --sample '<output JSON>' renders it over a sample output.\n", d.Type, d.Name)
						}
						if p.Runs != "" {
							fmt.Fprintf(e.out, "# runs\n\n%s\n", p.Runs)
						}
					})
				}),
			},
			{
				Name: "receipt", Usage: "print a page's receipt as JSON, to check on any clone with quire page verify --receipt",
				Flags: []cli.Flag{playbookFlag(),
					&cli.StringFlag{Name: "type", Value: "workflow", Usage: "the definition's type, or playbook for the playbook's own page"},
					&cli.StringFlag{Name: "name", Usage: "the definition's name"}},
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					op, args := "get_definition", map[string]any{"playbook": c.String("playbook"), "type": c.String("type"), "name": c.String("name")}
					if c.String("type") == "playbook" {
						op, args = "render_playbook_page", map[string]any{"playbook": c.String("playbook")}
					}
					raw, _ := json.Marshal(args)
					res, err := l.Call(c.Context, op, raw)
					if err != nil {
						return err
					}
					var p *ledger.PageView
					switch res := res.(type) {
					case *ledger.Definition:
						p = res.Page
					case *ledger.RenderedPlaybook:
						p = res.Page
					}
					if p == nil || p.Receipt == nil {
						return refusal.New(refusal.Conflict, "the page keeps no views now, so it has no receipt (quire page status says why)")
					}
					return e.printJSON(p.Receipt)
				}),
			},
			verifyCommand(e),
		},
	}
}

// quire page verify: verify_page, exiting 1 when the views are not
// verified (they differ, or lie out of reach).
func verifyCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "verify",
		Usage: "fold a page's views again from nothing and check them against its receipt (--receipt, or the page's own here)",
		Flags: []cli.Flag{playbookFlag(),
			&cli.StringFlag{Name: "type", Value: "workflow", Usage: "the definition's type, or playbook for the playbook's own page"},
			&cli.StringFlag{Name: "name", Usage: "the definition's name"},
			&cli.StringFlag{Name: "receipt", Usage: jsonUsage("the receipt to check, as page.receipt gave it")}, jsonFlag},
		Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
			receipt, err := e.jsonValue(c, "receipt")
			if err != nil {
				return err
			}
			subject := c.String("type")
			if subject != "playbook" {
				subject += "/" + c.String("name")
			}
			return callShowThen(e, c, l, "verify_page", map[string]any{
				"playbook": c.String("playbook"), "subject": subject, "receipt": receipt,
			}, func(res any) {
				fmt.Fprintln(e.out, res.(*ledger.Verification).Message)
			}, func(res any) error {
				if res.(*ledger.Verification).Verdict != ledger.Verified {
					return cli.Exit("", 1)
				}
				return nil
			})
		}),
	}
}

// inWords says a span of time as a person would, to its largest unit:
// "12 seconds", "3 minutes", "5 hours", "29 days".
func inWords(d time.Duration) string {
	switch {
	case d < time.Minute:
		return plural(int(d/time.Second), "second")
	case d < time.Hour:
		return plural(int(d/time.Minute), "minute")
	case d < 24*time.Hour:
		return plural(int(d/time.Hour), "hour")
	}
	return plural(int(d/(24*time.Hour)), "day")
}

// hasRun says whether the definition has a run yet.
func hasRun(c *cli.Context, l *ledger.Ledger, d *ledger.Definition) bool {
	raw, _ := json.Marshal(map[string]any{"playbook": d.Playbook, "type": d.Type, "name": d.Name, "limit": 1})
	res, err := l.Call(c.Context, "list_runs", raw)
	page, ok := res.(*ledger.RunPage)
	return err != nil || !ok || len(page.Runs) > 0
}
