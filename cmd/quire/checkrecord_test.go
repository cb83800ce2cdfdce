package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
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

// quire check counts each playbook's seqs: lines whose seqs were edited
// by hand past the count of the playbook's events are named, in the
// words and order the check has always given, from the record's check
// and the full one alike; a seq taken twice places its line as one
// without a seq, and leaves no gap.
func TestCheckNamesTheSeqsBeyondTheHistory(t *testing.T) {
	dir, v, runID := newCloseRun(t)
	for _, step := range []string{"do/1", "do/2", "do/3"} {
		quire(t, "", v, "run", "event", "step_completed", "--playbook", "finance", "--run", runID, "--step", step, "--actor", "agent-7")
	}
	if code, out, errs := quire(t, "", v, "check"); code != 0 {
		t.Fatalf("check before the edit: %s %s", out, errs)
	}
	runs, _ := filepath.Glob(filepath.Join(dir, "playbook-runs", "close-*"))
	log := filepath.Join(runs[0], "run.jsonl")
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("run.jsonl: %q", data)
	}
	seqOf := regexp.MustCompile(`"seq":\d+`)
	// The second and third lines' seqs: one past a dense set of bits, one
	// far past it; the fourth's is the first's.
	first := seqOf.FindString(lines[0])
	lines[1] = seqOf.ReplaceAllString(lines[1], `"seq":70`)
	lines[2] = seqOf.ReplaceAllString(lines[2], `"seq":20000000000`)
	lines[3] = seqOf.ReplaceAllString(lines[3], first)
	if first == "" || !strings.Contains(lines[2], `"seq":20000000000`) {
		t.Fatalf("no seq to edit: %q", data)
	}
	os.WriteFile(log, []byte(strings.Join(lines, "")+"\n"), 0o644)
	for _, args := range [][]string{{"check"}, {"check", "--full"}} {
		code, out, errs := quire(t, "", append([]string{v}, args...)...)
		if code != 1 || !strings.Contains(out+errs, "the history's seq has gaps: ") || !strings.Contains(out+errs, " events, but seq 20000000000, 70 beyond them") {
			t.Errorf("quire %s: %d\n%s%s", strings.Join(args, " "), code, out, errs)
		}
	}
}

// quire check names a file of HEAD's tree whose blob is gone from
// .git/objects, whether the vault's objects are loose or packed, and says
// nothing of one git packed.
func TestCheckNamesABlobMissingFromTheObjects(t *testing.T) {
	dir, v, _ := newCloseRun(t)
	runs, _ := filepath.Glob(filepath.Join(dir, "playbook-runs", "close-*"))
	rel, _ := filepath.Rel(dir, filepath.Join(runs[0], "thread.md"))
	rel = filepath.ToSlash(rel)
	blob := gitIn(t, dir, "rev-parse", "HEAD:"+rel)
	want := rel + ": its blob " + blob + " in HEAD's tree is missing from .git/objects"
	unpackFresh(t, dir) // the blob loose, where one file can go
	loose := filepath.Join(dir, ".git", "objects", blob[:2], blob[2:])
	data, err := os.ReadFile(loose)
	if err != nil {
		t.Fatalf("the blob is not loose: %v", err)
	}
	os.Remove(loose)
	for _, args := range [][]string{{"check"}, {"check", "--full"}} {
		if code, out, _ := quire(t, "", append([]string{v}, args...)...); code != 1 || !strings.Contains(out, want) {
			t.Fatalf("quire %v with the loose blob gone: %d\n%s", args, code, out)
		}
	}
	os.WriteFile(loose, data, 0o444)
	gitIn(t, dir, "repack", "-a", "-d", "-q")
	gitIn(t, dir, "prune-packed")
	if _, err := os.Stat(loose); err == nil {
		t.Fatal("git left the blob loose")
	}
	if code, out, errs := quire(t, "", v, "check", "--full"); code != 0 {
		t.Fatalf("quire check --full with the blob packed: %d\n%s%s", code, out, errs)
	}
}

// quire check says, in its words, how a run.state.json edited by hand
// disagrees with definition.md and run.jsonl, and warns of the steps a
// run recorded that its pinned document does not have: the same from the
// check that reads what changed and from the full one.
func TestCheckSaysHowARunsStateDisagrees(t *testing.T) {
	dir, v, runID := newCloseRunOf(t, "document:\n  name: close\ndo:\n  - work:\n      set:\n        done: true\n")
	for _, step := range []string{"do/0/work", "do/9/nothing"} {
		quire(t, "", v, "run", "event", "step_completed", "--playbook", "finance", "--run", runID, "--step", step, "--actor", "agent-7")
	}
	runs, _ := filepath.Glob(filepath.Join(dir, "playbook-runs", "close-*"))
	rel, _ := filepath.Rel(dir, filepath.Join(runs[0], "run.state.json"))
	rel = filepath.ToSlash(rel)
	statePath := filepath.Join(runs[0], "run.state.json")
	committed, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	json.Unmarshal(committed, &st)
	logBytes := int(st["log_bytes"].(float64))
	warning := "warning: " + path.Dir(rel) + "/run.jsonl: records steps its pinned document (workflow/close version 1) does not have: do/9/nothing; its steps are do/0/work"
	check := func(name string) string {
		t.Helper()
		var said string
		for _, args := range [][]string{{"check"}, {"check", "--full"}} {
			_, out, _ := quire(t, "", append([]string{v}, args...)...)
			if !strings.Contains(out, warning) {
				t.Fatalf("%s: quire %v lacks the warning %q:\n%s", name, args, warning, out)
			}
			if said != "" && out != said {
				t.Fatalf("%s: quire check and quire check --full differ:\n%s\n%s", name, said, out)
			}
			said = out
		}
		return said
	}
	if out := check("as quire wrote it"); strings.Contains(out, rel) {
		t.Fatalf("the state as quire wrote it: %s", out)
	}
	suffix := " (a hand edit? quire derives the state from run.jsonl and definition.md, and rewrites this file at the run's next boundary)"
	for _, c := range []struct {
		name string
		edit func(map[string]any)
		says string
	}{
		{"log_bytes mid-line", func(m map[string]any) { m["log_bytes"] = logBytes - 3 }, fmt.Sprintf("says log_bytes %d, which is not the end of a line of run.jsonl", logBytes-3)},
		{"log_bytes past the log", func(m map[string]any) { m["log_bytes"] = logBytes + 1000 }, fmt.Sprintf("says log_bytes %d, which is not the end of a line of run.jsonl", logBytes+1000)},
		{"events", func(m map[string]any) { m["events"] = 7 }, fmt.Sprintf("says 7 events up to seq %v; its log_bytes of run.jsonl hold 3 up to seq %v", st["last_seq"], st["last_seq"])},
		{"status", func(m map[string]any) { m["status"] = "failed" }, "says state active, status failed; the events say active, started"},
		{"executor", func(m map[string]any) { m["executor"] = "agent-8" }, "says executor agent-8, authorized_by ana; definition.md says agent-7, ana"},
		{"steps", func(m map[string]any) { m["steps_seen"] = []string{"do/0/work"} }, "says other steps than the events"},
	} {
		var m map[string]any
		json.Unmarshal(committed, &m)
		c.edit(m)
		data, _ := json.Marshal(m)
		os.WriteFile(statePath, data, 0o644)
		if out := check(c.name); !strings.Contains(out, rel+": "+c.says+suffix) {
			t.Fatalf("%s: lacks %q:\n%s", c.name, rel+": "+c.says+suffix, out)
		}
	}
	os.WriteFile(statePath, []byte("{not json"), 0o644)
	if out := check("not json"); !strings.Contains(out, rel+": is not a run state: ") {
		t.Fatalf("a state that is not JSON:\n%s", out)
	}
}

// unpackFresh makes the objects of the fresh packs quire's commits wrote
// (.git/quire-fresh's, vault/git/pack) loose objects, one file each, as
// git unpack-objects makes them, and empties the list.
func unpackFresh(t *testing.T, dir string) {
	t.Helper()
	list, _ := os.ReadFile(filepath.Join(dir, ".git", "quire-fresh"))
	for _, name := range strings.Fields(string(list)) {
		pack := filepath.Join(dir, ".git", "objects", "pack", name)
		data, err := os.ReadFile(pack + ".pack")
		if err != nil {
			continue // compacted meanwhile
		}
		os.Remove(pack + ".idx")
		os.Remove(pack + ".pack")
		cmd := exec.Command("git", "unpack-objects", "-q")
		cmd.Dir, cmd.Stdin = dir, bytes.NewReader(data)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git unpack-objects %s: %v %s", name, err, out)
		}
	}
	os.Remove(filepath.Join(dir, ".git", "quire-fresh"))
}
