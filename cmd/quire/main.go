// Command quire is the CLI of the quire ledger runtime. Every command is a
// thin front over the ledger's table of operations; `quire call` runs any
// of them by name with JSON arguments. The commands are one list, in
// commands.go, in the order a newcomer reads them.
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
	"runtime/trace"
	"slices"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"quire/fold"
	"quire/ledger"
	"quire/words/refusal"
)

func main() {
	// Started by a fold pool as its worker, quire folds and exits here.
	fold.ServeIfWorker()
	// Started by a CLI command to compact the vault, quire does and exits.
	compactIfWorker()
	// QUIRE_CPUPROFILE=FILE writes a CPU profile of the command (go tool
	// pprof reads it): how the bench finds where a `quire call` spends.
	recordedIn(os.Getenv("QUIRE_CPUPROFILE"), pprof.StartCPUProfile, pprof.StopCPUProfile)
	// QUIRE_TRACE=FILE writes an execution trace of the command (go tool
	// trace reads it): where a slow boundary of quire serve waited, on a
	// lock, a system call or a core.
	recordedIn(os.Getenv("QUIRE_TRACE"), trace.Start, trace.Stop)
	// QUIRE_MEMPROFILE=FILE writes what the heap holds as the command ends
	// (quire serve: as SIGTERM stops it): how the bench finds what quire
	// serve keeps.
	if p := os.Getenv("QUIRE_MEMPROFILE"); p != "" {
		code := run(os.Args, os.Stdin, os.Stdout, os.Stderr)
		if f, err := os.Create(p); err == nil {
			pprof.Lookup("heap").WriteTo(f, 0)
			f.Close()
		}
		os.Exit(code)
	}
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}

// recordedIn runs the command with a recording (a profile, a trace)
// started into the file at path, stopped when the command ends, and
// exits; with no path, or a file or recording that cannot start, it
// returns and the command runs as it would.
func recordedIn(path string, start func(io.Writer) error, stop func()) {
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil || start(f) != nil {
		return
	}
	code := run(os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	f.Close()
	os.Exit(code)
}

// env is what commands see: their streams, so tests capture them.
type env struct {
	in       io.Reader
	out, err io.Writer
	// json is whether --json was given: a refusal then prints its object
	// on standard output too. printed is set once the refusal object is
	// printed (quire call prints it itself).
	json, printed bool
	// files are the files the command read an argument from, by the
	// argument's path ("/source": "close.yaml"), so that a refusal's
	// issue at a line of one is printed as compilers print it.
	files map[string]string
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
	if !e.printIssues(r.Issues) {
		fmt.Fprintln(e.err, "quire: "+r.Message)
	}
	if e.json && !e.printed {
		e.printJSON(r.Object())
	}
	return exitRefused
}

// printIssues prints a refusal whose issues name lines one issue a line,
// each once: `close.yaml:48: message` as compilers print it where the
// command read the argument from a file, `quire: /source (line 48):
// message` where it did not, and an issue of no line as `quire: /name:
// message`. It says false, printing nothing, when no issue names a line:
// the refusal's message then says it all.
func (e *env) printIssues(issues []refusal.Issue) bool {
	if !slices.ContainsFunc(issues, func(is refusal.Issue) bool { return is.Line > 0 }) {
		return false
	}
	for _, is := range issues {
		file, ok := e.files[is.Path]
		switch {
		case is.Line > 0 && ok:
			fmt.Fprintf(e.err, "%s:%d: %s\n", file, is.Line, is.Message)
		case is.Line > 0:
			fmt.Fprintf(e.err, "quire: %s (line %d): %s\n", is.Path, is.Line, is.Message)
		case is.Path != "":
			fmt.Fprintf(e.err, "quire: %s: %s\n", is.Path, is.Message)
		default:
			fmt.Fprintf(e.err, "quire: %s\n", is.Message)
		}
	}
	return true
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
	// A command hands the compaction its writes make due to a process
	// of its own (compactworker.go); serve, mcp and the resident keep
	// it in their background.
	l.SetCompactBy(compactElsewhere(l.Root()))
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

// warmLedger is the key of the app's Metadata under which the resident
// gives its verbs its open ledger (residentVerb).
const warmLedger = "quire.ledger"

// withLedger opens the vault for a command and closes it after; in the
// resident, it gives the command the resident's warm ledger, left open.
func withLedger(fn func(c *cli.Context, l *ledger.Ledger) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		if l, ok := c.App.Metadata[warmLedger].(*ledger.Ledger); ok {
			return fn(c, l)
		}
		l, err := openLedger(c)
		if err != nil {
			return err
		}
		defer l.Close()
		return fn(c, l)
	}
}

// gettingStarted is quire help's first steps: lines of README.md's
// "Using it", in its order (TestHelpGettingStarted holds them to it), so
// that the help shows a newcomer the way in without sending them away.
const gettingStarted = `Getting started (README.md's "Using it"; docs/guide.md walks a workflow and its page):

   quire init ../acme-vault --org acme
   export QUIRE_VAULT=../acme-vault QUIRE_ACTOR=agent-7
   quire project create Operations
   quire playbook create finance --name Finance
   quire definition save testdata/vault/close-the-month.yaml --playbook finance
   quire run start --playbook finance --name close-the-month --member-of <project uid> --executor agent-7 --authorized-by ana
   quire run event step_completed --playbook finance --run <run id> --step do/0/work --detail 'Reconciled 412 entries'
   quire run end succeeded --playbook finance --run <run id> --output '{"month":"2026-10","revenue":182450}'
   quire run show --playbook finance --run <run id>
   quire help run end
   quire call --list`

func newApp(e *env) *cli.App {
	app := &cli.App{
		Name:            "quire",
		Usage:           "a file-native ledger runtime: run folders in a git vault",
		Description:     gettingStarted,
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
	}
	// root is quire as a command of commands, for the usage and the help
	// command; it reads app.Commands when it is called, once they are made.
	root := func() *cli.Command {
		return &cli.Command{Name: "quire", Subcommands: app.Commands, Flags: app.Flags}
	}
	app.Commands = commands(e, root)
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
