package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

type checkJSON struct {
	Problems []struct {
		Commit, Path, Message string
		Line                  int
	}
	History *struct {
		Head            string
		Commits, Proved int
		Reads           int
		Note            string
	}
}

// checkHistory runs quire check --history --json and answers the report,
// and the problems found in the history as "commit path:line: message".
func checkHistory(t *testing.T, v string) (checkJSON, []string) {
	t.Helper()
	_, out, errs := quire(t, "", v, "check", "--history", "--json")
	var rep checkJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.History == nil {
		t.Fatalf("check --history: %v %s %s", err, out, errs)
	}
	var hist []string
	for _, p := range rep.Problems {
		if p.Commit != "" {
			hist = append(hist, fmt.Sprintf("%s %s:%d: %s", p.Commit, p.Path, p.Line, p.Message))
		}
	}
	sort.Strings(hist)
	return rep, hist
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=mallory", "GIT_AUTHOR_EMAIL=m@x", "GIT_COMMITTER_NAME=mallory", "GIT_COMMITTER_EMAIL=m@x")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// editCommit changes a file of the vault with edit and commits it with the
// git CLI, as a person rewriting history by hand would; it answers the
// commit.
func editCommit(t *testing.T, dir, rel string, edit func(string) string) string {
	t.Helper()
	p := filepath.Join(dir, rel)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(edit(string(data))), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "add", rel)
	gitIn(t, dir, "commit", "-q", "-m", "edit "+rel)
	return gitIn(t, dir, "rev-parse", "HEAD")
}

// quire check --history proves the append-only rules from the git history:
// a clean history reports nothing; a rewritten line, a removed line, a
// changed definition.md, a change to an archived run and lines out of seq
// order are each reported with their commit, file and line; a second check
// proves only the new commits, still reports what the first found, and
// catches a new violation; after a reset it says so and reports only what
// HEAD's history still holds.
func TestCheckHistoryProvesTheAppendOnlyRules(t *testing.T) {
	t.Parallel()
	dir, v, project := newCLIVault(t)
	quire(t, "", v, "call", "create_playbook", "--args", `{"playbook":"finance","name":"Finance"}`)
	quire(t, "", v, "call", "create_definition", "--args", `{"playbook":"finance","type":"workflow","name":"close","source":"document:\n  name: close\n"}`)
	start := func() (id, folder string) {
		code, out, _ := quire(t, "", v, "run", "start", "--playbook", "finance", "--name", "close", "--member-of", project,
			"--executor", "agent-7", "--authorized-by", "ana", "--json")
		var r struct {
			RunID string `json:"run_id"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
			t.Fatalf("run start: %d %s", code, out)
		}
		m, _ := filepath.Glob(filepath.Join(dir, "playbook-runs", "close-"+r.RunID+"-*"))
		rel, _ := filepath.Rel(dir, m[0])
		return r.RunID, filepath.ToSlash(rel)
	}
	a, folderA := start()
	b, folderB := start()
	for _, step := range []string{"do/1/a", "do/2/b", "do/3/c"} {
		quire(t, "", v, "run", "event", "step_completed", "--playbook", "finance", "--run", a, "--step", step, "--actor", "agent-7")
	}
	quire(t, "", v, "run", "end", "succeeded", "--playbook", "finance", "--run", b, "--actor", "agent-7")
	if code, out, errs := quire(t, "", v, "run", "transition", "archived", "--reason", "done", "--playbook", "finance", "--run", b, "--actor", "ana"); code != 0 {
		t.Fatalf("archive: %s %s", out, errs)
	}
	total := strings.Count(gitIn(t, dir, "rev-list", "HEAD"), "\n") + 1

	// A clean history: nothing, and every commit proved.
	rep, hist := checkHistory(t, v)
	if len(hist) != 0 || len(rep.Problems) != 0 || rep.History.Commits != total || rep.History.Proved != total {
		t.Fatalf("clean vault: %d commits, %+v %v", total, rep.History, rep.Problems)
	}
	// Nothing new: nothing read but HEAD's commit.
	rep, _ = checkHistory(t, v)
	if rep.History.Commits != 0 || rep.History.Proved != total || rep.History.Reads > 1 {
		t.Fatalf("second check of the same history: %+v", rep.History)
	}

	logA, logB := folderA+"/run.jsonl", folderB+"/run.jsonl"
	lines := func(s string) []string { return strings.SplitAfter(s, "\n") }
	rewrite := editCommit(t, dir, logA, func(s string) string {
		l := lines(s)
		l[1] = strings.Replace(l[1], `"detail":"`, `"detail":"nothing happened here `, 1)
		return strings.Join(l, "")
	})
	remove := editCommit(t, dir, logA, func(s string) string {
		l := lines(s)
		return strings.Join(append(l[:len(l)-2], l[len(l)-1]), "")
	})
	def := editCommit(t, dir, folderA+"/definition.md", func(s string) string {
		return strings.Replace(s, "playbook_version: ", "playbook_version: 9", 1)
	})
	archived := editCommit(t, dir, folderB+"/thread.md", func(s string) string { return s + "one more thought\n" })
	outOfSeq := editCommit(t, dir, logA, func(s string) string {
		return s + `{"event":"step_completed","timestamp":"2026-11-01T09:30:00Z","step":"do/9/z","detail":"late","seq":2}` + "\n"
	})
	defLines := strings.Split(readFile(t, dir, folderA+"/definition.md"), "\n")
	defLine := 0
	for i, l := range defLines {
		if strings.HasPrefix(l, "playbook_version: 9") {
			defLine = i + 1
		}
	}
	nA := strings.Count(readFile(t, dir, logA), "\n")
	want := []string{
		rewrite + " " + logA + ":2: rule 3: committed line 2 of run.jsonl was changed; run.jsonl is append-only (append a correction instead)",
		remove + " " + logA + fmt.Sprintf(":%d: rule 3: committed line %d of run.jsonl was removed; run.jsonl is append-only", nA, nA),
		def + " " + folderA + fmt.Sprintf("/definition.md:%d: rule 2: definition.md changed after its run began; it pins the run's definition and version and is written once", defLine),
		archived + " " + folderB + "/thread.md:" + fmt.Sprint(strings.Count(readFile(t, dir, folderB+"/thread.md"), "\n")) + ": rule 5: the run was archived (run.jsonl line " + fmt.Sprint(strings.Count(readFile(t, dir, logB), "\n")) + ") and this commit changes thread.md; archived runs are read-only",
	}
	seqRe := regexp.MustCompile(`^` + outOfSeq + ` ` + regexp.QuoteMeta(logA) + fmt.Sprintf(`:%d: seq 2 comes after seq \d+ \(line %d\); a run's lines are in seq order$`, nA, nA-1))
	rep, hist = checkHistory(t, v)
	if rep.History.Commits != 5 || rep.History.Proved != total+5 {
		t.Fatalf("the incremental check proved %d commits (%d in all), not the 5 new ones", rep.History.Commits, rep.History.Proved)
	}
	sort.Strings(want)
	if len(hist) != 5 || !seqRe.MatchString(hist[indexOf(hist, outOfSeq)]) {
		t.Fatalf("history problems:\n%s", strings.Join(hist, "\n"))
	}
	got := append([]string(nil), hist...)
	got = append(got[:indexOf(got, outOfSeq)], got[indexOf(got, outOfSeq)+1:]...)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("history problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The text form names the commit, the file and the line.
	if _, out, _ := quire(t, "", v, "check", "--history"); !strings.Contains(out, "commit "+rewrite[:12]+": "+logA+":2: rule 3:") ||
		!strings.Contains(out, "history: proved 0 new commits") {
		t.Fatalf("check --history:\n%s", out)
	}

	// Again: nothing new to prove, the same problems remembered.
	hist3 := hist
	rep, hist2 := checkHistory(t, v)
	if rep.History.Commits != 0 || strings.Join(hist2, "\n") != strings.Join(hist, "\n") {
		t.Fatalf("third check: %+v\n%s", rep.History, strings.Join(hist2, "\n"))
	}
	// A reset drops the bad commits: said, and only what HEAD still holds.
	gitIn(t, dir, "reset", "-q", "--hard", "HEAD~5")
	rep, hist = checkHistory(t, v)
	if len(hist) != 0 || rep.History.Commits != 0 || !strings.Contains(rep.History.Note, "is no longer in HEAD's history") {
		t.Fatalf("after a reset: %+v\n%s", rep.History, strings.Join(hist, "\n"))
	}
	// Back to the bad commits: they are proved again, their problems found.
	gitIn(t, dir, "reset", "-q", "--hard", outOfSeq)
	rep, hist2 = checkHistory(t, v)
	if rep.History.Commits != 5 || strings.Join(hist2, "\n") != strings.Join(hist3, "\n") {
		t.Fatalf("back at the bad commits: %+v\n%s", rep.History, strings.Join(hist2, "\n"))
	}
	gitIn(t, dir, "reset", "-q", "--hard", "HEAD~5")
	if rep, hist = checkHistory(t, v); len(hist) != 0 || rep.History.Proved != total {
		t.Fatalf("after a second reset: %+v\n%s", rep.History, strings.Join(hist, "\n"))
	}
	// A new commit after the reset: only it is proved, and its violation found.
	again := editCommit(t, dir, logA, func(s string) string { return strings.Replace(s, `"seq":`, `"seq": `, 1) })
	rep, hist = checkHistory(t, v)
	if rep.History.Commits != 1 || len(hist) != 1 || !strings.HasPrefix(hist[0], again+" "+logA+":1: rule 3: committed line 1 of run.jsonl was changed") {
		t.Fatalf("after a new commit: %+v\n%s", rep.History, strings.Join(hist, "\n"))
	}
	// Merges are proved against each parent: a clean one adds nothing, one
	// whose resolution rewrites a committed line is named.
	gitIn(t, dir, "checkout", "-q", "-b", "side")
	editCommit(t, dir, folderA+"/thread.md", func(s string) string { return s + "from the side\n" })
	gitIn(t, dir, "checkout", "-q", "main")
	quire(t, "", v, "run", "event", "step_completed", "--playbook", "finance", "--run", a, "--step", "do/4/d", "--actor", "agent-7")
	gitIn(t, dir, "merge", "-q", "--no-edit", "side")
	rep, hist = checkHistory(t, v)
	if rep.History.Commits != 3 || len(hist) != 1 {
		t.Fatalf("after a clean merge: %+v\n%s", rep.History, strings.Join(hist, "\n"))
	}
	gitIn(t, dir, "checkout", "-q", "side")
	editCommit(t, dir, folderA+"/context.md", func(s string) string { return s + "more context\n" })
	gitIn(t, dir, "checkout", "-q", "main")
	gitIn(t, dir, "merge", "-q", "--no-commit", "side")
	merge := editCommit(t, dir, logA, func(s string) string { return strings.Replace(s, `"detail":"`, `"detail":"merged `, 1) })
	rep, hist = checkHistory(t, v)
	if rep.History.Commits != 2 || len(hist) != 2 || indexOf(hist, merge+" "+logA+":1: rule 3: the merge does not keep committed line 1 of a parent's run.jsonl in its place") < 0 {
		t.Fatalf("after a merge that rewrites a line: %+v\n%s", rep.History, strings.Join(hist, "\n"))
	}
	// The operation table serves the same walk: check_vault with history.
	if code, out, _ := quire(t, "", v, "call", "check_vault", "--args", `{"history":true}`); code != 0 || !strings.Contains(out, `"commits": 0`) || !strings.Contains(out, merge) {
		t.Fatalf("check_vault history: %d %s", code, out)
	}
}

func readFile(t *testing.T, dir, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func indexOf(list []string, prefix string) int {
	for i, s := range list {
		if strings.HasPrefix(s, prefix) {
			return i
		}
	}
	return -1
}

// quire check reports a run.jsonl line without the capsule's minimum fields
// (step, which may be null, and detail, as well as event and timestamp) and
// any line after archived (rule 5), each at its file and line.
func TestCheckLineRules(t *testing.T) {
	dir, v, project := newCLIVault(t)
	quire(t, "", v, "call", "create_playbook", "--args", `{"playbook":"finance","name":"Finance"}`)
	quire(t, "", v, "call", "create_definition", "--args", `{"playbook":"finance","type":"workflow","name":"close","source":"document:\n  name: close\n"}`)
	_, out, _ := quire(t, "", v, "run", "start", "--playbook", "finance", "--name", "close", "--member-of", project,
		"--executor", "agent-7", "--authorized-by", "ana", "--json")
	var r struct {
		RunID string `json:"run_id"`
	}
	json.Unmarshal([]byte(out), &r)
	quire(t, "", v, "run", "end", "failed", "--playbook", "finance", "--run", r.RunID, "--actor", "agent-7")
	quire(t, "", v, "run", "transition", "archived", "--reason", "done", "--playbook", "finance", "--run", r.RunID, "--actor", "ana")
	if code, out, _ := quire(t, "", v, "check"); code != 0 {
		t.Fatalf("check of a clean vault: %s", out)
	}
	m, _ := filepath.Glob(filepath.Join(dir, "playbook-runs", "close-"+r.RunID+"-*", "run.jsonl"))
	rel, _ := filepath.Rel(dir, m[0])
	rel = filepath.ToSlash(rel)
	n := strings.Count(readFile(t, dir, rel), "\n")
	f, _ := os.OpenFile(m[0], os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"event":"step_completed","timestamp":"2026-11-01T09:30","detail":"no step"}` + "\n" +
		`{"event":"step_completed","timestamp":"2026-11-01T09:31","step":null}` + "\n" +
		`{"event":"step_completed","timestamp":"2026-11-01T09:32","step":null,"detail":"all four"}` + "\n")
	f.Close()
	code, out, _ := quire(t, "", v, "check")
	for i, want := range []string{
		fmt.Sprintf(`%s:%d: no "step" field: every line holds the capsule's minimum fields event, timestamp, step (null where there is none) and detail`, rel, n+1),
		fmt.Sprintf(`%s:%d: no "detail" field: every line holds`, rel, n+2),
		fmt.Sprintf(`%s:%d: rule 5: a step_completed line after the run was archived at line %d; archived runs are read-only`, rel, n+1, n),
		fmt.Sprintf(`%s:%d: rule 5: a step_completed line after the run was archived at line %d`, rel, n+3, n),
	} {
		if code != 1 || !strings.Contains(out, want) {
			t.Fatalf("%d: check lacks %q:\n%s", i, want, out)
		}
	}
	if strings.Contains(out, fmt.Sprintf(`%s:%d: no`, rel, n+3)) {
		t.Fatalf("a line with the four fields is reported:\n%s", out)
	}
}
