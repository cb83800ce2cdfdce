package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"quire/internal/crashpoint"
	"quire/ledger"
	"quire/words/refusal"
)

// quireProcess runs quire in a process of its own, with extra environment.
func quireProcess(env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "QUIRE_TEST_AS_QUIRE=1"), env...)
	return cmd
}

func killed(err error) bool {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return true
		}
	}
	return false
}

// crashVault is the vault every crash starts from: a project, a playbook,
// a definition and a run with some events, each of them acknowledged.
type crashVault struct {
	dir, project, run string
	acked             []string // ids of the run's acknowledged events
}

func newCrashVault(t *testing.T) *crashVault {
	dir, v, project := newCLIVault(t)
	cv := &crashVault{dir: dir, project: project}
	mustQuire := func(op, args string) map[string]any {
		t.Helper()
		code, out, errs := quire(t, "", v, "call", op, "--args", args)
		if code != 0 {
			t.Fatalf("%s: %s %s", op, out, errs)
		}
		var m map[string]any
		json.Unmarshal([]byte(out), &m)
		return m
	}
	mustQuire("create_playbook", `{"playbook":"finance","name":"Finance"}`)
	mustQuire("create_definition", `{"playbook":"finance","type":"workflow","name":"close","source":"document:\n  name: close\n"}`)
	r := mustQuire("run_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"close","member_of":[%q],"executor":"agent-7","authorized_by":"ana"}`, project))
	cv.run = r["run_id"].(string)
	cv.acked = append(cv.acked, cv.run+"_1")
	for _, ev := range []string{`"event":"step_started","step":"do/1/a"`, `"event":"step_completed","step":"do/1/a"`, `"event":"step_started","step":"do/2/b"`} {
		e := mustQuire("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,%s,"actor":"agent-7"}`, cv.run, ev))
		cv.acked = append(cv.acked, e["id"].(string))
	}
	return cv
}

// copyTo copies the vault to a fresh folder.
func (cv *crashVault) copyTo(t *testing.T) string {
	dst := filepath.Join(t.TempDir(), "vault")
	if out, err := exec.Command("cp", "-a", cv.dir, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	return dst
}

type crashOp struct {
	name, op, args string
	stride         int // make test kills it at every stride-th step; make test-long at every one
}

func (cv *crashVault) ops() []crashOp {
	run := fmt.Sprintf(`"playbook":"finance","run_id":%q`, cv.run)
	return []crashOp{
		{"record_event at a boundary", "record_event", `{` + run + `,"event":"step_completed","step":"do/2/b","actor":"agent-7"}`, 9},
		{"record_event between boundaries", "record_event", `{` + run + `,"event":"step_started","step":"do/3/c","actor":"agent-7"}`, 4},
		{"run_definition", "run_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"close","member_of":[%q],"executor":"agent-7","authorized_by":"ana"}`, cv.project), 17},
		{"end_run", "end_run", `{` + run + `,"status":"succeeded","actor":"agent-7"}`, 21},
		{"put_artifact", "put_artifact", `{` + run + `,"name":"report.txt","content":"the report"}`, 5},
		{"make_comment", "make_comment", fmt.Sprintf(`{"playbook":"finance","address":"finance/runs/%s","text":"looks right","author":"ana"}`, cv.run), 27},
	}
}

// crashAt kills a quire call of op at its nth file-changing step (or lets
// it finish when it has fewer), then checks what is left: the next write
// goes through, every acknowledged write is there once, quire janitor
// leaves quire check clean and git status clean. It reports whether the
// call was killed.
func (cv *crashVault) crashAt(t *testing.T, op crashOp, n int) bool {
	t.Helper()
	dir := cv.copyTo(t)
	cmd := quireProcess([]string{fmt.Sprintf("%s=%d", crashpoint.Env, n)}, "--vault", dir, "call", op.op, "--args", op.args)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	wasKilled := killed(err)
	if err != nil && !wasKilled {
		t.Fatalf("%s: quire call failed without a kill: %v\n%s", op.name, err, out.String())
	}
	where := fmt.Sprintf("%s killed at step %d", op.name, n)
	if !wasKilled {
		where = op.name + " (not killed)"
	}

	// git's lock files the kill left.
	var locks []string
	for _, lock := range []string{"index.lock", "refs/heads/main.lock"} {
		if _, err := os.Stat(filepath.Join(dir, ".git", lock)); err == nil {
			locks = append(locks, lock)
		}
	}

	l, err := ledger.Open(dir)
	if err != nil {
		t.Fatalf("%s: open: %v", where, err)
	}
	defer l.Close()
	var logBuf bytes.Buffer
	l.SetLogger(slog.New(slog.NewTextHandler(&logBuf, nil)))
	call := func(op, args string) (any, error) { return l.Call(context.Background(), op, json.RawMessage(args)) }

	// The next write: a boundary of the run the acknowledged events are in
	// (or, once it ended, a comment).
	next := fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"milestone_fired","detail":"next","actor":"agent-7"}`, cv.run)
	nextOp := "record_event"
	if op.op == "end_run" && !wasKilled {
		nextOp, next = "make_comment", fmt.Sprintf(`{"playbook":"finance","address":"finance/runs/%s","text":"next","author":"ana"}`, cv.run)
	}
	if _, err := call(nextOp, next); err != nil {
		// A run the kill left ended is the one other answer a milestone may get.
		if r, ok := refusal.As(err); !ok || r.Code != refusal.Conflict {
			t.Fatalf("%s: the next write failed (wedged?): %v\nlog: %s", where, err, logBuf.String())
		}
	}

	for _, lock := range locks {
		if _, err := os.Stat(filepath.Join(dir, ".git", lock)); err == nil || !strings.Contains(logBuf.String(), "removed .git/"+lock) {
			t.Fatalf("%s: the dead writer's .git/%s: still there (%v), or not in the log:\n%s", where, lock, err == nil, logBuf.String())
		}
	}

	// Every acknowledged event of the run, once each.
	page, err := call("list_playbook_events", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"limit":1000}`, cv.run))
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	count := map[string]int{}
	for _, ev := range page.(*ledger.EventPage).Events {
		count[ev.ID]++
	}
	for _, id := range cv.acked {
		if count[id] != 1 {
			t.Fatalf("%s: acknowledged event %s is there %d times", where, id, count[id])
		}
	}
	if !wasKilled && op.op == "record_event" && len(count) < len(cv.acked)+1 {
		t.Fatalf("%s: the acknowledged call's event is missing", where)
	}

	rep, err := l.Repair()
	if err != nil {
		t.Fatalf("%s: janitor: %v", where, err)
	}
	if len(rep.Left) > 0 {
		t.Fatalf("%s: janitor left %v (did %v)", where, rep.Left, rep.Repaired)
	}
	check, err := l.Check()
	if err != nil {
		t.Fatalf("%s: check: %v", where, err)
	}
	if len(check.Problems) > 0 {
		t.Fatalf("%s: check after janitor: %v\njanitor did %v", where, check.Problems, rep.Repaired)
	}
	g := exec.Command("git", "status", "--porcelain")
	g.Dir = dir
	if st, err := g.CombinedOutput(); err != nil || len(st) > 0 {
		t.Fatalf("%s: git status not clean: %v\n%s", where, err, st)
	}
	// The history rebuilt from the files numbers every event once (a run
	// folder left outside the index once made reindex repeat a seq).
	if op.op != "run_definition" {
		return wasKilled
	}
	if err := l.Reindex(); err != nil {
		t.Fatalf("%s: reindex: %v", where, err)
	}
	if check, err := l.Check(); err != nil || len(check.Problems) > 0 {
		t.Fatalf("%s: check after reindex: %v %v", where, err, check.Problems)
	}
	return wasKilled
}

// A quire call killed at each file-changing step of each writing
// operation never wedges the vault and loses or repeats no acknowledged
// write. make test kills each at a sample of its steps (every stride-th);
// QUIRE_TEST_LONG=1 at every one.
func TestKilledAtEveryStep(t *testing.T) {
	t.Parallel()
	cv := newCrashVault(t)
	long := os.Getenv("QUIRE_TEST_LONG") != ""
	for _, op := range cv.ops() {
		stride := op.stride
		if long {
			stride = 1
		}
		steps := 0
		for n := 0; ; n++ {
			if n%stride != 0 && n > 0 {
				continue
			}
			if !cv.crashAt(t, op, n) {
				break
			}
			steps = n
		}
		t.Logf("%s: killed at %d of its steps (every %d)", op.name, steps/stride+1, stride)
	}
}

// quire check sees what stopped writers and people leave in a vault, and
// quire janitor repairs what needs no person and says what it did.
func TestCheckAndJanitorSeeWhatWentWrong(t *testing.T) {
	t.Parallel()
	cv := newCrashVault(t)
	dir, v := cv.dir, "--vault="+cv.dir
	runs, _ := filepath.Glob(filepath.Join(dir, "playbook-runs", "close-*"))
	run := runs[0]
	os.MkdirAll(filepath.Join(dir, "playbook-runs", ".new-close-x", "artifacts"), 0o755)
	os.WriteFile(filepath.Join(run, ".run.state.json.tmp123"), []byte("{"), 0o644)
	os.Symlink("/etc/passwd", filepath.Join(dir, "playbooks", "finance", "secret"))
	os.WriteFile(filepath.Join(dir, ".git", "index.lock"), nil, 0o644)
	// A boundary whose commit did not happen: its line and state are written.
	code, out, errs := quire(t, "", v, "call", "record_event", "--args",
		fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_completed","step":"do/2/b","actor":"agent-7"}`, cv.run))
	if code != 0 || !strings.Contains(out, `"committed": false`) {
		t.Fatalf("a write under another program's git lock: %d %s %s", code, out, errs)
	}
	// The history's derived state loses its last record.
	seq := filepath.Join(dir, ".quire", "history", "finance.seq")
	if fi, err := os.Stat(seq); err != nil || os.Truncate(seq, fi.Size()-16) != nil {
		t.Fatalf("history: %v", err)
	}
	code, out, _ = quire(t, "", v, "check")
	for _, want := range []string{
		".quire/history/finance.seq: it holds",
		".git/index.lock: git's lock file is left here",
		"playbook-runs/.new-close-x: a staging folder",
		".run.state.json.tmp123: a temporary file",
		"playbooks/finance/secret: a symbolic link",
		"changed at a boundary that was not committed",
		".quire/writing: a writer",
	} {
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("check lacks %q: %d\n%s", want, code, out)
		}
	}
	os.Remove(filepath.Join(dir, ".git", "index.lock"))
	os.Remove(filepath.Join(dir, "playbooks", "finance", "secret"))
	code, out, errs = quire(t, "", v, "janitor")
	for _, want := range []string{
		"repaired: removed the staging folder playbook-runs/.new-close-x",
		"repaired: removed the temporary file " + strings.TrimPrefix(run, dir+"/") + "/.run.state.json.tmp123",
		"repaired: committed " + strings.TrimPrefix(run, dir+"/"),
		"repaired: rebuilt the history of finance from the files",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("janitor lacks %q: %d\n%s\n%s", want, code, out, errs)
		}
	}
	if code, out, _ := quire(t, "", v, "check"); code != 0 {
		t.Fatalf("check after janitor: %s", out)
	}
	g := exec.Command("git", "status", "--porcelain")
	g.Dir = dir
	if st, _ := g.CombinedOutput(); len(st) > 0 {
		t.Fatalf("git status: %s", st)
	}
}
