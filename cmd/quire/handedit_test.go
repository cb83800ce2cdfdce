package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A person hand-edits an earlier, committed line of an active run's
// run.jsonl. quire check reports it before any write; the run's next write
// is refused (conflict, naming the file and the line, and what to do) and
// commits nothing; quire janitor restores the committed part from HEAD,
// keeping the edited copy in .quire/quarantine/ and the lines appended
// after it; then the run goes on and check --history proves the history
// clean: quire never committed the edit.
func TestHandEditOfACommittedLineIsRefusedBeforeQuireCommitsIt(t *testing.T) {
	t.Parallel()
	dir, v, runID := newCloseRun(t)
	event := func(step string) (int, string, string) {
		return quire(t, "", v, "run", "event", "step_completed", "--playbook", "finance", "--run", runID, "--step", step, "--actor", "agent-7")
	}
	if code, out, errs := event("do/1/a"); code != 0 {
		t.Fatalf("event: %s %s", out, errs)
	}
	m, _ := filepath.Glob(filepath.Join(dir, "playbook-runs", "close-"+runID+"-*", "run.jsonl"))
	logRel, _ := filepath.Rel(dir, m[0])
	logRel = filepath.ToSlash(logRel)
	committed, err := os.ReadFile(m[0])
	if err != nil {
		t.Fatal(err)
	}
	head := gitIn(t, dir, "rev-parse", "HEAD")

	// The hand edit: line 1's detail rewritten in place (the same length,
	// so every offset quire keeps still holds), not committed.
	edited := strings.Replace(string(committed), `"detail":"Run initialized"`, `"detail":"Run INITIALIZED"`, 1)
	if edited == string(committed) {
		t.Fatalf("no detail to edit in %s", committed)
	}
	if err := os.WriteFile(m[0], []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}

	// quire check reports it, before any write.
	_, out, _ := quire(t, "", v, "check", "--json")
	var rep checkJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("check: %v %s", err, out)
	}
	found := false
	for _, p := range rep.Problems {
		if p.Path == logRel && p.Line == 1 && strings.Contains(p.Message, "differs from the commit") {
			found = true
		}
	}
	if !found {
		t.Fatalf("quire check does not report the edited line 1 of %s: %+v", logRel, rep.Problems)
	}

	// The next write is refused and changes nothing.
	code, out, errs := event("do/2/b")
	if code != 1 {
		t.Fatalf("a write over the edited log was not refused (exit %d): %s", code, out)
	}
	for _, want := range []string{logRel, "line 1 differs from the commit (HEAD)", "Run quire janitor"} {
		if !strings.Contains(errs, want) {
			t.Errorf("the refusal does not say %q: %s", want, errs)
		}
	}
	_, out, _ = quire(t, "", v, "run", "event", "step_completed", "--playbook", "finance", "--run", runID, "--step", "do/2/b", "--actor", "agent-7", "--json")
	var refused struct{ Error struct{ Code string } }
	if json.Unmarshal([]byte(out), &refused) != nil || refused.Error.Code != "conflict" {
		t.Errorf("the refusal is not a conflict: %s", out)
	}
	if now := gitIn(t, dir, "rev-parse", "HEAD"); now != head {
		t.Errorf("HEAD moved from %s to %s: quire committed over the edit", head, now)
	}
	if data, _ := os.ReadFile(m[0]); string(data) != edited {
		t.Errorf("the refused write changed run.jsonl:\n%s", data)
	}

	// A line the person appended after the edit is kept by the janitor.
	if _, out, errs := quire(t, "", v, "janitor"); !strings.Contains(out, "repaired") || !strings.Contains(out, logRel) {
		t.Fatalf("janitor: %s %s", out, errs)
	}
	if data, _ := os.ReadFile(m[0]); string(data) != string(committed) {
		t.Fatalf("janitor did not restore the committed part:\n%s\nwant\n%s", data, committed)
	}
	var q []string
	keptEdit := false
	filepath.WalkDir(filepath.Join(dir, ".quire", "quarantine"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			q = append(q, p)
			if data, err := os.ReadFile(p); err == nil && string(data) == edited {
				keptEdit = true
			}
		}
		return nil
	})
	if !keptEdit {
		t.Errorf("the edited copy is not in .quire/quarantine: %v", q)
	}
	if code, out, errs := event("do/2/b"); code != 0 {
		t.Fatalf("event after the janitor: %s %s", out, errs)
	}
	if rep, hist := checkHistory(t, v); len(hist) != 0 || len(rep.Problems) != 0 {
		t.Fatalf("check --history after the janitor: %v %+v", hist, rep.Problems)
	}
}
