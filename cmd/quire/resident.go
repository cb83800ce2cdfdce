package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"quire/internal/resident"
	"quire/internal/resident/server"
	"quire/ledger"
)

// quire resident (hidden): the resident engine the quire front
// (cmd/quire-front) starts for a vault, and hands its `quire call`s to,
// so that a call as a process costs the front's start (a millisecond)
// and the call, not the whole program's start. It serves one vault on a
// unix socket with one warm ledger, opened once, as quire mcp does, and
// answers each call with exactly what `quire call` prints (callOp). It
// leaves after --idle without a call, on SIGTERM or SIGINT, when the vault
// is gone, or when a front names another engine (docs/resident.md).
func residentCommand(e *env) *cli.Command {
	return &cli.Command{
		Name: "resident", Hidden: true,
		Usage: "serve this vault's quire call requests from the quire front on a unix socket, warm, until idle (started by the front)",
		Flags: []cli.Flag{&cli.DurationFlag{Name: "idle", Value: 10 * time.Minute, EnvVars: []string{"QUIRE_RESIDENT_IDLE"},
			Usage: "leave after this long without a call"}},
		Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			// The verbs' flags read these from the environment: the
			// resident's is its starter's, not its caller's, whose values
			// come with each verb (residentVerb).
			for _, k := range append([]string{"QUIRE_VAULT"}, resident.VerbVars...) {
				os.Unsetenv(k)
			}
			l.SetCompactContext(ctx)
			l.SetCompactBy(nil)
			self, err := resident.Self()
			if err != nil {
				return err
			}
			// The index read whole once, here: a lookup then reads only
			// the lines appended since (vault/registry.go), where a
			// process that has not read it scans the whole file at each
			// (measured at 20,000 runs: a warm get_run 29 ms, 0.7 ms
			// after this).
			if err := l.Warm(); err != nil {
				return err
			}
			root := l.Root()
			wd, _ := os.Getwd()
			s := &server.Server{
				Root: root, Env: resident.Fingerprint(os.Getenv, wd), Engine: self, Idle: c.Duration("idle"),
				Alive: func() bool {
					_, err := os.Stat(filepath.Join(root, ledger.ConfigFile))
					return err == nil
				},
				Call: func(ctx context.Context, r *resident.Request) resident.Answer {
					return residentCall(ctx, l, r)
				},
			}
			err = s.Serve(ctx)
			if errors.Is(err, server.ErrRunning) {
				return nil
			}
			return err
		}),
	}
}

// residentCall makes one call of a front on the warm ledger and answers
// what `quire call` would print and its exit code.
func residentCall(ctx context.Context, l *ledger.Ledger, r *resident.Request) resident.Answer {
	if len(r.Verb) > 0 {
		return residentVerb(ctx, l, r)
	}
	var out, errs bytes.Buffer
	e := &env{in: bytes.NewReader(nil), out: &out, err: &errs, json: r.JSON}
	args := func() (string, string, error) { return string(r.Args), r.From, nil }
	open := func() (*ledger.Ledger, func(), error) { return l, func() {}, nil }
	code := 0
	if err := e.callOp(ctx, r.Op, r.Actor, args, open); err != nil {
		code = e.fail(err)
	}
	return resident.Answer{Stdout: out.Bytes(), Stderr: errs.Bytes(), Code: code}
}

// verbs is held by each verb the resident runs: the commands' flags are
// values urfave/cli changes as it parses (jsonFlag is one for every
// command), so two verbs are not parsed at once.
var verbs sync.Mutex

// residentVerb runs one of a front's verbs (`quire run event …`) as the
// engine would, on the warm ledger: the same commands, printing the same
// bytes through the same fail, with the caller's values of the variables
// the verbs' flags read given as flags.
func residentVerb(ctx context.Context, l *ledger.Ledger, r *resident.Request) resident.Answer {
	verbs.Lock()
	defer verbs.Unlock()
	var out, errs bytes.Buffer
	e := &env{in: bytes.NewReader(nil), out: &out, err: &errs, json: wantsJSON(r.Verb)}
	app := newApp(e)
	defer forgetPaths(app.Commands)
	app.Metadata = map[string]any{warmLedger: l}
	args := append([]string{"quire", "--vault", l.Root()}, withVars(app, r.Verb, r.Vars)...)
	code := 0
	if err := app.RunContext(ctx, flagsFirst(app, args)); err != nil {
		code = e.fail(err)
	}
	return resident.Answer{Stdout: out.Bytes(), Stderr: errs.Bytes(), Code: code}
}

// withVars gives a verb's command line the flags its command would have
// read from the caller's environment (vars): each flag of the command
// whose variable the caller set and the line does not name is put right
// after the command's words, so the line's own flags, after it, win.
func withVars(app *cli.App, verb []string, vars map[string]string) []string {
	cmds, flags, i := app.Commands, []cli.Flag(nil), 0
	for ; i < len(verb); i++ {
		var next *cli.Command
		for _, c := range cmds {
			if c.HasName(verb[i]) {
				next = c
			}
		}
		if next == nil {
			break
		}
		cmds, flags = next.Subcommands, next.Flags
	}
	var add []string
	for _, f := range flags {
		sf, ok := f.(*cli.StringFlag)
		if !ok || len(sf.EnvVars) == 0 || named(verb, sf.Names()) {
			continue
		}
		if v, ok := vars[sf.EnvVars[0]]; ok {
			add = append(add, "--"+sf.Name+"="+v)
		}
	}
	return append(append(append([]string{}, verb[:i]...), add...), verb[i:]...)
}

// named says whether a command line names a flag of these names, as
// urfave/cli reads them: -n or --n, alone or with =value.
func named(line, names []string) bool {
	for _, a := range line {
		for _, n := range names {
			for _, d := range []string{"-", "--"} {
				if a == d+n || strings.HasPrefix(a, d+n+"=") {
					return true
				}
			}
		}
	}
	return false
}
