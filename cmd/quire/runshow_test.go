package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// run show says what the run was asked (its input, as run start gave it)
// and, while it is paused, why (the reason run transition gave); get_run
// answers both, and the pause's reason goes once the run resumes.
func TestRunShowInputAndPause(t *testing.T) {
	_, v, project := newCLIVault(t)
	quire(t, "", v, "call", "create_playbook", "--args", `{"playbook":"finance","name":"Finance"}`)
	quire(t, "", v, "call", "create_definition", "--args", `{"playbook":"finance","type":"workflow","name":"close","source":"document:\n  name: close\n"}`)
	code, out, errs := quire(t, "", v, "run", "start", "--playbook", "finance", "--name", "close", "--member-of", project,
		"--executor", "agent-7", "--authorized-by", "ana", "--input", `{ "month": "2026-10",  "books": ["ar", "ap"] }`, "--json")
	var r struct {
		RunID string `json:"run_id"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("run start: %d %s %s", code, out, errs)
	}
	show := func() string {
		t.Helper()
		code, out, errs := quire(t, "", v, "run", "show", "--playbook", "finance", "--run", r.RunID)
		if code != 0 {
			t.Fatalf("run show: %d %s %s", code, out, errs)
		}
		return out
	}
	if out := show(); !strings.Contains(out, "\ninput          {\"month\":\"2026-10\",\"books\":[\"ar\",\"ap\"]}\n") || strings.Contains(out, "paused for") {
		t.Errorf("run show of an active run:\n%s", out)
	}
	if code, out, errs := quire(t, "", v, "run", "transition", "paused", "--reason", "waiting for the bank statement",
		"--playbook", "finance", "--run", r.RunID, "--actor", "agent-7"); code != 0 {
		t.Fatalf("run transition paused: %d %s %s", code, out, errs)
	}
	if out := show(); !strings.Contains(out, "\npaused for     waiting for the bank statement\n") || !strings.Contains(out, "state          paused (started)") {
		t.Errorf("run show of a paused run:\n%s", out)
	}
	_, out, _ = quire(t, "", v, "call", "get_run", "--args", `{"playbook":"finance","run_id":"`+r.RunID+`"}`)
	var got struct {
		Input  map[string]any
		Paused map[string]any
	}
	if json.Unmarshal([]byte(out), &got) != nil || got.Input["month"] != "2026-10" || got.Paused["reason"] != "waiting for the bank statement" {
		t.Errorf("get_run: %s", out)
	}
	quire(t, "", v, "run", "transition", "active", "--playbook", "finance", "--run", r.RunID, "--actor", "agent-7")
	if out := show(); strings.Contains(out, "paused for") || !strings.Contains(out, "\ninput ") {
		t.Errorf("run show of a resumed run:\n%s", out)
	}
}
