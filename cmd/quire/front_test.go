//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"quire/internal/resident"
	"quire/internal/resident/server"
)

// frontKit is the quire front and its engine as make install lays them out:
// the test binary copied as quire-engine and hard-linked beside it as quire
// (TestMain tells them apart by their file's name), with a runtime folder
// of its own for the residents' sockets. Every resident it starts is
// stopped when the test ends.
type frontKit struct {
	t                  *testing.T
	front, engine, log string
	runtime            string // XDG_RUNTIME_DIR
	env                []string
	socketsDir         string
}

func newFrontKit(t *testing.T) *frontKit {
	dir := t.TempDir()
	// The runtime folder is short (a socket's path holds 107 bytes; a
	// deep TMPDIR would send the sockets to /tmp/quire-<uid>, shared).
	runtime, err := os.MkdirTemp("/tmp", "qrt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(runtime) })
	k := &frontKit{t: t, front: filepath.Join(dir, "quire"), engine: filepath.Join(dir, "quire-engine"),
		log: filepath.Join(dir, "engine.log"), runtime: runtime}
	copyExecutable(t, os.Args[0], k.engine)
	if err := os.Link(k.engine, k.front); err != nil {
		t.Fatal(err)
	}
	os.Chmod(k.runtime, 0o700)
	k.socketsDir = filepath.Join(k.runtime, "quire")
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(name, "QUIRE_") && name != "XDG_RUNTIME_DIR" {
			k.env = append(k.env, kv)
		}
	}
	k.env = append(k.env, "QUIRE_TEST_AS_FRONT=1", "XDG_RUNTIME_DIR="+k.runtime, "QUIRE_TEST_ENGINE_LOG="+k.log)
	t.Cleanup(k.stopResidents)
	return k
}

func copyExecutable(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err == nil {
		_, err = io.Copy(dst, src)
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

// engineRuns are the engine's runs the front made (exec or resident), from
// the log.
func (k *frontKit) engineRuns() []string {
	data, _ := os.ReadFile(k.log)
	var runs []string
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, "via-front "); ok {
			runs = append(runs, rest)
		}
	}
	return runs
}

type ran struct {
	code      int
	out, errs string
}

// run runs bin (the front or the engine) in dir with stdin and more
// environment.
func (k *frontKit) run(bin, dir, stdin string, env []string, args ...string) ran {
	k.t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, k.env...), env...)
	if bin == k.engine {
		cmd.Env = append(cmd.Env, "QUIRE_TEST_DIRECT=1")
	}
	cmd.Stdin = strings.NewReader(stdin)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		k.t.Fatalf("%s %v: %v", bin, args, err)
	}
	return ran{cmd.ProcessState.ExitCode(), out.String(), errs.String()}
}

// socket is the socket of the resident of the vault at root for the kit's
// environment and a front working in wd.
func (k *frontKit) socket(root, wd string, env ...string) string {
	vars := map[string]string{}
	for _, kv := range append(append([]string{}, k.env...), env...) {
		name, v, _ := strings.Cut(kv, "=")
		vars[name] = v
	}
	engine, err := filepath.EvalSymlinks(k.engine)
	if err != nil {
		k.t.Fatal(err)
	}
	return resident.Socket(k.socketsDir, root, resident.Fingerprint(func(n string) string { return vars[n] }, wd), engine)
}

// waitResident waits until a resident answers on socket, other than the
// one of process not, and answers its process id.
func (k *frontKit) waitResident(socket string, not int) int {
	k.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		c, err := net.Dial("unix", socket)
		if err != nil {
			continue
		}
		c.Close()
		if pid := server.PID(socket); pid != 0 && pid != not {
			return pid
		}
	}
	k.t.Fatalf("no resident answers on %s", socket)
	return 0
}

// gone waits until process pid has ended.
func gone(pid int, within time.Duration) bool {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			return true
		}
	}
	return false
}

// stopResidents stops every resident serving a socket of the kit (one
// holds its lock file) with SIGTERM, and waits for it to end.
func (k *frontKit) stopResidents() {
	locks, _ := filepath.Glob(filepath.Join(k.socketsDir, "*.lock"))
	for _, lock := range locks {
		f, err := os.Open(lock)
		if err != nil {
			continue
		}
		free := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
		f.Close()
		pid := server.PID(strings.TrimSuffix(lock, ".lock") + ".sock")
		if free || pid == 0 {
			continue
		}
		syscall.Kill(pid, syscall.SIGTERM)
		if !gone(pid, 10*time.Second) {
			syscall.Kill(pid, syscall.SIGKILL)
			k.t.Errorf("the resident %d did not end on SIGTERM", pid)
		}
	}
}

// The front as make install lays it out: with a resident serving, a
// `quire call` prints byte for byte what the engine prints and exits as it
// does, for an answer, a refusal, malformed --args, @FILE, @-, an unknown
// operation and --json, without running the engine; what is no call runs
// the engine. Calls through the front and the engine and a git CLI commit
// take turns on one vault: every acknowledged event is there once and
// quire check is clean. An upgraded engine makes the resident stale: the
// call is answered right, and a resident of the new engine starts.
func TestFrontAndResident(t *testing.T) {
	t.Parallel()
	k := newFrontKit(t)
	dir, v, project := newCLIVault(t)
	r := struct{ RunID string }{closeRun(t, v, project)}
	cwd := t.TempDir()
	os.WriteFile(filepath.Join(cwd, "args.json"), []byte(`{"playbook":"finance"}`), 0o644)

	// No resident yet: the first call starts one and is run by the engine.
	first := k.run(k.front, cwd, "", nil, v, "call", "list_playbooks")
	if first.code != 0 || !strings.Contains(first.out, `"finance"`) {
		t.Fatalf("first call: %+v", first)
	}
	sock := k.socket(dir, cwd)
	pid := k.waitResident(sock, 0)

	cases := []struct {
		stdin string
		env   []string
		args  []string
		exec  bool // not a call the front hands on: the engine runs it
	}{
		{args: []string{v, "call", "get_playbook", "--args", `{"playbook":"finance"}`}},
		{args: []string{"call", "--json", "get_playbook", `--args={"playbook":"Nope"}`, v}},
		{args: []string{"call", "get_playbook", "--args", "{\"playbook\":\n  \"finance\"", "--vault", dir}},
		{args: []string{v, "call", "get_playbook", "--args", "@args.json"}},
		{stdin: `{"playbook":"finance"}`, args: []string{v, "call", "get_playbook", "--args", "@-"}},
		{stdin: `{"playbook":"finance"} {}`, args: []string{v, "call", "--args", "-", "get_playbook"}},
		{args: []string{v, "call", "get_playbok", "--args", "{}"}},
		{env: []string{"QUIRE_VAULT=" + dir}, args: []string{"call", "get_playbook", "--args", `{"playbook":"finance"}`}},
		{args: []string{v, "call", "get_playbook", "--args", "@missing.json"}, exec: true},
		{args: []string{v, "call", "--list"}, exec: true},
		{args: []string{v, "call", "get_playbook", "list_playbooks"}, exec: true},
	}
	before := len(k.engineRuns())
	execs := 0
	for _, c := range cases {
		got := k.run(k.front, cwd, c.stdin, c.env, c.args...)
		want := k.run(k.engine, cwd, c.stdin, c.env, c.args...)
		if got != want {
			t.Errorf("quire %q: the front printed\n%+v\nthe engine\n%+v", c.args, got, want)
		}
		if c.exec {
			execs++
		}
	}
	if runs := k.engineRuns()[before:]; len(runs) != execs {
		t.Errorf("the front ran the engine %d times, not %d (the rest through the resident): %q", len(runs), execs, runs)
	}

	// Taking turns: the front, the engine, and a git CLI commit.
	acked := map[string]bool{}
	record := func(bin string, i int) {
		t.Helper()
		typ := []string{"step_started", "step_completed"}[i%2]
		got := k.run(bin, cwd, "", nil, v, "call", "record_event", "--args",
			fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":%q,"step":"do/%d","actor":"agent-7"}`, r.RunID, typ, i))
		var ev struct{ ID string }
		if got.code != 0 || json.Unmarshal([]byte(got.out), &ev) != nil || ev.ID == "" {
			t.Fatalf("record_event through %s: %+v", filepath.Base(bin), got)
		}
		acked[ev.ID] = true
	}
	for i := range 3 {
		record(k.front, 2*i)
		record(k.engine, 2*i+1)
		os.WriteFile(filepath.Join(dir, "notes.md"), []byte(fmt.Sprintf("note %d\n", i)), 0o644)
		gitIn(t, dir, "add", "notes.md")
		gitIn(t, dir, "commit", "-q", "-m", "a person's note")
	}
	// QUIRE_ACTOR is who acts when the arguments do not say, through the
	// resident as through the engine.
	for _, bin := range []string{k.front, k.engine} {
		n := len(k.engineRuns())
		got := k.run(bin, cwd, "", []string{"QUIRE_ACTOR=agent-7"}, v, "call", "record_event", "--args",
			fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_started","step":"do/9"}`, r.RunID))
		if got.code != 0 || !strings.Contains(got.out, `"caller": "agent-7"`) {
			t.Errorf("record_event through %s with QUIRE_ACTOR: %+v", filepath.Base(bin), got)
		}
		if bin == k.front && len(k.engineRuns()) != n {
			t.Errorf("the front ran the engine for a call with QUIRE_ACTOR")
		}
	}
	got := k.run(k.front, cwd, "", nil, v, "call", "list_playbook_events", "--args", `{"playbook":"finance","limit":1000}`)
	var page struct{ Events []struct{ ID string } }
	if got.code != 0 || json.Unmarshal([]byte(got.out), &page) != nil {
		t.Fatalf("list_playbook_events: %+v", got)
	}
	seen := map[string]int{}
	for _, ev := range page.Events {
		seen[ev.ID]++
	}
	for id := range acked {
		if seen[id] != 1 {
			t.Errorf("acknowledged event %s is in the history %d times", id, seen[id])
		}
	}
	if got := k.run(k.engine, cwd, "", nil, v, "check"); got.code != 0 || !strings.HasSuffix(got.out, " 0 problems\n") {
		t.Fatalf("check: %+v", got)
	}
	if n := len(k.engineRuns()[before:]); n != execs {
		t.Errorf("the front ran the engine for %d calls taking turns", n-execs)
	}

	// An upgraded engine: the resident is stale; the call is still
	// answered right (by the engine), and a resident of the new engine
	// starts and serves the next.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(k.engine, later, later); err != nil {
		t.Fatal(err)
	}
	args := []string{v, "call", "get_playbook", "--args", `{"playbook":"finance"}`}
	want := k.run(k.engine, cwd, "", nil, args...)
	if got := k.run(k.front, cwd, "", nil, args...); got != want || want.code != 0 {
		t.Fatalf("after the upgrade the front printed\n%+v\nthe engine\n%+v", got, want)
	}
	if !gone(pid, 10*time.Second) {
		t.Fatalf("the stale resident %d is still running", pid)
	}
	k.waitResident(sock, pid)
	n := len(k.engineRuns())
	if got := k.run(k.front, cwd, "", nil, args...); got != want {
		t.Fatalf("the new resident printed\n%+v\nthe engine\n%+v", got, want)
	}
	if len(k.engineRuns()) != n {
		t.Errorf("the new resident did not serve the call: %q", k.engineRuns()[n:])
	}
}

// A resident leaves after its idle time, and removes its socket;
// QUIRE_RESIDENT=off never starts one; a front with no engine beside it
// says where it looked.
func TestResidentLifetime(t *testing.T) {
	t.Parallel()
	k := newFrontKit(t)
	dir, v, _ := newCLIVault(t)
	cwd := t.TempDir()

	off := k.run(k.front, cwd, "", []string{"QUIRE_RESIDENT=off"}, v, "call", "list_playbooks")
	time.Sleep(200 * time.Millisecond)
	if off.code != 0 || len(k.engineRuns()) != 1 {
		t.Fatalf("QUIRE_RESIDENT=off: %+v, engine runs %q", off, k.engineRuns())
	}
	if entries, _ := os.ReadDir(k.socketsDir); len(entries) != 0 {
		t.Fatalf("QUIRE_RESIDENT=off left %v", entries)
	}

	// Calls until one is served by a resident (one may start and leave
	// while a loaded machine runs the engine), then none: it leaves. The
	// idle time is longer than a front's start under -race (the front here
	// is the test binary, over a second to start with the race detector),
	// or every resident would leave before the next call reached it.
	idle := []string{"QUIRE_RESIDENT_IDLE=3s"}
	sock := k.socket(dir, cwd)
	pid := 0
	for try := 0; pid == 0; try++ {
		if try == 40 {
			t.Fatalf("no call went through a resident: the engine ran %q", k.engineRuns())
		}
		n := len(k.engineRuns())
		got := k.run(k.front, cwd, "", idle, v, "call", "list_playbooks")
		if got.code != 0 || got.out != off.out {
			t.Fatalf("list_playbooks: %+v", got)
		}
		if len(k.engineRuns()) == n {
			pid = server.PID(sock)
		}
	}
	if !gone(pid, 10*time.Second) {
		t.Fatalf("the resident %d did not leave after its idle time", pid)
	}
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the resident left its socket: %v", err)
	}

	// A resident that takes the call and is gone before its answer: the
	// front says the call may not have been made, and exits 1. One that
	// closes without taking it: the engine makes the call.
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, take := range []bool{true, false} {
		go func() {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			bufio.NewReader(c).ReadBytes('\n')
			if take {
				c.Write([]byte(`{"status":"taken"}` + "\n"))
			}
		}()
		got := k.run(k.front, cwd, "", nil, v, "call", "list_playbooks")
		if take && (got.code != 1 || got.out != "" || !strings.Contains(got.errs, "may or may not have been made")) {
			t.Errorf("a connection lost after the call was taken: %+v", got)
		}
		if !take && (got.code != 0 || got.out != off.out) {
			t.Errorf("a call not taken: %+v", got)
		}
	}

	lone := filepath.Join(t.TempDir(), "quire")
	if err := os.Link(k.engine, lone); err != nil {
		t.Fatal(err)
	}
	got := k.run(lone, cwd, "", nil, v, "call", "list_playbooks")
	if got.code != 1 || !strings.Contains(got.errs, filepath.Join(filepath.Dir(lone), "quire-engine")) || !strings.Contains(got.errs, "make install") {
		t.Fatalf("no engine: %+v", got)
	}
}

// The verbs the README teaches go through the resident as quire call
// does: they print what the engine prints, byte for byte (an answer, a
// refusal, a usage error, --json), read QUIRE_ACTOR and QUIRE_PLAYBOOK
// from the caller's environment, not the resident's, and the engine runs
// only what reads the caller's files or standard input, and help.
func TestFrontHandsVerbsToTheResident(t *testing.T) {
	t.Parallel()
	k := newFrontKit(t)
	dir, v, project := newCLIVault(t)
	runID := closeRun(t, v, project)
	cwd := t.TempDir()
	// The resident is started by a front whose QUIRE_ACTOR is not the
	// callers' after it.
	k.run(k.front, cwd, "", []string{"QUIRE_ACTOR=mallory", "QUIRE_PLAYBOOK=nowhere"}, v, "call", "list_playbooks")
	k.waitResident(k.socket(dir, cwd), 0)

	playbook := []string{"QUIRE_PLAYBOOK=finance"}
	cases := []struct {
		env  []string
		args []string
		exec bool
	}{
		{args: []string{v, "run", "show", "--playbook", "finance", "--run", runID}},
		{args: []string{v, "run", "show", "--run", runID, "--json"}, env: playbook},
		{args: []string{v, "runs", "--playbook", "finance"}},
		{args: []string{v, "runs", "-p", "finance", "--json"}, env: []string{"QUIRE_PLAYBOOK=nowhere"}},
		{args: []string{v, "run", "show", "--playbook", "finance", "--run", "019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3e"}},
		{args: []string{v, "run", "show", "--run", runID}},
		{args: []string{v, "run", "event", "step_started", "--playbook", "finance", "--run", runID, "--step", "do/1"}},
		{args: []string{v, "run", "show", "--help"}, exec: true},
		{args: []string{v, "run", "thread", "--playbook", "finance", "--run", runID, "--actor", "agent-7", "@missing.md"}, exec: true},
	}
	before := len(k.engineRuns())
	execs := 0
	for _, c := range cases {
		got := k.run(k.front, cwd, "", c.env, c.args...)
		want := k.run(k.engine, cwd, "", c.env, c.args...)
		if got != want {
			t.Errorf("quire %q: the front printed\n%+v\nthe engine\n%+v", c.args, got, want)
		}
		if c.exec {
			execs++
		}
	}
	if runs := k.engineRuns()[before:]; len(runs) != execs {
		t.Errorf("the front ran the engine %d times, not %d (the rest through the resident): %q", len(runs), execs, runs)
	}
	// A write, as the caller's QUIRE_ACTOR.
	n := len(k.engineRuns())
	got := k.run(k.front, cwd, "", append([]string{"QUIRE_ACTOR=agent-7"}, playbook...), v, "run", "event", "step_completed", "--run", runID, "--step", "do/1")
	if got.code != 0 || !regexp.MustCompile(`^seq \d+  step_completed  `+runID+`_\d+\n$`).MatchString(got.out) || len(k.engineRuns()) != n {
		t.Fatalf("run event through the resident: %+v (engine runs %q)", got, k.engineRuns()[n:])
	}
	got = k.run(k.front, cwd, "", nil, v, "call", "list_playbook_events", "--args", `{"playbook":"finance","limit":1000}`)
	if !strings.Contains(got.out, `"caller": "agent-7"`) || strings.Contains(got.out, "mallory") {
		t.Errorf("the event's actor is not the caller's QUIRE_ACTOR: %+v", got)
	}
}
