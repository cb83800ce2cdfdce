package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"quire/ledger"
)

// The commands of the vault as a whole: make one, and keep it sound.

// quire init DIR: a new vault.
func initCommand(e *env) *cli.Command {
	return &cli.Command{
		Name: "init", Usage: "make a vault: a git repository with quire.yaml and the index", ArgsUsage: "DIR",
		Flags: []cli.Flag{&cli.StringFlag{Name: "org", Value: "org", Usage: "the organization's id"}, jsonFlag},
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 1, 1, "DIR, the folder to make the vault in"); err != nil {
				return err
			}
			dir := c.Args().First()
			l, err := ledger.Init(dir, c.String("org"), time.Now())
			if err != nil {
				return err
			}
			l.Close()
			if c.Bool("json") {
				return e.printJSON(map[string]string{"org": c.String("org"), "vault": l.Root()})
			}
			fmt.Fprintf(e.out, "Made the vault of %s in %s\n", c.String("org"), l.Root())
			return nil
		},
	}
}

// quire check [--history] [--views]: the whole vault against the capsule,
// with --history its git history, with --views every page's views against
// their receipts; exit 1 when it finds a problem.
func checkCommand(e *env) *cli.Command {
	return &cli.Command{
		Name: "check", Usage: "validate the whole vault against the playbook-run capsule (with --history, its git history too; with --views, every page's views)",
		Flags: []cli.Flag{jsonFlag,
			&cli.BoolFlag{Name: "history", Usage: "also prove the append-only rules from the git history (the commits an earlier check did not prove)"},
			&cli.BoolFlag{Name: "views", Usage: "also fold every page's views again from nothing and verify them against their receipt"},
			&cli.BoolFlag{Name: "full", Usage: "read every run, not only those changed since the last check that passed"}},
		Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
			rep, err := l.CheckWith(ledger.CheckArgs{History: c.Bool("history"), Views: c.Bool("views"), Full: c.Bool("full")})
			if err != nil {
				return err
			}
			if c.Bool("json") {
				e.printJSON(rep)
			} else {
				for _, p := range rep.Problems {
					fmt.Fprintln(e.out, p.String())
				}
				for _, w := range rep.Warnings {
					fmt.Fprintln(e.out, "warning: "+w.String())
				}
				if h := rep.History; h != nil {
					if h.Note != "" {
						fmt.Fprintln(e.out, "history: "+h.Note)
					}
					fmt.Fprintf(e.out, "history: proved %s (%d in all) up to %s, reading %s\n", plural(h.Commits, "new commit"), h.Proved, h.Head, plural(h.Reads, "object"))
				}
				for _, v := range rep.Views {
					fmt.Fprintf(e.out, "views of %s %s: %s\n", v.Playbook, v.Subject, v.Verdict)
				}
				sum := fmt.Sprintf("%s, %s, %s", plural(rep.Runs, "run"), plural(rep.Events, "event"), plural(len(rep.Problems), "problem"))
				if len(rep.Warnings) > 0 {
					sum += ", " + plural(len(rep.Warnings), "warning")
				}
				fmt.Fprintln(e.out, sum)
			}
			if len(rep.Problems) > 0 {
				return cli.Exit("", 1)
			}
			return nil
		}),
	}
}

// quire reindex: .quire/, the derived state, made again from the files.
func reindexCommand(e *env) *cli.Command {
	return &cli.Command{
		Name: "reindex", Usage: "rebuild .quire/ from the files",
		Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
			if err := l.Reindex(); err != nil {
				return err
			}
			if c.Bool("json") {
				return e.printJSON(map[string]bool{"rebuilt": true})
			}
			fmt.Fprintln(e.out, "Rebuilt .quire/ from the files")
			return nil
		}),
	}
}

// quire janitor: repair_vault, then archive_idle_runs.
func janitorCommand(e *env) *cli.Command {
	return &cli.Command{
		Name: "janitor", Usage: "repair what stopped writers left (git locks, .git/index, staging folders, temp files, a stale history), commit what earlier writes recorded but could not commit, and archive complete and failed runs idle for 90 days or more",
		Flags: []cli.Flag{&cli.StringFlag{Name: "now", Usage: "RFC 3339 time to judge idleness at; now when left out"}, jsonFlag},
		Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
			rep, err := l.Call(c.Context, "repair_vault", json.RawMessage("{}"))
			if err != nil {
				return err
			}
			args, _ := json.Marshal(map[string]any{"now": c.String("now")})
			res, err := l.Call(c.Context, "archive_idle_runs", args)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return e.printJSON(map[string]any{"repair": rep, "janitor": res})
			}
			for _, r := range rep.(*ledger.RepairReport).Repaired {
				fmt.Fprintln(e.out, "repaired:", r)
			}
			for _, p := range rep.(*ledger.RepairReport).Left {
				fmt.Fprintln(e.out, "needs a person:", p.String())
			}
			for _, p := range res.(*ledger.JanitorReport).Committed {
				fmt.Fprintln(e.out, "committed", p, "(left uncommitted by an earlier write)")
			}
			for _, a := range res.(*ledger.JanitorReport).Archived {
				fmt.Fprintln(e.out, "archived", a)
			}
			return nil
		}),
	}
}

// plural writes n and the noun, in the plural unless n is 1: "1 run",
// "0 problems".
func plural[N int | int64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
