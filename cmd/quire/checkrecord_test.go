package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// quire check --history does not take its record's word: a record whose
// problems were emptied by hand (its digest kept, or removed as well) no
// longer matches what it covers, and the history is proved again, the
// violation it hid reported at its commit as before.
func TestCheckHistoryRecordIsCheckedAgainstWhatItCovers(t *testing.T) {
	dir, v, runID := newCloseRun(t)
	quire(t, "", v, "run", "event", "step_completed", "--playbook", "finance", "--run", runID, "--step", "do/1", "--actor", "agent-7")
	runs, _ := filepath.Glob(filepath.Join(dir, "playbook-runs", "close-*"))
	rel, _ := filepath.Rel(dir, filepath.Join(runs[0], "run.jsonl"))
	bad := editCommit(t, dir, filepath.ToSlash(rel), func(s string) string { return strings.Replace(s, `"do/1"`, `"do/X"`, 1) })
	_, hist := checkHistory(t, v)
	if len(hist) != 1 || !strings.HasPrefix(hist[0], bad+" "+filepath.ToSlash(rel)+":2: ") {
		t.Fatalf("the violation: %v", hist)
	}
	record := filepath.Join(dir, ".quire", "check-history.json")
	edit := func(change func(map[string]any)) {
		data, err := os.ReadFile(record)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		change(m)
		data, _ = json.Marshal(m)
		os.WriteFile(record, data, 0o644)
	}
	for name, change := range map[string]func(map[string]any){
		"its problems emptied":         func(m map[string]any) { m["problems"] = []any{} },
		"its problems and digest gone": func(m map[string]any) { m["problems"] = []any{}; delete(m, "digest") },
	} {
		edit(change)
		rep, hist := checkHistory(t, v)
		if len(hist) != 1 || !strings.HasPrefix(hist[0], bad+" ") || rep.History.Note == "" || !strings.Contains(rep.History.Note, "does not match what it says it covers") {
			t.Fatalf("a record with %s: %+v %v", name, rep.History, hist)
		}
		// The record written again holds the problem, and is taken.
		rep, hist = checkHistory(t, v)
		if len(hist) != 1 || rep.History.Commits != 0 || rep.History.Note != "" {
			t.Fatalf("the record made again, after %s: %+v %v", name, rep.History, hist)
		}
	}
	code, out, _ := quire(t, "", v, "check", "--history")
	if code != 1 || !strings.Contains(out, "commit "+bad[:12]+": "+filepath.ToSlash(rel)+":2: ") {
		t.Fatalf("check --history: %d %s", code, out)
	}
}
