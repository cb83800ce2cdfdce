package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"quire/internal/gittest"
)

// Nothing goes into git that git refuses: a NUL (and text that is not
// UTF-8) in a detail, a step, a reason or a name is kept exact in the
// files and written as U+2400 in the commit message, so git fsck --strict
// passes and a host that checks what it receives takes the push.
func TestHostileTextMakesCommitsGitAccepts(t *testing.T) {
	t.Parallel()
	dir, v, project := newCLIVault(t)
	quire(t, "", v, "call", "create_playbook", "--args", `{"playbook":"finance","name":"Fin\u0000ance"}`)
	quire(t, "", v, "call", "create_definition", "--args", `{"playbook":"finance","type":"workflow","name":"close","source":"document:\n  name: close\n"}`)
	code, out, errs := quire(t, "", v, "call", "run_definition", "--args",
		`{"playbook":"finance","type":"workflow","name":"close","member_of":["`+project+`"],"executor":"agent-7","authorized_by":"ana"}`)
	var r struct {
		RunID string `json:"run_id"`
		Path  string `json:"path"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("run_definition: %d %s %s", code, out, errs)
	}
	for _, args := range []string{
		`{"playbook":"finance","run_id":"` + r.RunID + `","event":"step_completed","step":"do/1/a\u0000b","detail":"held\u0000back \udc80","actor":"agent-7"}`,
		`{"playbook":"finance","run_id":"` + r.RunID + `","event":"pause_started","detail":"wait\u0000","actor":"agent-7"}`,
	} {
		if code, out, errs := quire(t, "", v, "call", "record_event", "--args", args); code != 0 {
			t.Fatalf("record_event %s: %s %s", args, out, errs)
		}
	}
	quire(t, "", v, "call", "make_comment", "--args", `{"playbook":"finance","address":"playbooks/finance","text":"nul\u0000here","author":"an\u0000a"}`)
	if out, err := gittest.Fsck(dir, "--strict"); err != nil {
		t.Fatalf("git fsck --strict: %v\n%s", err, out)
	}
	if log := gitIn(t, dir, "log", "--format=%B"); !strings.Contains(log, "held\u2400back") {
		t.Errorf("the commit message does not show the NUL as U+2400:\n%s", log)
	}
	data, _ := os.ReadFile(filepath.Join(dir, r.Path, "run.jsonl"))
	if !strings.Contains(string(data), `held\u0000back`) {
		t.Errorf("run.jsonl does not keep the NUL exact:\n%s", data)
	}
	bare := filepath.Join(t.TempDir(), "host.git")
	gitIn(t, filepath.Dir(bare), "init", "-q", "--bare", bare)
	gitIn(t, bare, "config", "receive.fsckObjects", "true")
	if out, err := exec.Command("git", "-C", dir, "push", "-q", bare, "main").CombinedOutput(); err != nil {
		t.Fatalf("a push to a host with receive.fsckObjects: %v\n%s", err, out)
	}
}

// An event's time before 1970 (the zero time 0001-01-01T00:00:00Z among
// them, which was taken for a time left out and replaced by the clock) is
// refused at /time.
func TestATimeBefore1970IsRefused(t *testing.T) {
	t.Parallel()
	_, v, run := newCloseRun(t)
	for _, at := range []string{"0001-01-01T00:00:00Z", "1969-12-31T23:59:59Z"} {
		code, _, errs := quire(t, "", v, "call", "record_event", "--args",
			`{"playbook":"finance","run_id":"`+run+`","event":"step_completed","step":"do/1/a","actor":"agent-7","time":"`+at+`"}`)
		if code != 1 || !strings.Contains(errs, at+" is before 1970-01-01T00:00:00Z") {
			t.Errorf("time %s: exit %d %s", at, code, errs)
		}
	}
	if code, out, errs := quire(t, "", v, "call", "record_event", "--args",
		`{"playbook":"finance","run_id":"`+run+`","event":"step_completed","step":"do/1/a","actor":"agent-7","time":"1970-01-01T00:00:00Z"}`); code != 1 || !strings.Contains(errs, "before the run's previous event") {
		t.Errorf("1970 itself is a time, judged by the run's order: %d %s %s", code, out, errs)
	}
}
