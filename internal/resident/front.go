package resident

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"quire/internal/gomod"
	"runtime"
	"slices"
	"strings"
)

// Front is the quire front's main: it hands `quire call OP` to the vault's
// resident engine when one is serving, and runs the engine with the same
// arguments for everything else (and for a call no resident takes). argv is
// the command line, os.Args. It answers the exit code when it does not
// replace itself with the engine.
func Front(argv []string) int {
	engine, err := enginePath()
	if err != nil {
		fmt.Fprintf(os.Stderr, "quire: %v\n", err)
		return 1
	}
	line, ok := parseCall(argv[1:], os.LookupEnv)
	if !ok {
		line, ok = parseVerb(argv[1:], os.LookupEnv)
	}
	if !ok || !Supported || off(os.Getenv("QUIRE_RESIDENT")) || perProcess() {
		return execEngine(engine, argv)
	}
	root, err := filepath.Abs(line.vault)
	if err != nil {
		return execEngine(engine, argv)
	}
	dir, err := Dir()
	if err != nil {
		return execEngine(engine, argv)
	}
	// The identity of the file itself, as the resident sees its own (a
	// quire-engine that is a symbolic link names the file it points to).
	real, err := filepath.EvalSymlinks(engine)
	if err != nil {
		return execEngine(engine, argv)
	}
	id, err := IdentityOf(real)
	if err != nil {
		return execEngine(engine, argv)
	}
	// A call's --args is read first (standard input too), so that a
	// connection never waits on the caller's input; a verb reads none.
	var args, stdin []byte
	var from string
	if line.verb == nil {
		args, from, stdin, err = readArgs(line.args, line.argsSet, os.Stdin)
	}
	if err != nil {
		if stdin == nil {
			// A file that cannot be read: the engine refuses it.
			return execEngine(engine, argv)
		}
		fmt.Fprintf(os.Stderr, "quire: cannot read --args from standard input: %v\n", err)
		return 1
	}
	// The engine runs the call itself when no resident takes it: none
	// serves (this front then starts one), it is stale, or it closed the
	// connection first (its idle end, another user). Standard input
	// already read is given to it.
	fallback := func() int {
		if stdin == nil {
			return execEngine(engine, argv)
		}
		return runEngine(engine, argv, stdin)
	}
	wd, _ := os.Getwd()
	env := Fingerprint(os.Getenv, wd)
	sock := Socket(dir, root, env, id.Path)
	conn, err := dial(sock)
	if err != nil {
		// Not for a folder that is no vault: the engine says so.
		if _, serr := os.Stat(filepath.Join(root, "quire.yaml")); noResident(err) && serr == nil {
			start(engine, root, sock, wd)
		}
		return fallback()
	}
	defer conn.Close()
	req := Request{Vault: root, Op: line.op, Args: args, From: from, JSON: line.json, Actor: os.Getenv("QUIRE_ACTOR"),
		Verb: line.verb, Vars: verbVars(os.LookupEnv), Engine: id, Env: env}
	if err := json.NewEncoder(conn).Encode(&req); err != nil {
		return fallback()
	}
	dec := json.NewDecoder(bufio.NewReader(conn))
	var st Status
	if err := dec.Decode(&st); err != nil || st.Status != "taken" {
		if st.Status == "stale" {
			// It has let go of its socket and lock: start the engine of
			// today for the calls after this one.
			start(engine, root, sock, wd)
		}
		return fallback()
	}
	var ans Answer
	if err := dec.Decode(&ans); err != nil {
		fmt.Fprintf(os.Stderr, "quire: the resident engine took the call %s and its connection was lost before the answer (%v): the call may or may not have been made; look at the vault before making it again\n", line.op, err)
		return 1
	}
	os.Stdout.Write(ans.Stdout)
	os.Stderr.Write(ans.Stderr)
	return ans.Code
}

// enginePath is quire-engine beside the front's own executable (symlinks
// resolved), or an error saying where it looked.
func enginePath() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot find this program's own file to look for %s beside it: %v", EngineName, err)
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	name := EngineName
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	p := filepath.Join(filepath.Dir(exe), name)
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("the quire engine is missing: no %s beside %s; make install puts both in one folder", p, exe)
	}
	return p, nil
}

// off says whether QUIRE_RESIDENT turns the resident off.
func off(v string) bool {
	switch strings.ToLower(v) {
	case "off", "0", "false", "no":
		return true
	}
	return false
}

// perProcess says whether the environment asks for something of the
// process that runs the call (a CPU profile, a crash point for tests),
// which a resident cannot give: the engine then runs it.
func perProcess() bool {
	for _, k := range []string{"QUIRE_CPUPROFILE", "QUIRE_CRASH_AFTER"} {
		if os.Getenv(k) != "" {
			return true
		}
	}
	return false
}

// callLine is a command line of the fast path: a call, or a verb.
type callLine struct {
	vault, args, op string
	json, argsSet   bool
	// verb is a verb's command line, without --vault (parseVerb).
	verb []string
}

// verbs are the commands the README teaches that call the operations,
// which the front hands to the resident as it hands `quire call`.
var verbs = [][]string{{"run", "start"}, {"run", "event"}, {"run", "end"}, {"run", "show"}, {"run", "thread"}, {"runs"}}

// VerbVars are the variables of the environment a verb's flags read
// (--actor, --author, --playbook), which the front sends with the verb:
// the resident's own environment is not the caller's.
var VerbVars = []string{"QUIRE_ACTOR", "QUIRE_PLAYBOOK"}

func verbVars(lookup func(string) (string, bool)) map[string]string {
	vars := map[string]string{}
	for _, k := range VerbVars {
		if v, ok := lookup(k); ok {
			vars[k] = v
		}
	}
	return vars
}

// parseVerb reads `[--vault DIR | --vault=DIR] VERB ARGS...` for one of
// verbs, and only when nothing in ARGS asks for the caller's process: no
// standard input or file (-, @-, @FILE, whose path is the caller's
// working folder's) and no help, nor --vault again or a "--". The engine
// reads anything else.
// vaultOf is the vault a line names without --vault: QUIRE_VAULT, or this
// folder. An empty QUIRE_VAULT is the engine's to refuse.
func vaultOf(lookup func(string) (string, bool)) (string, bool) {
	v, ok := lookup("QUIRE_VAULT")
	if !ok {
		return ".", true
	}
	return v, v != ""
}

func parseVerb(args []string, lookup func(string) (string, bool)) (callLine, bool) {
	var l callLine
	vaultSet := false
	if len(args) > 0 && (args[0] == "--vault" || strings.HasPrefix(args[0], "--vault=")) {
		if v, ok := strings.CutPrefix(args[0], "--vault="); ok {
			l.vault, args = v, args[1:]
		} else if len(args) > 1 {
			l.vault, args = args[1], args[2:]
		}
		if l.vault == "" || strings.HasPrefix(l.vault, "-") {
			return l, false
		}
		vaultSet = true
	}
	known := false
	for _, v := range verbs {
		if len(args) >= len(v) && slices.Equal(args[:len(v)], v) {
			known = true
		}
	}
	if !known {
		return l, false
	}
	for _, a := range args {
		switch {
		case a == "-" || a == "--" || strings.HasPrefix(a, "@") || a == "--help" || a == "-h" || a == "help",
			a == "--vault" || strings.HasPrefix(a, "--vault="):
			return l, false
		}
	}
	if !vaultSet {
		var ok bool
		if l.vault, ok = vaultOf(lookup); !ok {
			return l, false
		}
	}
	l.verb = args
	return l, true
}

// parseCall reads exactly `[--vault DIR | --vault=DIR] call [--json]
// [--args V | --args=V] OP`, with the flags after `call` in any order
// around OP and --vault also after `call`, as the engine's flagsFirst
// accepts them; false for anything else (other commands and flags, a flag
// twice, a value that looks like a flag, no or several operations, "--"),
// which the engine then reads. The vault is QUIRE_VAULT's when --vault is
// not given, "." when neither is.
func parseCall(args []string, lookup func(string) (string, bool)) (callLine, bool) {
	var l callLine
	vaultSet, seenCall := false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		// value is the flag's value: after = or the next word.
		value := func(name string) (string, bool) {
			if v, ok := strings.CutPrefix(a, name+"="); ok {
				return v, true
			}
			if a != name || i+1 >= len(args) {
				return "", false
			}
			i++
			v := args[i]
			return v, v == "-" || !strings.HasPrefix(v, "-")
		}
		switch {
		case a == "--vault" || strings.HasPrefix(a, "--vault="):
			v, ok := value("--vault")
			if !ok || vaultSet || v == "" {
				return l, false
			}
			l.vault, vaultSet = v, true
		case !seenCall:
			if a != "call" {
				return l, false
			}
			seenCall = true
		case a == "--json":
			if l.json {
				return l, false
			}
			l.json = true
		case a == "--args" || strings.HasPrefix(a, "--args="):
			v, ok := value("--args")
			if !ok || l.argsSet {
				return l, false
			}
			l.args, l.argsSet = v, true
		case strings.HasPrefix(a, "-") || l.op != "":
			return l, false
		default:
			l.op = a
		}
	}
	if !seenCall || l.op == "" {
		return l, false
	}
	if !vaultSet {
		var ok bool
		if l.vault, ok = vaultOf(lookup); !ok {
			return l, false
		}
	}
	return l, true
}

// readArgs reads --args as the engine does (cmd/quire/input.go): @@ begins
// a value that is an @ and what follows, @- and - read standard input,
// @FILE a file relative to the working folder; left out, it is {}. from
// says where it came from as the engine's messages do. stdin is what was
// read from standard input (nil when it was not read). A file that cannot
// be read is an error, for the engine to refuse in its words.
func readArgs(v string, set bool, in io.Reader) (text []byte, from string, stdin []byte, err error) {
	switch {
	case !set:
		return []byte("{}"), "", nil, nil
	case strings.HasPrefix(v, "@@"):
		return []byte(v[1:]), "", nil, nil
	case v == "@-" || v == "-":
		data, err := io.ReadAll(in)
		if data == nil {
			data = []byte{}
		}
		return data, "standard input", data, err
	case strings.HasPrefix(v, "@"):
		data, err := os.ReadFile(v[1:])
		return data, v[1:], nil, err
	}
	return []byte(v), "", nil, nil
}

// start starts the vault's resident, detached (a session of its own,
// standard streams on /dev/null), unless one holds the lock: it is
// serving, or starting. Two fronts may both start one; the resident that
// does not get the lock leaves at once.
func start(engine, root, sock, wd string) {
	f, err := os.OpenFile(LockPath(sock), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	free, _ := TryLock(f)
	f.Close()
	if !free {
		return
	}
	cmd := exec.Command(engine, "resident", "--vault", root)
	// It works in the module folder around the caller's (its fingerprint
	// names it), else in /, so that it keeps no other folder busy.
	cmd.Dir = gomod.Around(wd)
	if cmd.Dir == "" {
		cmd.Dir = "/"
	}
	detach(cmd)
	if cmd.Start() == nil {
		cmd.Process.Release()
	}
}

// runEngine runs the engine as a child with the standard input the front
// already read, and answers its exit code.
func runEngine(engine string, argv []string, stdin []byte) int {
	cmd := exec.Command(engine, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(stdin), os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "quire: cannot run %s: %v\n", engine, err)
		return 1
	}
	return 0
}
