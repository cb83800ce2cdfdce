package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"quire/fold"
	"quire/ledger"
	"quire/words/refusal"
)

// quire page status|render|try|diff|receipt|verify: a definition's page,
// its standing, its renders, a dry run of a change to it, what changed in
// it between commits, its receipt and the check of it.
func pageCommand(e *env) *cli.Command {
	defFlags := func() []cli.Flag {
		return []cli.Flag{playbookFlag(), typeFlag(),
			&cli.StringFlag{Name: "name", Required: true, Usage: "the definition's name"}}
	}
	return &cli.Command{
		Name: "page", Usage: "read a definition's page: its standing, its renders, a dry run of a change",
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
					&cli.StringFlag{Name: "run", Usage: "render as of this run (its id)"},
					&cli.StringFlag{Name: "at", Usage: "render as of this commit (its id, whole or abbreviated, or a ref): its files, history and time"},
					&cli.BoolFlag{Name: "text", Usage: "print chart blocks as tables"}, jsonFlag),
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
						"sample_output": sample, "run_id": c.String("run"), "at": c.String("at"), "format": format,
					}, func(res any) {
						d := res.(*ledger.Definition)
						p := d.Page
						if p == nil {
							return
						}
						if p.Result != "" {
							fmt.Fprintf(e.out, "# result\n\n%s\n\n", p.Result)
						} else if !c.IsSet("sample") && c.String("run") == "" && c.String("at") == "" && !hasRun(c, l, d) {
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
				Name: "try", ArgsUsage: "FILE (- reads standard input)",
				Usage: "a dry run of a changed page: the definition's new document (FILE, as definition save takes it) checked, folded over the whole history " +
					"and rendered, with each view's changes from today's; saves nothing",
				Flags: []cli.Flag{playbookFlag(),
					&cli.StringFlag{Name: "definition", Usage: "the definition, [TYPE/]NAME, when the file does not say it (as definition save reads it)"}, jsonFlag},
				Before: wantArgs(1, 1, "FILE, the definition's new document"),
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					file := c.Args().First()
					at := "@" + file
					if file == "-" {
						at = "-"
					}
					source, _, err := e.readAt("FILE", at, true)
					if err != nil {
						return err
					}
					typ, name, _ := strings.Cut(c.String("definition"), "/")
					if name == "" {
						typ, name = "", typ
					}
					if typ, name, err = definitionOfFile(file, source, typ, name); err != nil {
						return err
					}
					return callAndShow(e, c, l, "try_page", map[string]any{
						"playbook": c.String("playbook"), "type": typ, "name": name, "source": source,
					}, func(res any) { e.showTried(typ+"/"+name, res.(*ledger.TriedPage)) })
				}),
			},
			{
				Name: "diff", Usage: "what changed in a page between two commits, or a commit and the vault as it stands",
				ArgsUsage: "OLD [NEW]", Flags: append(defFlags(), jsonFlag),
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					if c.NArg() < 1 || c.NArg() > 2 {
						return refusal.Invalid("OLD", "quire page diff takes one commit (OLD, diffed against the vault as it stands) or two (OLD NEW)")
					}
					return callAndShow(e, c, l, "diff_page", map[string]any{
						"playbook": c.String("playbook"), "type": c.String("type"), "name": c.String("name"),
						"old": c.Args().Get(0), "new": c.Args().Get(1),
					}, func(res any) { printPageDiff(e, res.(*ledger.PageDiff)) })
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

// showTried prints a page's dry run: the tried result and runs as
// Markdown, then each view's changes from today's, one pointer a line.
// What is not the page's (that nothing was saved, a fold that stopped) is
// said on standard error.
func (e *env) showTried(def string, t *ledger.TriedPage) {
	if t.Page.Result != "" {
		fmt.Fprintf(e.out, "# result\n\n%s\n\n", t.Page.Result)
	}
	if t.Page.Runs != "" {
		fmt.Fprintf(e.out, "# runs\n\n%s\n\n", t.Page.Runs)
	}
	switch st := t.Page.Standing; {
	case st != nil && st.State == fold.StateOutOfReach:
		fmt.Fprintf(e.err, "The history is past the dry run's reach (10 pages of 1,000 records): its views were not folded.\n")
	case st != nil && st.Stalled != nil:
		fmt.Fprintf(e.err, "The tried module stopped at event %s (%s): %s\n", st.Stalled.Event.ID, st.Stalled.Kind, st.Stalled.Error)
	}
	if t.Changes != nil {
		fmt.Fprintf(e.out, "# views, changed from today's\n\n")
		if t.Today != "" && t.Today != fold.StateLive {
			fmt.Fprintf(e.out, "(today's views are %s: the changes are from what they hold so far)\n\n", t.Today)
		}
		for _, v := range t.Changes {
			if len(v.Changes) == 0 {
				fmt.Fprintf(e.out, "%s: unchanged\n", v.View)
				continue
			}
			fmt.Fprintf(e.out, "%s:\n", v.View)
			for _, ch := range v.Changes {
				fmt.Fprintf(e.out, "  %s  %s -> %s\n", pointerOrWhole(ch.Pointer), sideOf(ch.Old), sideOf(ch.New))
			}
		}
	}
	fmt.Fprintf(e.err, "Nothing was saved: quire definition save saves it as %s version %d.\n", def, t.Version)
}

// pointerOrWhole names a change's place in its view: its JSON pointer,
// or the whole view for the empty one.
func pointerOrWhole(p string) string {
	if p == "" {
		return "(the view)"
	}
	return p
}

// sideOf is one side of a change: its JSON, or (none) where that side
// has no such member or item.
func sideOf(raw json.RawMessage) string {
	if raw == nil {
		return "(none)"
	}
	return string(raw)
}

// printPageDiff prints a page's diff as a reviewer reads one: the lines of
// its Markdown taken away and put in, then each view's values that changed.
func printPageDiff(e *env, d *ledger.PageDiff) {
	to := "the vault as it stands"
	if d.New != "" {
		to = d.New
	}
	fmt.Fprintf(e.out, "--- %s\n+++ %s\n", d.Old, to)
	changed := false
	for _, ln := range d.Markdown {
		if ln.Op != " " {
			changed = true
		}
	}
	if changed {
		for _, ln := range d.Markdown {
			fmt.Fprintf(e.out, "%s%s\n", ln.Op, ln.Text)
		}
	} else {
		fmt.Fprintln(e.out, "The Markdown is the same.")
	}
	if len(d.Views) == 0 {
		fmt.Fprintln(e.out, "No view changed.")
	}
	for _, v := range d.Views {
		fmt.Fprintf(e.out, "view %s:\n", v.View)
		for _, ch := range v.Changes {
			ptr := ch.Pointer
			if ptr == "" {
				ptr = "(the whole view)"
			}
			switch {
			case ch.Old == nil:
				fmt.Fprintf(e.out, "  %s: added %s\n", ptr, ch.New)
			case ch.New == nil:
				fmt.Fprintf(e.out, "  %s: removed (was %s)\n", ptr, ch.Old)
			default:
				fmt.Fprintf(e.out, "  %s: %s → %s\n", ptr, ch.Old, ch.New)
			}
		}
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
