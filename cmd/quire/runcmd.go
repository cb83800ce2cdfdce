package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"quire/ledger"
)

// callAndShow runs an operation and prints its answer as JSON (with
// --json) or through show.
func callAndShow(e *env, c *cli.Context, l *ledger.Ledger, op string, args map[string]any, show func(any)) error {
	for k, v := range args {
		if s, ok := v.(string); ok && s == "" {
			delete(args, k)
		}
	}
	if id := c.String("request-id"); id != "" {
		args["request_id"] = id
	}
	raw, _ := json.Marshal(args)
	res, err := l.Call(c.Context, op, raw)
	if err != nil {
		return err
	}
	if c.Bool("json") || show == nil {
		return e.printJSON(res)
	}
	show(res)
	return nil
}

var jsonFlag = &cli.BoolFlag{Name: "json", Usage: "print the answer as JSON"}

// requestIDFlag makes a write safe to retry: a repeat of the same id
// answers the first answer and writes nothing.
var requestIDFlag = &cli.StringFlag{Name: "request-id", Usage: "an id of this call, so that a retry answers the first answer and writes nothing"}

func rawJSON(s string) any {
	if s == "" {
		return ""
	}
	return json.RawMessage(s)
}

func runCommand(e *env) *cli.Command {
	runFlags := []cli.Flag{
		&cli.StringFlag{Name: "playbook", Required: true},
		&cli.StringFlag{Name: "run", Required: true, Usage: "the run's id"},
		&cli.StringFlag{Name: "actor", EnvVars: []string{"QUIRE_ACTOR"}, Required: true},
		jsonFlag, requestIDFlag,
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
					&cli.StringFlag{Name: "playbook", Required: true},
					&cli.StringFlag{Name: "type", Value: "workflow"},
					&cli.StringFlag{Name: "name", Required: true},
					&cli.StringSliceFlag{Name: "member-of", Required: true, Usage: "a project's uid (repeat for several)"},
					&cli.StringFlag{Name: "executor", Required: true},
					&cli.StringFlag{Name: "authorized-by", Required: true},
					&cli.StringFlag{Name: "input", Usage: "the input as JSON"},
					&cli.StringFlag{Name: "context", Usage: "context.md's text"},
					&cli.StringFlag{Name: "time", Usage: "RFC 3339 start time, for a backfill"},
					jsonFlag, requestIDFlag,
				},
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					return callAndShow(e, c, l, "run_definition", map[string]any{
						"playbook": c.String("playbook"), "type": c.String("type"), "name": c.String("name"),
						"member_of": c.StringSlice("member-of"), "executor": c.String("executor"),
						"authorized_by": c.String("authorized-by"), "input": rawJSON(c.String("input")),
						"context": c.String("context"), "time": c.String("time"),
					}, showRun)
				}),
			},
			{
				Name: "event", Usage: "record an event", ArgsUsage: "EVENT",
				Flags: append([]cli.Flag{
					&cli.StringFlag{Name: "step"}, &cli.StringFlag{Name: "detail"},
					&cli.StringFlag{Name: "data", Usage: "a JSON object"}, &cli.StringFlag{Name: "time"},
				}, runFlags...),
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					return callAndShow(e, c, l, "record_event", map[string]any{
						"playbook": c.String("playbook"), "run_id": c.String("run"), "event": c.Args().First(),
						"step": c.String("step"), "detail": c.String("detail"), "data": rawJSON(c.String("data")),
						"actor": c.String("actor"), "time": c.String("time"),
					}, func(res any) {
						ev := res.(*ledger.Event)
						fmt.Fprintf(e.out, "seq %d  %s  %s\n", ev.Seq, ev.Type, ev.ID)
					})
				}),
			},
			{
				Name: "end", Usage: "end a run: succeeded, rejected or failed", ArgsUsage: "STATUS",
				Flags: append([]cli.Flag{
					&cli.StringFlag{Name: "output", Usage: "the output as JSON; @FILE reads a file"},
					&cli.StringFlag{Name: "reason"}, &cli.StringFlag{Name: "kind"}, &cli.StringFlag{Name: "detail"},
					&cli.StringFlag{Name: "time"},
				}, runFlags...),
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					output := c.String("output")
					if name, ok := strings.CutPrefix(output, "@"); ok {
						data, err := os.ReadFile(name)
						if err != nil {
							return err
						}
						output = string(data)
					}
					return callAndShow(e, c, l, "end_run", map[string]any{
						"playbook": c.String("playbook"), "run_id": c.String("run"), "status": c.Args().First(),
						"output": rawJSON(output), "reason": c.String("reason"), "kind": c.String("kind"),
						"detail": c.String("detail"), "actor": c.String("actor"), "time": c.String("time"),
					}, showRun)
				}),
			},
			{
				Name: "thread", Usage: "append to thread.md", ArgsUsage: "TEXT", Flags: runFlags,
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					return callAndShow(e, c, l, "append_thread", map[string]any{
						"playbook": c.String("playbook"), "run_id": c.String("run"), "text": c.Args().First(), "actor": c.String("actor"),
					}, showRun)
				}),
			},
			{
				Name: "artifact", Usage: "put a file into artifacts/", ArgsUsage: "NAME FILE", Flags: runFlags,
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					data, err := os.ReadFile(c.Args().Get(1))
					if err != nil {
						return err
					}
					return callAndShow(e, c, l, "put_artifact", map[string]any{
						"playbook": c.String("playbook"), "run_id": c.String("run"), "name": c.Args().First(),
						"content": string(data), "actor": c.String("actor"),
					}, nil)
				}),
			},
			{
				Name: "transition", Usage: "pause, resume or archive a run", ArgsUsage: "paused|active|archived",
				Flags: append([]cli.Flag{&cli.StringFlag{Name: "reason"}, &cli.StringFlag{Name: "time"}}, runFlags...),
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					return callAndShow(e, c, l, "transition_run", map[string]any{
						"playbook": c.String("playbook"), "run_id": c.String("run"), "to": c.Args().First(),
						"reason": c.String("reason"), "actor": c.String("actor"), "time": c.String("time"),
					}, showRun)
				}),
			},
			{
				Name: "show", Usage: "show a run", Flags: []cli.Flag{&cli.StringFlag{Name: "playbook", Required: true}, &cli.StringFlag{Name: "run", Required: true}, jsonFlag},
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					return callAndShow(e, c, l, "get_run", map[string]any{"playbook": c.String("playbook"), "run_id": c.String("run")}, nil)
				}),
			},
		},
	}
}

func runsCommand(e *env) *cli.Command {
	return &cli.Command{
		Name: "runs", Usage: "list a playbook's runs, newest first",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "playbook", Required: true}, &cli.StringFlag{Name: "type"}, &cli.StringFlag{Name: "name"},
			&cli.StringFlag{Name: "status"}, &cli.StringFlag{Name: "state"}, &cli.IntFlag{Name: "limit"}, jsonFlag,
		},
		Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
			args := map[string]any{"playbook": c.String("playbook"), "type": c.String("type"), "name": c.String("name"),
				"status": c.String("status"), "state": c.String("state")}
			if c.IsSet("limit") {
				args["limit"] = c.Int("limit")
			}
			return callAndShow(e, c, l, "list_runs", args, func(res any) {
				tw := tabwriter.NewWriter(e.out, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "RUN\tDEFINITION\tVERSION\tSTATE\tSTATUS\tSTARTED\tENDED")
				for _, r := range res.(*ledger.RunPage).Runs {
					fmt.Fprintf(tw, "%s\t%s/%s\t%d\t%s\t%s\t%s\t%s\n", r.RunID, r.Type, r.Name, r.Version, r.State, r.Status, r.Started, r.Ended)
				}
				tw.Flush()
			})
		}),
	}
}
