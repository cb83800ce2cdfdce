package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A line of the index that is not an index line (a person's note, a stray
// object without a uid) refuses no read and no write: both read past it,
// the same way, and quire check names it at its line.
func TestAGarbageLineInTheIndex(t *testing.T) {
	dir, v, runID := newCloseRun(t)
	index := filepath.Join(dir, "vault", "00-index.jsonl")
	data, _ := os.ReadFile(index)
	lines := strings.SplitAfter(string(data), "\n")
	garbage := strings.Join(lines[:2], "") + "this is not json\n" + strings.Join(lines[2:], "") + `{"type":"note","path":"x"}` + "\n"
	os.WriteFile(index, []byte(garbage), 0o644)

	if code, out, errs := quire(t, "", v, "runs", "--playbook", "finance"); code != 0 || !strings.Contains(out, runID) {
		t.Fatalf("runs past a garbage line: %d %s %s", code, out, errs)
	}
	if code, out, errs := quire(t, "", v, "call", "get_run", "--args", `{"playbook":"finance","run_id":"`+runID+`"}`); code != 0 || !strings.Contains(out, `"state": "active"`) {
		t.Fatalf("get_run past a garbage line: %d %s %s", code, out, errs)
	}
	if code, out, errs := quire(t, "", v, "call", "list_playbook_events", "--args", `{"playbook":"finance"}`); code != 0 || !strings.Contains(out, "run_created") {
		t.Fatalf("list_playbook_events past a garbage line: %d %s %s", code, out, errs)
	}
	code, out, _ := quire(t, "", v, "check")
	if code != 1 || !strings.Contains(out, "vault/00-index.jsonl:3: is not a JSON object; quire reads and writes past it") ||
		!strings.Contains(out, "vault/00-index.jsonl:6: is not an index line: it has no uid;") {
		t.Fatalf("check names the lines: %d\n%s", code, out)
	}
	// Writes read past it as reads do: a run's event, a new run.
	if code, out, errs := quire(t, "", v, "run", "event", "step_completed", "--playbook", "finance", "--run", runID, "--step", "do/1", "--actor", "agent-7"); code != 0 || !strings.Contains(out, runID+"_2") {
		t.Fatalf("a write past a garbage line: %d %s %s", code, out, errs)
	}
	_, out, _ = quire(t, "", v, "call", "list_projects", "--args", `{}`)
	project := out[strings.Index(out, `"uid": "`)+8:][:36]
	if code, out, errs := quire(t, "", v, "run", "start", "--playbook", "finance", "--name", "close", "--member-of", project, "--executor", "agent-7", "--authorized-by", "ana"); code != 0 {
		t.Fatalf("a run made past a garbage line: %d %s %s", code, out, errs)
	}
	if code, out, _ := quire(t, "", v, "runs", "--playbook", "finance"); code != 0 || strings.Count(out, "workflow/close") != 2 {
		t.Fatalf("runs after: %d %s", code, out)
	}
	// Mended, the index is whole again.
	data, _ = os.ReadFile(index)
	mended := strings.Replace(strings.Replace(string(data), "this is not json\n", "", 1), `{"type":"note","path":"x"}`+"\n", "", 1)
	os.WriteFile(index, []byte(mended), 0o644)
	if code, out, _ := quire(t, "", v, "check"); strings.Contains(out, "not a JSON object") || strings.Contains(out, "not an index line") {
		t.Fatalf("check after the mend: %d\n%s", code, out)
	}
}

// With HEAD detached (git checkout <commit>), reads answer from the files
// checked out; every write is refused, saying why and what to do, and
// quire check says so; back on the branch, writes are taken again.
func TestADetachedHead(t *testing.T) {
	dir, v, runID := newCloseRun(t)
	quire(t, "", v, "run", "event", "step_completed", "--playbook", "finance", "--run", runID, "--step", "do/1", "--actor", "agent-7")
	gitIn(t, dir, "checkout", "-q", "--detach", "HEAD~1")
	at := gitIn(t, dir, "rev-parse", "HEAD")[:12]

	if code, out, errs := quire(t, "", v, "runs", "--playbook", "finance"); code != 0 || !strings.Contains(out, runID) {
		t.Fatalf("runs on a detached HEAD: %d %s %s", code, out, errs)
	}
	code, out, errs := quire(t, "", v, "call", "get_run", "--args", `{"playbook":"finance","run_id":"`+runID+`"}`)
	if code != 0 || !strings.Contains(out, `"events": 1`) {
		t.Fatalf("get_run answers from the commit checked out: %d %s %s", code, out, errs)
	}
	if code, out, errs := quire(t, "", v, "call", "list_playbook_events", "--args", `{"playbook":"finance"}`); code != 0 || !strings.Contains(out, "run_created") {
		t.Fatalf("list_playbook_events on a detached HEAD: %d %s %s", code, out, errs)
	}
	want := "HEAD is detached (at " + at + "): quire commits only onto a branch, so it writes nothing while HEAD is detached"
	code, _, errs = quire(t, "", v, "run", "event", "step_completed", "--playbook", "finance", "--run", runID, "--step", "do/2", "--actor", "agent-7")
	if code != 1 || !strings.Contains(errs, want) || !strings.Contains(errs, "git switch <branch>") {
		t.Fatalf("a write on a detached HEAD: %d %s", code, errs)
	}
	if st := gitIn(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("the refused write changed the files: %s", st)
	}
	if code, out, _ := quire(t, "", v, "check"); code != 1 || !strings.Contains(out, ".git/HEAD: "+want) {
		t.Fatalf("check on a detached HEAD: %d %s", code, out)
	}
	gitIn(t, dir, "switch", "-q", "main")
	if code, out, errs := quire(t, "", v, "run", "event", "step_completed", "--playbook", "finance", "--run", runID, "--step", "do/2", "--actor", "agent-7"); code != 0 || !strings.Contains(out, runID+"_3") {
		t.Fatalf("a write back on the branch: %d %s %s", code, out, errs)
	}
	if code, out, _ := quire(t, "", v, "check"); code != 0 {
		t.Fatalf("check back on the branch: %d %s", code, out)
	}
}
