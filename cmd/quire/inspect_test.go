package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// quire definition inspect FILE inspects an AgentRun document without a
// vault: clean with its nodes' state keys, or refused (exit 1) with each
// issue at its pointer and line.
func TestDefinitionInspect(t *testing.T) {
	code, out, errs := quire(t, "", "definition", "inspect", "../../words/agentrun/testdata/route-fragment.json")
	if code != 0 || !strings.Contains(out, "check-migration-detail (route) -> routing: {taken: one of needs_details, ready}") ||
		!strings.Contains(out, "output report: Report against Report: matches") || !strings.Contains(out, "inspects clean") {
		t.Fatalf("clean: %d\n%s\n%s", code, out, errs)
	}
	src, _ := os.ReadFile("../../words/agentrun/testdata/evidence-gate.json")
	bad := filepath.Join(t.TempDir(), "gate.json")
	os.WriteFile(bad, []byte(strings.Replace(string(src), "Number.isFinite(p)", "Number.isFinite(Date.now())", 1)), 0o644)
	code, out, errs = quire(t, "", "definition", "inspect", bad)
	if code != 1 || !strings.Contains(out, bad+":43: /root/steps/1/code: line 4, column 56 of the code: Date is unavailable") {
		t.Fatalf("broken: %d\n%s\n%s", code, out, errs)
	}
	if code, _, _ := quire(t, "", "definition", "inspect", "../../words/agentrun/testdata/evidence-gate.input.json"); code != 1 {
		t.Errorf("a file that is no AgentRun document: exit %d", code)
	}
}
