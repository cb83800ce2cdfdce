package main

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

type checkRead struct {
	Runs     int
	Problems []struct {
		Commit, Path, Message string
		Line                  int
	}
	Read *struct {
		Runs  int
		Vault bool
	}
}

// checkReads runs quire check --json (with args) and answers its exit code
// and report.
func checkReads(t *testing.T, v string, args ...string) (int, checkRead) {
	t.Helper()
	code, out, errs := quire(t, "", append([]string{v, "check", "--json"}, args...)...)
	var rep checkRead
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Read == nil {
		t.Fatalf("check: %v %s %s", err, out, errs)
	}
	return code, rep
}

// settled waits out the record's racy window (a stamp taken within 100 ms
// of a change is not trusted), checks the vault clean, and then that the
// next check answers from the record, reading nothing.
func settled(t *testing.T, v, after string) {
	t.Helper()
	time.Sleep(150 * time.Millisecond)
	if code, rep := checkReads(t, v); code != 0 {
		t.Fatalf("%s: the vault is not clean: %+v", after, rep.Problems)
	}
	code, rep := checkReads(t, v)
	if code != 0 || rep.Read.Vault || rep.Read.Runs != 0 {
		t.Fatalf("%s: nothing changed, and the check read %+v: %+v", after, rep.Read, rep.Problems)
	}
}

// quire check with nothing changed answers from the record of the last
// check that passed, and a change anywhere, by hand and without quire,
// is seen at once: a line appended to a run's log in place, a committed
// line edited with its size and modification time put back, the index of
// things edited, a run's context.md edited, a symbolic link in a run's
// artifacts, a person's file in a playbook, a run folder removed, git's
// lock file. Each is the problem quire check --full reports.
func TestCheckFromItsRecordSeesEveryChange(t *testing.T) {
	dir, v, _ := newCloseRun(t)
	runs, _ := filepath.Glob(filepath.Join(dir, "playbook-runs", "close-*"))
	run := runs[0]
	rel := func(p string) string { r, _ := filepath.Rel(dir, p); return filepath.ToSlash(r) }
	restore := func() {
		gitIn(t, dir, "checkout", "--", ".")
		gitIn(t, dir, "clean", "-fdq", "--", "playbook-runs", "playbooks", "vault")
	}
	appendTo := func(p, s string) {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	for _, c := range []struct {
		name   string
		change func()
		want   string // in a problem's path and message
	}{
		{"a line appended in place to run.jsonl", func() {
			appendTo(filepath.Join(run, "run.jsonl"), "not an event\n")
		}, rel(filepath.Join(run, "run.jsonl")) + ":2: "},
		{"a committed line changed, its size and times put back", func() {
			p := filepath.Join(run, "run.jsonl")
			fi, _ := os.Stat(p)
			data, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(data), `"actor":"ana"`, `"actor":"bob"`, 1)), 0o644)
			os.Chtimes(p, fi.ModTime(), fi.ModTime())
		}, rel(filepath.Join(run, "run.jsonl")) + ":1: line 1 differs from the commit"},
		{"the index of things edited in place", func() {
			appendTo(filepath.Join(dir, "vault", "00-index.jsonl"), "{not json\n")
		}, "vault/00-index.jsonl:"},
		{"context.md edited by hand", func() {
			appendTo(filepath.Join(run, "context.md"), "more\n")
		}, rel(filepath.Join(run, "context.md")) + ": edited by hand"},
		{"a symbolic link in artifacts/", func() {
			os.Symlink("/etc/passwd", filepath.Join(run, "artifacts", "passwd"))
		}, rel(filepath.Join(run, "artifacts", "passwd")) + ": is a symbolic link"},
		{"a person's file in a playbook", func() {
			os.WriteFile(filepath.Join(dir, "playbooks", "finance", "notes.md"), []byte("mine\n"), 0o644)
		}, "playbooks/finance/notes.md: untracked and not committed"},
		{"a run folder removed", func() {
			os.RemoveAll(run)
		}, "does not exist"},
		{"git's lock file", func() {
			os.WriteFile(filepath.Join(dir, ".git", "index.lock"), nil, 0o644)
		}, ".git/index.lock: git's lock file"},
	} {
		settled(t, v, "before "+c.name)
		c.change()
		code, rep := checkReads(t, v)
		var got []string
		found := false
		for _, p := range rep.Problems {
			s := p.Path + ": " + p.Message
			if p.Line > 0 {
				s = p.Path + ":" + itoa(p.Line) + ": " + p.Message
			}
			got = append(got, s)
			found = found || strings.Contains(s, c.want)
		}
		if code != 1 || !found {
			t.Fatalf("%s: exit %d, read %+v, problems:\n%s\nwant one with %q", c.name, code, rep.Read, strings.Join(got, "\n"), c.want)
		}
		fullCode, full := checkReads(t, v, "--full")
		if fullCode != code || len(full.Problems) != len(rep.Problems) {
			t.Fatalf("%s: check --full says otherwise: %+v, the check %+v", c.name, full.Problems, rep.Problems)
		}
		os.Remove(filepath.Join(dir, ".git", "index.lock"))
		restore()
	}
	settled(t, v, "at the end")
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// quire check --history with nothing new answers from the mark of its
// last clean walk, with the check of the files from its record; a commit
// made by hand after it, rewriting a committed line, is proved and
// reported at once.
func TestCheckHistoryNothingNewThenACommitByHand(t *testing.T) {
	dir, v, runID := newCloseRun(t)
	quire(t, "", v, "run", "event", "step_completed", "--playbook", "finance", "--run", runID, "--step", "do/1", "--actor", "agent-7")
	time.Sleep(150 * time.Millisecond)
	checkHistory(t, v)
	for i := 0; i < 2; i++ {
		rep, hist := checkHistory(t, v)
		if len(hist) != 0 || rep.History.Commits != 0 || len(rep.Problems) != 0 {
			t.Fatalf("nothing new: %+v %v %+v", rep.History, hist, rep.Problems)
		}
	}
	if _, rep := checkReads(t, v, "--history"); rep.Read.Vault || rep.Read.Runs != 0 {
		t.Fatalf("nothing new, and the check read %+v", rep.Read)
	}
	runs, _ := filepath.Glob(filepath.Join(dir, "playbook-runs", "close-*"))
	rel, _ := filepath.Rel(dir, filepath.Join(runs[0], "run.jsonl"))
	rel = filepath.ToSlash(rel)
	bad := editCommit(t, dir, rel, func(s string) string { return strings.Replace(s, `"do/1"`, `"do/X"`, 1) })
	rep, hist := checkHistory(t, v)
	if len(hist) != 1 || !strings.HasPrefix(hist[0], bad+" "+rel+":2: rule 3") || rep.History.Commits != 1 {
		t.Fatalf("the commit by hand: %+v %v", rep.History, hist)
	}
	// And a commit by hand that leaves every file of the work tree as it
	// was (the edit taken back in the next commit): both are proved.
	gitIn(t, dir, "revert", "--no-edit", "HEAD")
	time.Sleep(150 * time.Millisecond)
	rep, hist = checkHistory(t, v)
	if rep.History.Commits != 1 || len(hist) != 2 {
		t.Fatalf("the revert by hand: %+v %v", rep.History, hist)
	}
}

// A person's git status rewrites .git/index (refreshing its entries' stat
// data): quire check sees the same entries and still answers from its
// record.
func TestCheckFromItsRecordAfterGitStatus(t *testing.T) {
	dir, v, _ := newCloseRun(t)
	settled(t, v, "at first")
	fi, _ := os.Stat(filepath.Join(dir, ".git", "index"))
	time.Sleep(20 * time.Millisecond)
	gitIn(t, dir, "update-index", "--really-refresh")
	gitIn(t, dir, "status", "--short")
	if after, _ := os.Stat(filepath.Join(dir, ".git", "index")); after.ModTime().Equal(fi.ModTime()) {
		t.Log("git left .git/index as it was")
	}
	time.Sleep(150 * time.Millisecond)
	if code, rep := checkReads(t, v); code != 0 || rep.Read.Vault || rep.Read.Runs != 0 {
		t.Fatalf("after git status: exit %d, read %+v, %+v", code, rep.Read, rep.Problems)
	}
}

// closeRunOfOneStep makes a vault with a run of close that recorded one
// step (do/1, the second line of its log), and answers the vault's folder,
// its --vault flag and the run's run.jsonl from the vault's root.
func closeRunOfOneStep(t *testing.T) (dir, v, rel string) {
	t.Helper()
	dir, v, runID := newCloseRun(t)
	quire(t, "", v, "run", "event", "step_completed", "--playbook", "finance", "--run", runID, "--step", "do/1", "--actor", "agent-7")
	runs, _ := filepath.Glob(filepath.Join(dir, "playbook-runs", "close-*"))
	rel, _ = filepath.Rel(dir, filepath.Join(runs[0], "run.jsonl"))
	return dir, v, filepath.ToSlash(rel)
}

// In a vault whose .git/config names a file system monitor hook
// (core.fsmonitor: Watchman's, README), quire check asks it what changed
// since the last passing check, as git status does, before any stat: the
// run folders it names are stamped, the others are the record's. Here a
// hook answers what the test says and writes down the tokens it is asked
// with: a committed line edited by hand in place is found when the
// monitor names the file, missed while it names nothing (the monitor is
// trusted, as git trusts it; --full asks nothing of it), and found
// whenever it knows nothing ("/") or fails.
func TestCheckAsksTheFileSystemMonitorWhatChanged(t *testing.T) {
	dir, v, rel := closeRunOfOneStep(t)
	tmp := t.TempDir()
	answer, asked := filepath.Join(tmp, "answer"), filepath.Join(tmp, "asked")
	hook := filepath.Join(tmp, "monitor")
	os.WriteFile(hook, []byte("#!/bin/sh\n[ \"$1\" = 2 ] || exit 1\necho \"$2\" >> "+asked+"\n[ -f "+answer+" ] || exit 1\ncat "+answer+"\n"), 0o755)
	gitIn(t, dir, "config", "core.fsmonitor", hook)
	says := func(token string, paths ...string) {
		t.Helper()
		os.WriteFile(answer, []byte(token+"\x00"+strings.Join(paths, "\x00")), 0o644)
	}
	askedWith := func() []string {
		t.Helper()
		data, _ := os.ReadFile(asked)
		return strings.Fields(strings.ReplaceAll(string(data), "\n", " _ "))
	}

	says("t1", "/")
	time.Sleep(150 * time.Millisecond)
	if code, rep := checkReads(t, v); code != 0 || !rep.Read.Vault {
		t.Fatalf("the first check: %d %+v", code, rep)
	}
	if got := askedWith(); !slices.Equal(got, []string{"_"}) {
		t.Fatalf("the first check asked with %q, want no token", got)
	}
	// A committed line changed in place, its size kept.
	data, _ := os.ReadFile(filepath.Join(dir, rel))
	os.WriteFile(filepath.Join(dir, rel), []byte(strings.Replace(string(data), `"do/1"`, `"do/X"`, 1)), 0o644)

	says("t2")
	if code, rep := checkReads(t, v); code != 0 || rep.Read.Runs != 0 || rep.Read.Vault {
		t.Fatalf("the monitor names nothing: the record answers, %d %+v", code, rep)
	}
	if got := askedWith(); !slices.Equal(got, []string{"_", "t1", "_"}) {
		t.Fatalf("asked with %q, want the record's token t1", got)
	}
	if code, rep := checkReads(t, v, "--full"); code != 1 || len(rep.Problems) == 0 {
		t.Fatalf("--full: %d %+v", code, rep)
	}
	// With no token of its own, a check asks with the one git keeps in
	// its index (git status's), not with none.
	gitIn(t, dir, "update-index", "--fsmonitor")
	says("g1", "/")
	gitIn(t, dir, "status", "--porcelain")
	says("t2b")
	if code, rep := checkReads(t, v, "--full"); code != 1 || len(rep.Problems) == 0 {
		t.Fatalf("--full: %d %+v", code, rep)
	}
	os.Remove(filepath.Join(dir, ".quire", "check-record")) // no token of its own
	checkReads(t, v)
	if got := askedWith(); got[len(got)-2] != "g1" {
		t.Fatalf("asked with %q, want git's token g1 last", got)
	}
	for name, answer := range map[string]func(){
		"names the log":        func() { says("t3", "playbook-runs/", rel, "vault/00-index.jsonl") },
		"knows nothing":        func() { says("t4", "/") },
		"fails":                func() { os.Remove(answer) },
		"names its folder":     func() { says("t5", path.Dir(rel)+"/") },
		"names the file alone": func() { says("t6", rel) },
	} {
		answer()
		code, rep := checkReads(t, v)
		found := false
		for _, p := range rep.Problems {
			found = found || p.Path == rel && p.Line == 2
		}
		if code != 1 || !found {
			t.Fatalf("the monitor %s: %d %+v", name, code, rep)
		}
	}
}
