// Command quire is the CLI of the quire ledger runtime. Every command is a
// thin front over the ledger's table of operations; `quire call` runs any
// of them by name with JSON arguments.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"quire/fold"
	"quire/ledger"
	"quire/ledger/refusal"
	"quire/vault"
)

func main() {
	// QUIRE_CPUPROFILE=FILE writes a CPU profile of the command (go tool
	// pprof reads it): how the bench finds where a `quire call` spends.
	if p := os.Getenv("QUIRE_CPUPROFILE"); p != "" {
		if f, err := os.Create(p); err == nil && pprof.StartCPUProfile(f) == nil {
			code := run(os.Args, os.Stdin, os.Stdout, os.Stderr)
			pprof.StopCPUProfile()
			f.Close()
			os.Exit(code)
		}
	}
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}

// env is what commands see: their streams, so tests capture them.
type env struct {
	in       io.Reader
	out, err io.Writer
}

// run is main without the exit, for tests.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{in: stdin, out: stdout, err: stderr}
	app := newApp(e)
	if err := app.Run(flagsFirst(app, args)); err != nil {
		return e.fail(err)
	}
	return 0
}

// fail is the one place an error becomes output and an exit code: a
// refusal prints its message (and its issues) on stderr, and with --json
// the refusal object on stdout; anything else prints as it is.
func (e *env) fail(err error) int {
	var exit cli.ExitCoder
	if errors.As(err, &exit) && exit.ExitCode() == 0 {
		return 0
	}
	r := refusal.Of(err)
	fmt.Fprintln(e.err, "quire: "+r.Message)
	for _, is := range r.Issues {
		if is.Line > 0 {
			fmt.Fprintf(e.err, "  %s line %d: %s\n", is.Path, is.Line, is.Message)
		}
	}
	return 1
}

func (e *env) printJSON(v any) error {
	enc := json.NewEncoder(e.out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

var vaultFlag = &cli.StringFlag{Name: "vault", Usage: "the vault's folder", EnvVars: []string{"QUIRE_VAULT"}, Value: "."}

func openLedger(c *cli.Context) (*ledger.Ledger, error) {
	l, err := ledger.Open(c.String("vault"))
	if err != nil {
		return nil, err
	}
	l.OnCatchUp = catchUpProgress(c.App.ErrWriter, time.Now)
	return l, nil
}

// catchUpProgress prints on w (standard error: standard output keeps
// what the command answers, JSON alone with --json) how a read folds what
// is new for a page's views, once that has taken more than a second: the
// events read of the history's, and how many a second; then about once a
// second, and once more when it is done.
func catchUpProgress(w io.Writer, now func() time.Time) func(string, fold.Progress) {
	var last time.Time
	return func(playbook string, p fold.Progress) {
		if p.Elapsed < time.Second || (!p.Done && now().Sub(last) < time.Second) {
			return
		}
		last = now()
		rate := float64(p.Through-p.From) / p.Elapsed.Seconds()
		verb := "folding"
		if p.Done {
			verb = "folded"
		}
		fmt.Fprintf(w, "quire: %s the history of %s for the views of %s: %s of %s events, %s events/s\n",
			verb, playbook, p.ID, thousands(p.Through), thousands(p.Newest), thousands(int64(rate)))
	}
}

// thousands writes n with a comma between each three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// withLedger opens the vault for a command and closes it after.
func withLedger(fn func(c *cli.Context, l *ledger.Ledger) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		l, err := openLedger(c)
		if err != nil {
			return err
		}
		defer l.Close()
		return fn(c, l)
	}
}

func newApp(e *env) *cli.App {
	app := &cli.App{
		Name:            "quire",
		Usage:           "a file-native ledger runtime: run folders in a git vault",
		Writer:          e.out,
		ErrWriter:       e.err,
		Reader:          e.in,
		HideHelpCommand: true,
		ExitErrHandler:  func(*cli.Context, error) {},
		Flags:           []cli.Flag{vaultFlag},
		Commands: []*cli.Command{
			{
				Name: "init", Usage: "make a vault", ArgsUsage: "DIR",
				Flags: []cli.Flag{&cli.StringFlag{Name: "org", Value: "org", Usage: "the organization's id"}},
				Action: func(c *cli.Context) error {
					dir := c.Args().First()
					if dir == "" {
						return refusal.Invalid("DIR", "quire init needs the folder to make the vault in")
					}
					v, err := vault.Init(dir, c.String("org"), time.Now())
					if err != nil {
						return err
					}
					v.Close()
					fmt.Fprintf(e.out, "Made the vault of %s in %s\n", c.String("org"), v.Root())
					return nil
				},
			},
			callCommand(e),
			runCommand(e),
			runsCommand(e),
			{
				Name: "check", Usage: "validate the whole vault against the playbook-run capsule (with --history, its git history too)",
				Flags: []cli.Flag{&cli.BoolFlag{Name: "json"},
					&cli.BoolFlag{Name: "history", Usage: "also prove the append-only rules from the git history (the commits an earlier check did not prove)"}},
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					rep, err := l.CheckWith(ledger.CheckArgs{History: c.Bool("history")})
					if err != nil {
						return err
					}
					if c.Bool("json") {
						e.printJSON(rep)
					} else {
						for _, p := range rep.Problems {
							fmt.Fprintln(e.out, p.String())
						}
						if h := rep.History; h != nil {
							if h.Note != "" {
								fmt.Fprintln(e.out, "history: "+h.Note)
							}
							fmt.Fprintf(e.out, "history: proved %d new commits (%d in all) up to %s, reading %d objects\n", h.Commits, h.Proved, h.Head, h.Reads)
						}
						fmt.Fprintf(e.out, "%d runs, %d events, %d problems\n", rep.Runs, rep.Events, len(rep.Problems))
					}
					if len(rep.Problems) > 0 {
						return cli.Exit("", 1)
					}
					return nil
				}),
			},
			{
				Name: "reindex", Usage: "rebuild .quire/ from the files",
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					if err := l.Reindex(); err != nil {
						return err
					}
					fmt.Fprintln(e.out, "Rebuilt .quire/ from the files")
					return nil
				}),
			},
			{
				Name: "janitor", Usage: "repair what stopped writers left (git locks, .git/index, staging folders, temp files, a stale history), commit what earlier writes recorded but could not commit, and archive complete and failed runs idle for 90 days or more",
				Flags: []cli.Flag{&cli.StringFlag{Name: "now", Usage: "RFC 3339 time to judge idleness at"}},
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					rep, err := l.Call(c.Context, "repair_vault", json.RawMessage("{}"))
					if err != nil {
						return err
					}
					for _, r := range rep.(*ledger.RepairReport).Repaired {
						fmt.Fprintln(e.out, "repaired:", r)
					}
					for _, p := range rep.(*ledger.RepairReport).Left {
						fmt.Fprintln(e.out, "needs a person:", p.String())
					}
					args, _ := json.Marshal(map[string]any{"now": c.String("now")})
					res, err := l.Call(c.Context, "archive_idle_runs", args)
					if err != nil {
						return err
					}
					for _, p := range res.(*ledger.JanitorReport).Committed {
						fmt.Fprintln(e.out, "committed", p, "(left uncommitted by an earlier write)")
					}
					for _, a := range res.(*ledger.JanitorReport).Archived {
						fmt.Fprintln(e.out, "archived", a)
					}
					return nil
				}),
			},
		},
	}
	for _, more := range extraCommands {
		app.Commands = append(app.Commands, more(e))
	}
	return app
}

// extraCommands are the commands of later capabilities, each added by an
// init function in a file of its own.
var extraCommands []func(e *env) *cli.Command
