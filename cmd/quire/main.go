// Command quire is the CLI of the quire ledger runtime. Every command is a
// thin front over the ledger's table of operations; `quire call` runs any
// of them by name with JSON arguments.
//
// What every command shares, decided for people who know git, gh and
// kubectl (README, "How the CLI behaves"):
//   - without --json, tables and sentences on standard output; with
//     --json (every command has it), the answer as JSON and nothing else,
//     and on a refusal the refusal object;
//   - exit 0 done, 1 refused, 2 used wrongly (usage.go: an unknown command
//     or flag with the nearest one, a missing argument or required flag,
//     each one line and that command's usage on standard error);
//   - every JSON or text flag takes @FILE, @- and @@ (input.go), and
//     malformed JSON is refused at its flag with its line and column
//     before any call is made;
//   - progress of long work on standard error, only at a terminal
//     (progress.go).
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"sort"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"quire/ledger"
	"quire/vault"
	"quire/words/refusal"
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
	// json is whether --json was given: a refusal then prints its object
	// on standard output too. printed is set once the refusal object is
	// printed (quire call prints it itself).
	json, printed bool
}

// run is main without the exit, for tests.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{in: stdin, out: stdout, err: stderr, json: wantsJSON(args)}
	app := newApp(e)
	if err := app.Run(flagsFirst(app, args)); err != nil {
		return e.fail(err)
	}
	return 0
}

// wantsJSON says whether the command line asks for --json (before a "--").
func wantsJSON(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--json" || a == "-json" || a == "--json=true" {
			return true
		}
	}
	return false
}

// The exit codes: 0 done, 1 refused (or a problem found, for check), 2 the
// command used wrongly (an unknown command or flag, a missing argument).
const (
	exitRefused = 1
	exitUsage   = 2
)

// fail is the one place an error becomes output and an exit code: a
// usage error prints its line and the command's usage on stderr (exit 2);
// a refusal prints its message (and its issues) on stderr, and with --json
// the refusal object on stdout (exit 1); anything else prints as it is.
func (e *env) fail(err error) int {
	var exit cli.ExitCoder
	if errors.As(err, &exit) && exit.ExitCode() == 0 {
		return 0
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintln(e.err, "quire: "+ue.msg)
		fmt.Fprint(e.err, ue.usage)
		if e.json {
			e.printJSON(refusal.Invalid(ue.path, "%s", ue.msg).Object())
		}
		return exitUsage
	}
	if errors.As(err, &exit) && exit.ExitCode() != 0 && err.Error() == "" {
		return exit.ExitCode()
	}
	r := refusal.Of(err)
	fmt.Fprintln(e.err, "quire: "+r.Message)
	for _, is := range r.Issues {
		if is.Line > 0 {
			fmt.Fprintf(e.err, "  %s line %d: %s\n", is.Path, is.Line, is.Message)
		}
	}
	if e.json && !e.printed {
		e.printJSON(r.Object())
	}
	return exitRefused
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
	if isTerminal(c.App.ErrWriter) {
		l.OnCatchUp = catchUpProgress(c.App.ErrWriter, time.Now)
		l.OnProgress = taskProgress(c.App.ErrWriter, time.Now)
	}
	return l, nil
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
		HideVersion:     true,
		ExitErrHandler:  func(*cli.Context, error) {},
		// urfave/cli adds --help only to an app without a help command;
		// quire has its own (quire help COMMAND...), so it adds the flag.
		Flags: []cli.Flag{vaultFlag,
			&cli.BoolFlag{Name: "version", Usage: "print quire's version and the git revision it was built from"}, cli.HelpFlag},
		Commands: []*cli.Command{
			{
				Name: "init", Usage: "make a vault: a git repository with quire.yaml and the index", ArgsUsage: "DIR",
				Flags: []cli.Flag{&cli.StringFlag{Name: "org", Value: "org", Usage: "the organization's id"}, jsonFlag},
				Action: func(c *cli.Context) error {
					if err := needArgs(c, 1, 1, "DIR, the folder to make the vault in"); err != nil {
						return err
					}
					dir := c.Args().First()
					v, err := vault.Init(dir, c.String("org"), time.Now())
					if err != nil {
						return err
					}
					v.Close()
					if c.Bool("json") {
						return e.printJSON(map[string]string{"org": c.String("org"), "vault": v.Root()})
					}
					fmt.Fprintf(e.out, "Made the vault of %s in %s\n", c.String("org"), v.Root())
					return nil
				},
			},
			callCommand(e),
			runCommand(e),
			runsCommand(e),
			{
				Name: "check", Usage: "validate the whole vault against the playbook-run capsule (with --history, its git history too)",
				Flags: []cli.Flag{jsonFlag,
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
					if c.Bool("json") {
						return e.printJSON(map[string]bool{"rebuilt": true})
					}
					fmt.Fprintln(e.out, "Rebuilt .quire/ from the files")
					return nil
				}),
			},
			{
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
			},
		},
	}
	for _, more := range extraCommands {
		app.Commands = append(app.Commands, more(e))
	}
	for _, parent := range sortedParents() {
		cmd := app.Command(parent)
		if cmd == nil {
			cmd = &cli.Command{Name: parent, Usage: parent + " commands"}
			app.Commands = append(app.Commands, cmd)
		}
		for _, more := range extraSubcommands[parent] {
			cmd.Subcommands = append(cmd.Subcommands, more(e))
		}
	}
	root := func() *cli.Command {
		r := &cli.Command{Name: "quire", Subcommands: app.Commands, Flags: app.Flags}
		paths.Store(r, "quire")
		return r
	}
	app.Commands = append(app.Commands, versionCommand(e), helpCommand(e, root))
	prepare(app.Commands, "quire")
	app.OnUsageError = func(c *cli.Context, err error, _ bool) error {
		return &usageError{msg: err.Error(), usage: usageOf(root()), path: "FLAGS"}
	}
	// quire alone shows the help; quire --version the version; a first
	// word that is no command is a usage error with the nearest one.
	app.Action = func(c *cli.Context) error {
		if c.Bool("version") {
			fmt.Fprintln(e.out, buildVersion().String())
			return nil
		}
		if c.NArg() > 0 {
			return unknownCommand(c.Args().First(), root())
		}
		return cli.ShowAppHelp(c)
	}
	return app
}

// extraCommands are the commands of later capabilities, each added by an
// init function in a file of its own.
var extraCommands []func(e *env) *cli.Command

// extraSubcommands are verbs added to a command by a file of their own
// (quire definition inspect), by the command's name; the command is made
// when no file makes it.
var extraSubcommands = map[string][]func(e *env) *cli.Command{}

func sortedParents() []string {
	var ps []string
	for p := range extraSubcommands {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}
