package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// quire reindex makes the runs' facts again (.quire/runs), complete
// through HEAD, so that the first filtered list_runs after it reads only
// the runs it answers, not every run under the vault's lock.
func TestReindexMakesTheRunsFacts(t *testing.T) {
	dir, v, runID := newCloseRun(t)
	if code, out, errs := quire(t, "", v, "reindex"); code != 0 {
		t.Fatalf("reindex: %s %s", out, errs)
	}
	head, err := os.ReadFile(filepath.Join(dir, ".quire", "runs", "head"))
	if err != nil || strings.TrimSpace(string(head)) != gitIn(t, dir, "rev-parse", "HEAD") {
		t.Fatalf("the facts' head after reindex: %q %v, HEAD %s", head, err, gitIn(t, dir, "rev-parse", "HEAD"))
	}
	facts, _ := os.ReadFile(filepath.Join(dir, ".quire", "runs", "facts.jsonl"))
	if !strings.Contains(string(facts), `"uid":"`+runID+`","status":"started","state":"active"`) {
		t.Fatalf("facts.jsonl after reindex: %s", facts)
	}
	if _, err := os.Stat(filepath.Join(dir, ".quire", "runs", "facts.jsonl.new")); !os.IsNotExist(err) {
		t.Errorf("the facts' temporary file is left: %v", err)
	}
	code, out, _ := quire(t, "", v, "call", "list_runs", "--args", `{"playbook":"finance","state":"active"}`)
	if code != 0 || !strings.Contains(out, runID) {
		t.Errorf("list_runs state active after reindex: %d %s", code, out)
	}
}
