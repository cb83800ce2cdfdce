package main

import (
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
