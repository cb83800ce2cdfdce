package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run.state.json is derived: a hand edit that makes an active run
// "archived" refused every write of the run (rule 5) and quire janitor
// said nothing. quire check reports it, and the janitor makes the file
// again from run.jsonl and definition.md, after which the run goes on.
func TestAHandEditedStateIsMadeAgainByTheJanitor(t *testing.T) {
	t.Parallel()
	dir, v, run := newCloseRun(t)
	m, _ := filepath.Glob(filepath.Join(dir, "playbook-runs", "close-"+run+"-*", "run.state.json"))
	data, _ := os.ReadFile(m[0])
	edited := strings.Replace(string(data), `"state": "active"`, `"state": "archived"`, 1)
	if edited == string(data) {
		t.Fatalf("no active state in %s", data)
	}
	os.WriteFile(m[0], []byte(edited), 0o644)
	event := func() (int, string, string) {
		return quire(t, "", v, "call", "record_event", "--args", `{"playbook":"finance","run_id":"`+run+`","event":"step_completed","step":"do/1/a","actor":"agent-7"}`)
	}
	if code, _, _ := event(); code == 0 {
		t.Fatalf("the edited state was not trusted: nothing to repair")
	}
	if _, out, _ := quire(t, "", v, "check", "--json"); !strings.Contains(out, "run.state.json") {
		t.Errorf("quire check does not report the state file: %s", out)
	}
	_, out, errs := quire(t, "", v, "janitor")
	if !strings.Contains(out, "run.state.json again from run.jsonl") {
		t.Fatalf("janitor: %s %s", out, errs)
	}
	if code, out, errs := event(); code != 0 {
		t.Fatalf("event after the janitor: %s %s", out, errs)
	}
}

// quire janitor committed a person's edit of quire.yaml as vault-janitor,
// and a token's write committed it under quire's name. A change quire did
// not make is the person's: quire check and quire janitor name it and
// leave it, a token's write is refused until it is committed or taken
// back, and quire's own uncommitted writes are still committed.
func TestAPersonsEditIsTheirs(t *testing.T) {
	t.Parallel()
	dir, v, _ := newCloseRun(t)
	cfg := filepath.Join(dir, "quire.yaml")
	data, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, append(data, []byte("# tried by ana\n")...), 0o644)
	head := gitIn(t, dir, "rev-parse", "HEAD")
	const words = "and not committed, and quire did not write it (a person's edit): commit it with git under your name (git commit quire.yaml)"
	if code, out, _ := quire(t, "", v, "check"); code != 1 || !strings.Contains(out, "quire.yaml: modified "+words) {
		t.Fatalf("check: %d %s", code, out)
	}
	if code, out, errs := quire(t, "", v, "janitor"); !strings.Contains(out+errs, "quire.yaml: modified "+words) {
		t.Fatalf("janitor: %d %s %s", code, out, errs)
	}
	if now := gitIn(t, dir, "rev-parse", "HEAD"); now != head {
		t.Fatalf("janitor committed: %s", gitIn(t, dir, "show", "--stat", "HEAD"))
	}
	code, _, errs := quire(t, "", v, "token", "create", "--principal", "ana", "--scope", "playbook:write", "--expires", "90d")
	if code == 0 || !strings.Contains(errs, "quire.yaml has a change that is not committed, and quire did not make it") {
		t.Fatalf("token create over a person's edit: %d %s", code, errs)
	}
	if st := gitIn(t, dir, "status", "--porcelain"); !strings.Contains(st, "M quire.yaml") {
		t.Fatalf("the person's edit: %s", st)
	}
	gitIn(t, dir, "commit", "-qam", "ana's note")
	if code, _, errs := quire(t, "", v, "token", "create", "--principal", "ana", "--scope", "playbook:write", "--expires", "90d"); code != 0 {
		t.Fatalf("token create after the commit: %s", errs)
	}
	if who := gitIn(t, dir, "log", "-1", "--format=%an", "--", "quire.yaml"); who != "quire" {
		t.Fatalf("the token's commit is %s's", who)
	}
}

// run.state.json is written at a boundary without an fsync (it is derived
// from run.jsonl, which is durable), so a machine that stops may leave it
// as it was before the boundary, or empty. Either way the run reads as its
// log says, and its next event takes the next id and seq; quire check
// reports neither as a hand edit.
func TestAStateFileLeftBehindIsCaughtUp(t *testing.T) {
	t.Parallel()
	dir, v, run := newCloseRun(t)
	event := func(step string) map[string]any {
		t.Helper()
		code, out, errs := quire(t, "", v, "call", "record_event", "--args", `{"playbook":"finance","run_id":"`+run+`","event":"step_completed","step":"`+step+`","actor":"agent-7"}`)
		if code != 0 {
			t.Fatalf("record_event %s: %s %s", step, out, errs)
		}
		var m map[string]any
		json.Unmarshal([]byte(out), &m)
		return m
	}
	getRun := func() map[string]any {
		t.Helper()
		code, out, errs := quire(t, "", v, "call", "get_run", "--args", `{"playbook":"finance","run_id":"`+run+`"}`)
		if code != 0 {
			t.Fatalf("get_run: %s %s", out, errs)
		}
		var m map[string]any
		json.Unmarshal([]byte(out), &m)
		return m
	}
	m, _ := filepath.Glob(filepath.Join(dir, "playbook-runs", "close-"+run+"-*", "run.state.json"))
	event("do/1/a")
	before, err := os.ReadFile(m[0])
	if err != nil {
		t.Fatal(err)
	}
	for i, left := range [][]byte{before, nil} {
		k := 2 + 2*i
		event(fmt.Sprintf("do/%d/a", k))
		want := getRun()
		if err := os.WriteFile(m[0], left, 0o644); err != nil { // what the stop left
			t.Fatal(err)
		}
		got := getRun()
		for _, field := range []string{"events", "last_seq", "current_step", "status", "state"} {
			if fmt.Sprint(got[field]) != fmt.Sprint(want[field]) {
				t.Errorf("with the state file as a stop left it (%d bytes), get_run says %s %v, not %v", len(left), field, got[field], want[field])
			}
		}
		next := event(fmt.Sprintf("do/%d/a", k+1))
		if id, wantID := fmt.Sprint(next["id"]), fmt.Sprintf("%s_%v", run, want["events"].(float64)+1); id != wantID {
			t.Errorf("the next event took id %s, not %s", id, wantID)
		}
		if seq, wantSeq := next["seq"].(float64), want["last_seq"].(float64)+1; seq != wantSeq {
			t.Errorf("the next event took seq %v, not %v", seq, wantSeq)
		}
		if _, out, _ := quire(t, "", v, "check", "--json"); strings.Contains(out, "run.state.json") {
			t.Errorf("quire check reports the state file the boundary wrote again: %s", out)
		}
	}
}
