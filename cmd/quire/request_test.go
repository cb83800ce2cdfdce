package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --request-id (and request_id in quire call's arguments) makes a retried
// command answer the first answer and write nothing, across processes.
func TestCLIRequestID(t *testing.T) {
	dir, v, project := newCLIVault(t)
	quire(t, "", v, "call", "create_playbook", "--args", `{"playbook":"finance","name":"Finance"}`)
	quire(t, "", v, "call", "create_definition", "--args", `{"playbook":"finance","type":"workflow","name":"close","source":"document:\n  name: close\n"}`)
	start := []string{v, "run", "start", "--playbook", "finance", "--name", "close", "--member-of", project,
		"--executor", "agent-7", "--authorized-by", "ana", "--json", "--request-id", "start-1"}
	var r1, r2 struct {
		RunID string `json:"run_id"`
	}
	_, out1, _ := quire(t, "", start...)
	_, out2, _ := quire(t, "", start...)
	if json.Unmarshal([]byte(out1), &r1) != nil || json.Unmarshal([]byte(out2), &r2) != nil || r1.RunID == "" || r1.RunID != r2.RunID {
		t.Fatalf("two starts with one request id:\n%s\n%s", out1, out2)
	}
	ev := []string{v, "run", "event", "step_completed", "--playbook", "finance", "--run", r1.RunID, "--step", "do/1", "--actor", "agent-7", "--request-id", "ev-1"}
	code1, e1, _ := quire(t, "", ev...)
	code2, e2, _ := quire(t, "", ev...)
	args := `{"playbook":"finance","run_id":"` + r1.RunID + `","event":"step_completed","step":"do/1","actor":"agent-7","request_id":"ev-1"}`
	code3, e3, _ := quire(t, "", v, "call", "record_event", "--args", args)
	if code1 != 0 || code2 != 0 || code3 != 0 || e1 != e2 || !strings.Contains(e3, `"seq": `+strings.Fields(e1)[1]) {
		t.Fatalf("repeats answered:\n%s\n%s\n%s", e1, e2, e3)
	}
	runs, _ := filepath.Glob(filepath.Join(dir, "playbook-runs", "close-*"))
	if len(runs) != 1 {
		t.Fatalf("%d run folders", len(runs))
	}
	data, _ := os.ReadFile(filepath.Join(runs[0], "run.jsonl"))
	if n := strings.Count(string(data), "\n"); n != 2 {
		t.Fatalf("run.jsonl holds %d lines, want 2:\n%s", n, data)
	}
}
