package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeCapsuleRun writes, with plain file writes as another tool would, a
// run folder in the capsule's own form: definition.md with the core fields
// and the capsule's required front matter only (playbook naming the
// definition's uid), context.md, thread.md, run.jsonl in the minimal form
// (timestamps to the minute, no id, no seq), no run.state.json, an empty
// artifacts/ with artifacts (which git does not keep) or none, and the
// capsule's minimal index line (uid, type, path). It answers the folder's
// path in the vault.
func writeCapsuleRun(t *testing.T, dir, runID, defUID, project, binding string, steps int, artifacts bool) string {
	t.Helper()
	rel := "playbook-runs/close-" + runID + "-2026-11-30"
	abs := filepath.Join(dir, rel)
	if err := os.MkdirAll(abs, 0o755); err != nil {
		t.Fatal(err)
	}
	if artifacts {
		os.Mkdir(filepath.Join(abs, "artifacts"), 0o755)
	}
	def := fmt.Sprintf(`---
uid: %s
type: playbook-run
name: close %s
created: 2026-11-30
playbook: %s
playbook_version: "1"
member_of:
  - %s
binding: %s
started: 2026-11-30T09:00
executor: agent-9
authorized_by: ana
---

# A run another tool wrote
`, runID, runID, defUID, project, binding)
	log := fmt.Sprintf(`{"event": "run_created", "timestamp": "2026-11-30T09:00", "step": null, "playbook": "%s", "authorized_by": "ana", "detail": "Run initialized"}`+"\n", defUID)
	for i := 1; i <= steps; i++ {
		log += fmt.Sprintf(`{"event": "step_completed", "timestamp": "2026-11-30T09:%02d", "step": "do/%d", "detail": "Step %d done"}`+"\n", i, i, i)
	}
	for name, data := range map[string]string{"definition.md": def, "context.md": "# Context\n", "thread.md": "# Thread\n", "run.jsonl": log} {
		if err := os.WriteFile(filepath.Join(abs, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	idx, err := os.OpenFile(filepath.Join(dir, "vault", "00-index.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(idx, `{"uid": "%s", "type": "playbook-run", "path": "%s"}`+"\n", runID, rel)
	idx.Close()
	return rel
}

// A run folder another tool wrote in the capsule's own form, committed with
// git, is a run like any of quire's: listed, shown, its state derived, its
// definition found from its playbook uid; quire check reports only the
// state file and artifacts/ it lacks, which quire reindex and quire janitor
// derive and commit, after which check finds nothing and the run takes
// quire's writes.
func TestARunInTheCapsulesOwnForm(t *testing.T) {
	dir, v, _ := newCloseRun(t)
	var def struct{ UID string }
	_, out, _ := quire(t, "", v, "call", "get_definition", "--args", `{"playbook":"finance","type":"workflow","name":"close"}`)
	json.Unmarshal([]byte(out), &def)
	_, out, _ = quire(t, "", v, "call", "list_projects", "--args", `{}`)
	var projects []struct{ UID string }
	if json.Unmarshal([]byte(out), &projects) != nil || len(projects) != 1 || def.UID == "" {
		t.Fatalf("the definition and project: %s %+v", out, def)
	}
	const n = 12
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("0192aaaa-0000-7000-8000-%012d", i+1)
		writeCapsuleRun(t, dir, ids[i], def.UID, projects[0].UID, "playbooks/finance/definitions/workflow/close.yaml", i%3+1, i%2 == 1)
	}
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "runs written by another tool")

	code, out, errs := quire(t, "", v, "runs", "--playbook", "finance", "--limit", "100")
	if code != 0 || strings.Count(out, "\n") != n+2 || !strings.Contains(out, ids[4]+"  workflow/close  1        active") {
		t.Fatalf("runs lists the capsule's runs: %d\n%s%s", code, out, errs)
	}
	code, out, _ = quire(t, "", v, "call", "get_run", "--args", `{"playbook":"finance","run_id":"`+ids[2]+`"}`)
	var r struct {
		State, Status, Executor string
		Events                  int
		CurrentStep             string `json:"current_step"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || r.State != "active" || r.Status != "started" || r.Executor != "agent-9" || r.Events != 4 || r.CurrentStep != "do/3" {
		t.Fatalf("get_run of a capsule run: %d %s", code, out)
	}
	if code, out, _ := quire(t, "", v, "run", "show", "--playbook", "finance", "--run", ids[0]); code != 0 || !strings.Contains(out, ids[0]) || !strings.Contains(out, "do/1") {
		t.Fatalf("run show: %d %s", code, out)
	}

	// check says what each lacks, and how it is made; nothing else.
	code, out, _ = quire(t, "", v, "check")
	if code != 1 || strings.Count(out, "rule 6: the run folder lacks run.state.json; quire janitor (or quire reindex) derives it") != n ||
		strings.Count(out, "rule 6: the run folder lacks artifacts/; quire janitor (or quire reindex) makes it") != n/2 ||
		strings.Contains(out, "no such file") || strings.Contains(out, "not a definition") {
		t.Fatalf("check before the repair: %d\n%s", code, out)
	}

	// reindex derives and commits them for one half, janitor for the other
	// (a fresh clone of each).
	clone := filepath.Join(t.TempDir(), "clone")
	gitIn(t, dir, "clone", "-q", dir, clone)
	if code, out, errs := quire(t, "", v, "reindex"); code != 0 {
		t.Fatalf("reindex: %d %s %s", code, out, errs)
	}
	for _, id := range ids {
		if _, err := os.Stat(filepath.Join(dir, "playbook-runs", "close-"+id+"-2026-11-30", "run.state.json")); err != nil {
			t.Fatalf("reindex wrote no run.state.json for %s: %v", id, err)
		}
	}
	if st := gitIn(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("reindex left uncommitted: %s", st)
	}
	if code, out, _ := quire(t, "", v, "check"); code != 0 || !strings.HasSuffix(out, fmt.Sprintf("%d runs, %d events, 0 problems\n", n+1, 3+n+n*2)) {
		t.Fatalf("check after reindex: %d\n%s", code, out)
	}
	cv := "--vault=" + clone
	code, out, _ = quire(t, "", cv, "janitor")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("derived run.state.json from run.jsonl and definition.md for %d run(s) written without it", n)) {
		t.Fatalf("janitor: %d\n%s", code, out)
	}
	if code, out, _ := quire(t, "", cv, "check"); code != 0 || !strings.HasSuffix(out, "0 problems\n") {
		t.Fatalf("check after janitor: %d\n%s", code, out)
	}
	if st := gitIn(t, clone, "status", "--porcelain"); st != "" {
		t.Fatalf("janitor left uncommitted: %s", st)
	}
	// What janitor committed holds in a clone of the clone: artifacts/ too.
	again := filepath.Join(t.TempDir(), "again")
	gitIn(t, clone, "clone", "-q", clone, again)
	if code, out, _ := quire(t, "", "--vault="+again, "check"); code != 0 || !strings.HasSuffix(out, "0 problems\n") {
		t.Fatalf("check of a clone after janitor: %d\n%s", code, out)
	}

	// The run takes quire's writes: its lines written by hand keep their
	// places, the new event follows them.
	code, out, errs = quire(t, "", v, "run", "event", "step_completed", "--playbook", "finance", "--run", ids[0], "--step", "do/9", "--actor", "agent-9")
	if code != 0 || !strings.Contains(out, ids[0]+"_3") {
		t.Fatalf("an event on a capsule run: %d %s %s", code, out, errs)
	}
	if code, out, _ := quire(t, "", v, "run", "end", "succeeded", "--playbook", "finance", "--run", ids[0], "--actor", "agent-9"); code != 0 || !strings.Contains(out, "complete (succeeded)") {
		t.Fatalf("end a capsule run: %d %s", code, out)
	}
	if code, out, _ := quire(t, "", v, "check", "--history"); code != 0 || !strings.HasSuffix(out, "0 problems\n") {
		t.Fatalf("check --history: %d\n%s", code, out)
	}
}
