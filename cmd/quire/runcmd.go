package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"quire/words/refusal"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"quire/ledger"
	"quire/words/address"
	"quire/words/event"
)

// callAndShow runs an operation and prints its answer as JSON (with
// --json) or through show.
func callAndShow(e *env, c *cli.Context, l *ledger.Ledger, op string, args map[string]any, show func(any)) error {
	return callShowThen(e, c, l, op, args, show, nil)
}

// callShowThen is callAndShow that, once the answer is shown, judges it
// with then: a write that was recorded but did not do what was asked
// (a run ended succeeded whose output was rejected) exits non-zero with
// its reason on stderr, though what it recorded stays.
func callShowThen(e *env, c *cli.Context, l *ledger.Ledger, op string, args map[string]any, show func(any), then func(any) error) error {
	for k, v := range args {
		if s, ok := v.(string); ok && s == "" {
			delete(args, k)
		}
	}
	if id := c.String("request-id"); id != "" {
		args["request_id"] = id
	}
	raw, err := json.Marshal(args)
	if err != nil {
		// The JSON flags are checked as they are read (jsonValue); this
		// is a fault of the command, never to be sent on as no arguments.
		return fmt.Errorf("quire: the arguments of %s do not encode: %w", op, err)
	}
	res, err := l.Call(c.Context, op, raw)
	if err != nil {
		return err
	}
	if c.Bool("json") || show == nil {
		if err := e.printJSON(res); err != nil {
			return err
		}
	} else {
		show(res)
	}
	if then == nil {
		return nil
	}
	e.printed = true // the answer is out: a refusal after it is on stderr alone
	return then(res)
}

var jsonFlag = &cli.BoolFlag{Name: "json", Usage: "print the answer, or the refusal object, as JSON on standard output"}

// requestIDFlag makes a write safe to retry: a repeat of the same id
// answers the first answer and writes nothing.
var requestIDFlag = &cli.StringFlag{Name: "request-id", Usage: "an id of this call, so that a retry answers the first answer and writes nothing"}

// The flags many commands share.
func playbookFlag() cli.Flag {
	return &cli.StringFlag{Name: "playbook", Aliases: []string{"p"}, Required: true, Usage: "the playbook's id", EnvVars: []string{"QUIRE_PLAYBOOK"}}
}

func typeFlag() cli.Flag {
	return &cli.StringFlag{Name: "type", Value: "workflow", Usage: "the definition's type: " + strings.Join(address.Types(), ", ")}
}

func timeFlag(what string) cli.Flag {
	return &cli.StringFlag{Name: "time", Usage: "RFC 3339 time of " + what + ", for a backfill; now when left out"}
}

func runCommand(e *env) *cli.Command {
	runFlags := func() []cli.Flag {
		return []cli.Flag{
			playbookFlag(),
			&cli.StringFlag{Name: "run", Required: true, Usage: "the run's id"},
			&cli.StringFlag{Name: "actor", EnvVars: []string{"QUIRE_ACTOR"}, Required: true, Usage: "who acts: anyone records a step, but only the run's executor or its authorizer may pause, resume, end or archive it (rule 4)"},
			jsonFlag, requestIDFlag,
		}
	}
	showRun := func(res any) {
		r := res.(*ledger.Run)
		fmt.Fprintf(e.out, "%s  %s/%s v%d  %s (%s)  %s\n", r.RunID, r.Type, r.Name, r.Version, r.State, r.Status, r.Path)
	}
	return &cli.Command{
		Name:  "run",
		Usage: "start, advance and end runs",
		Subcommands: []*cli.Command{
			{
				Name: "start", Usage: "start a run of a definition",
				Flags: []cli.Flag{
					playbookFlag(), typeFlag(),
					&cli.StringFlag{Name: "name", Required: true, Usage: "the definition's name"},
					&cli.StringSliceFlag{Name: "member-of", Required: true, Usage: "a project's name or uid (repeat for several; quire project list shows them)"},
					&cli.StringFlag{Name: "executor", Required: true, Usage: "who runs it (an agent's id): with --authorized-by, the only one who may pause, resume, end or archive it (rule 4)"},
					&cli.StringFlag{Name: "authorized-by", Required: true, Usage: "who authorized the run"},
					&cli.StringFlag{Name: "actor", EnvVars: []string{"QUIRE_ACTOR"}, Usage: "who starts it (the run created commit's author); --authorized-by when left out"},
					&cli.StringFlag{Name: "input", Usage: jsonUsage("the run's input")},
					&cli.StringFlag{Name: "context", Usage: textUsage("context.md's text")},
					timeFlag("the start"),
					jsonFlag, requestIDFlag,
				},
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					input, err := e.jsonValue(c, "input")
					if err != nil {
						return err
					}
					ctxText, err := e.text(c, "context")
					if err != nil {
						return err
					}
					return callAndShow(e, c, l, "run_definition", map[string]any{
						"playbook": c.String("playbook"), "type": c.String("type"), "name": c.String("name"),
						"member_of": c.StringSlice("member-of"), "executor": c.String("executor"),
						"authorized_by": c.String("authorized-by"), "input": input,
						"context": ctxText, "time": c.String("time"), "actor": c.String("actor"),
					}, showRun)
				}),
			},
			{
				Name: "event", Usage: "record an event on a run", ArgsUsage: "EVENT",
				Description: "EVENT is one of the capsule's types: " + strings.Join(event.Recordable(), ", ") +
					". A run's end goes through quire run end, an archive through quire run transition archived.",
				Flags: append([]cli.Flag{
					&cli.StringFlag{Name: "step", Usage: "the step's path, such as do/1/review"},
					&cli.StringFlag{Name: "detail", Usage: textUsage("what happened, in a sentence")},
					&cli.StringFlag{Name: "data", Usage: jsonUsage("the event's data, a JSON object,")},
					timeFlag("the event"),
				}, runFlags()...),
				Before: wantArgs(1, 1, "EVENT (such as step_started or step_completed)"),
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					data, err := e.jsonValue(c, "data")
					if err != nil {
						return err
					}
					detail, err := e.text(c, "detail")
					if err != nil {
						return err
					}
					return callAndShow(e, c, l, "record_event", map[string]any{
						"playbook": c.String("playbook"), "run_id": c.String("run"), "event": c.Args().First(),
						"step": c.String("step"), "detail": detail, "data": data,
						"actor": c.String("actor"), "time": c.String("time"),
					}, func(res any) {
						ev := res.(*ledger.RecordedEvent)
						fmt.Fprintf(e.out, "seq %d  %s  %s\n", ev.Seq, ev.Type, ev.ID)
						for _, w := range ev.Warnings {
							fmt.Fprintf(e.err, "quire: warning: %s\n", w.Message)
						}
					})
				}),
			},
			{
				Name: "end", Usage: "end a run: succeeded, rejected or failed", ArgsUsage: "succeeded|rejected|failed",
				Flags: append([]cli.Flag{
					&cli.StringFlag{Name: "output", Usage: jsonUsage("the run's output")},
					&cli.StringFlag{Name: "reason", Usage: textUsage("why it was rejected (a rejected run's reason; a failed one says it in --detail)")},
					&cli.StringFlag{Name: "kind", Usage: "what kind of rejection (a rejected run's kind)"},
					&cli.StringFlag{Name: "detail", Usage: textUsage("what happened, in a sentence")},
					timeFlag("the end"),
				}, runFlags()...),
				Before: wantArgs(1, 1, "STATUS: succeeded, rejected or failed"),
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					output, err := e.jsonValue(c, "output")
					if err != nil {
						return err
					}
					reason, err := e.text(c, "reason")
					if err != nil {
						return err
					}
					detail, err := e.text(c, "detail")
					if err != nil {
						return err
					}
					asked := c.Args().First()
					return callShowThen(e, c, l, "end_run", map[string]any{
						"playbook": c.String("playbook"), "run_id": c.String("run"), "status": asked,
						"output": output, "reason": reason, "kind": c.String("kind"),
						"detail": detail, "actor": c.String("actor"), "time": c.String("time"),
					}, showRun, func(res any) error {
						r := res.(*ledger.Run)
						if asked != "succeeded" || r.Status != "rejected" {
							return nil
						}
						return refusal.Invalid("/output", "the run ended rejected, not succeeded: %s", rejectedWhy(r))
					})
				}),
			},
			{
				Name: "thread", Usage: "append to the run's thread.md", ArgsUsage: "TEXT (- or @- reads it from standard input, @FILE from a file)",
				Flags:  append([]cli.Flag{timeFlag("the note")}, runFlags()...),
				Before: wantArgs(1, -1, "TEXT"),
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					text, err := e.textArgs(c)
					if err != nil {
						return err
					}
					return callAndShow(e, c, l, "append_thread", map[string]any{
						"playbook": c.String("playbook"), "run_id": c.String("run"), "text": text, "actor": c.String("actor"),
						"time": c.String("time"),
					}, showRun)
				}),
			},
			{
				Name: "artifact", Usage: "put a file into the run's artifacts/", ArgsUsage: "NAME FILE (- reads standard input)", Flags: runFlags(),
				Before: wantArgs(2, 2, "NAME FILE"),
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					file := c.Args().Get(1)
					if file != "-" {
						// Refused before it is read: a file of 200 MiB was
						// read whole, and taken.
						if fi, err := os.Stat(file); err == nil && fi.Size() > ledger.MaxArtifact {
							return ledger.ArtifactTooLarge("FILE", file, fi.Size())
						}
						file = "@" + file
					}
					content, _, err := e.readAt("FILE", file, true)
					if err != nil {
						return err
					}
					return callAndShow(e, c, l, "put_artifact", map[string]any{
						"playbook": c.String("playbook"), "run_id": c.String("run"), "name": c.Args().First(),
						"content": content, "actor": c.String("actor"),
					}, func(res any) {
						fmt.Fprintf(e.out, "Put %s into the run's artifacts/.\n", c.Args().First())
					})
				}),
			},
			{
				Name: "transition", Usage: "pause, resume or archive a run", ArgsUsage: "paused|active|archived",
				Flags:  append([]cli.Flag{&cli.StringFlag{Name: "reason", Usage: textUsage("why")}, timeFlag("the transition")}, runFlags()...),
				Before: wantArgs(1, 1, "the state to go to: paused, active or archived"),
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					reason, err := e.text(c, "reason")
					if err != nil {
						return err
					}
					return callAndShow(e, c, l, "transition_run", map[string]any{
						"playbook": c.String("playbook"), "run_id": c.String("run"), "to": c.Args().First(),
						"reason": reason, "actor": c.String("actor"), "time": c.String("time"),
					}, showRun)
				}),
			},
			{
				Name: "show", Usage: "show a run: its definition, state, steps and output",
				Flags: []cli.Flag{playbookFlag(), &cli.StringFlag{Name: "run", Required: true, Usage: "the run's id"}, jsonFlag},
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					return callAndShow(e, c, l, "get_run", map[string]any{"playbook": c.String("playbook"), "run_id": c.String("run")}, func(res any) {
						r := res.(*ledger.Run)
						tw := tabwriter.NewWriter(e.out, 2, 4, 2, ' ', 0)
						row := func(k, v string) {
							if v != "" {
								fmt.Fprintf(tw, "%s\t%s\n", k, v)
							}
						}
						row("run", r.RunID)
						row("definition", fmt.Sprintf("%s/%s version %d", r.Type, r.Name, r.Version))
						row("state", fmt.Sprintf("%s (%s)", r.State, r.Status))
						row("executor", r.Executor)
						row("authorized by", r.AuthorizedBy)
						row("started", r.Started)
						row("ended", r.Ended)
						if r.CurrentStep != nil {
							row("step", *r.CurrentStep)
						}
						row("events", fmt.Sprint(r.Events))
						row("input", compactJSON(r.Input))
						if p := r.Pause(); p != nil {
							row("paused for", p.Reason)
							row("pause kind", p.Kind)
							row("pause stage", p.Stage)
							row("pause summary", p.Summary)
						} else {
							row("paused for", compactJSON(r.Paused))
						}
						row("reason", r.Reason)
						row("kind", r.Kind)
						row("detail", r.Detail)
						row("output", compactJSON(r.Output))
						for _, is := range r.Issues {
							row("issue", is.Path+": "+is.Message)
						}
						row("folder", r.Path)
						row("address", r.Address)
						tw.Flush()
					})
				}),
			},
		},
	}
}

func runsCommand(e *env) *cli.Command {
	return &cli.Command{
		Name: "runs", Usage: "list a playbook's runs, newest first, a page at a time",
		Flags: []cli.Flag{
			playbookFlag(),
			&cli.StringFlag{Name: "type", Usage: "only runs of definitions of this type: " + strings.Join(address.Types(), ", ")},
			&cli.StringFlag{Name: "name", Usage: "only runs of the definition of this name"},
			&cli.StringFlag{Name: "status", Usage: "only runs of this status: started, succeeded, failed or rejected"},
			&cli.StringFlag{Name: "state", Usage: "only runs in this state: active, paused, complete, failed or archived"},
			&cli.StringFlag{Name: "executor", Usage: "only runs this executor records"},
			&cli.StringFlag{Name: "since", Usage: "only runs started at or after this date (YYYY-MM-DD, UTC) or RFC 3339 time"},
			&cli.StringFlag{Name: "until", Usage: "only runs started at or before this date (to its end, UTC) or RFC 3339 time"},
			&cli.StringFlag{Name: "search", Usage: "only runs whose headline holds these words, in any case"},
			&cli.IntFlag{Name: "limit", Usage: "at most this many runs a page, 1 to 1000", DefaultText: "50"},
			&cli.StringFlag{Name: "cursor", Usage: "the page after the one that printed this cursor"},
			&cli.BoolFlag{Name: "all", Usage: "every page, not only the first"},
			jsonFlag,
		},
		Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
			args := map[string]any{"playbook": c.String("playbook"), "type": c.String("type"), "name": c.String("name"),
				"status": c.String("status"), "state": c.String("state"), "cursor": c.String("cursor"),
				"executor": c.String("executor"), "since": c.String("since"), "until": c.String("until"), "search": c.String("search")}
			if c.IsSet("limit") {
				args["limit"] = c.Int("limit")
			}
			var page ledger.RunPage
			page.Runs = []*ledger.Run{}
			for {
				raw, _ := json.Marshal(args)
				res, err := l.Call(c.Context, "list_runs", raw)
				if err != nil {
					return err
				}
				p := res.(*ledger.RunPage)
				page.Runs = append(page.Runs, p.Runs...)
				page.Next, page.Remaining = p.Next, p.Remaining
				if !c.Bool("all") || p.Next == "" {
					break
				}
				args["cursor"] = p.Next
			}
			if c.Bool("json") {
				return e.printJSON(&page)
			}
			tw := tabwriter.NewWriter(e.out, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "RUN\tDEFINITION\tVERSION\tSTATE\tSTATUS\tSTARTED\tENDED")
			for _, r := range page.Runs {
				fmt.Fprintf(tw, "%s\t%s/%s\t%d\t%s\t%s\t%s\t%s\n", r.RunID, r.Type, r.Name, r.Version, r.State, r.Status, r.Started, r.Ended)
			}
			tw.Flush()
			if page.Next != "" {
				more := fmt.Sprintf("%d more", page.Remaining)
				if c.String("status") != "" || c.String("state") != "" || c.String("executor") != "" || c.String("search") != "" {
					more = fmt.Sprintf("up to %d more (before the status, state, executor and search filters)", page.Remaining)
				}
				fmt.Fprintf(e.out, "%s: quire runs --cursor %s (or --all)\n", more, page.Next)
			}
			return nil
		}),
	}
}

// rejectedWhy says why a run ended rejected: its reason and the issues
// its output was found with, each at its pointer.
func rejectedWhy(r *ledger.Run) string {
	why := r.Reason
	if r.Kind != "" {
		why += " (" + r.Kind + ")"
	}
	for _, is := range r.Issues {
		why += fmt.Sprintf("; %s: %s", is.Path, is.Message)
	}
	return why
}

// compactJSON is a JSON value on one line, as run show prints it; "" for
// none.
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
