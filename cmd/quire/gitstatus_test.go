package main

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"quire/vault/git/index"
	"quire/vault/git/object"
)

// A person's git status in a vault of 100,000 runs took 4.9 s, and 18 s
// after each of quire's boundaries: quire wrote .git/index without git's
// untracked cache, so the next git status read every folder of the work
// tree again, and without a cache-tree, so git status read every tree of
// HEAD to compare it with the index (issue 28). A boundary keeps the
// untracked cache, less what its new entries make stale, and writes a
// cache-tree; git status then reads only the folders that changed, and
// still sees every untracked file and every staged change.
func TestGitStatusAfterABoundaryReadsOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	dir, v, run := newCloseRun(t)
	var project string
	_, out, _ := quire(t, "", v, "call", "list_projects", "--args", `{}`)
	var projects []struct{ UID string }
	json.Unmarshal([]byte(out), &projects)
	project = projects[0].UID
	for i := 0; i < 4; i++ {
		if code, out, errs := quire(t, "", v, "run", "start", "--playbook", "finance", "--name", "close", "--member-of", project,
			"--executor", "agent-7", "--authorized-by", "ana"); code != 0 {
			t.Fatalf("run start: %s %s", out, errs)
		}
	}
	folders := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".quire") {
			return filepath.SkipDir
		}
		if d.IsDir() {
			folders++
		}
		return nil
	})
	// git built without nanosecond stamps (Debian's) reads again a folder
	// changed in the second its index was written: the person comes later.
	time.Sleep(1100 * time.Millisecond)
	// The person's first git status reads every folder and caches them.
	if st, _ := gitStatusTraced(t, dir); st != "" {
		t.Fatalf("git status of a new vault:\n%s", st)
	}
	if st, read := gitStatusTraced(t, dir); st != "" || read != 0 {
		t.Fatalf("a second git status read %d folders: %s", read, st)
	}

	// A boundary on a run: git status reads the run's folder, not the
	// vault's other folders.
	bound := func(to, reason string) {
		t.Helper()
		if code, out, errs := quire(t, "", v, "run", "transition", to, "--playbook", "finance", "--run", run,
			"--reason", reason, "--actor", "agent-7"); code != 0 {
			t.Fatalf("run transition %s: %s %s", to, out, errs)
		}
	}
	bound("paused", "waits")
	st, read := gitStatusTraced(t, dir)
	if st != "" || read > 2 {
		t.Fatalf("after a boundary, git status read %d of the vault's %d folders (git's untracked cache lost): %q", read, folders, st)
	}

	// The cache-tree quire writes is HEAD's tree, as git itself makes it.
	head := gitIn(t, dir, "rev-parse", "HEAD^{tree}")
	if root := cacheTreeRoot(t, dir); root != head {
		t.Fatalf("the index's cache-tree %q, HEAD's tree %s", root, head)
	}
	if wt := gitIn(t, dir, "write-tree"); wt != head {
		t.Fatalf("git write-tree %s from quire's index, HEAD's tree %s", wt, head)
	}

	// What the caches hold stays true: a person's untracked folder in the
	// run's folder is listed, and no longer once a boundary committed its
	// file (git's cache of the run's artifacts/ lists it, and that
	// folder's stat did not change); a file elsewhere stays listed; a
	// person's staged change is seen.
	folder := ""
	for _, l := range strings.Split(gitIn(t, dir, "ls-files", "playbook-runs"), "\n") {
		if parts := strings.Split(l, "/"); len(parts) > 2 && strings.Contains(parts[1], run) {
			folder = parts[0] + "/" + parts[1]
			break
		}
	}
	// A folder of the person's, untracked: git lists the folder.
	note := folder + "/artifacts/extra/note.txt"
	os.MkdirAll(filepath.Join(dir, folder, "artifacts", "extra"), 0o755)
	os.WriteFile(filepath.Join(dir, note), []byte("a person's note\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "playbook-runs", "scratch.txt"), []byte("scratch\n"), 0o644)
	time.Sleep(1100 * time.Millisecond)
	if st, _ := gitStatusTraced(t, dir); st != "?? "+folder+"/artifacts/extra/\n?? playbook-runs/scratch.txt" {
		t.Fatalf("git status of two untracked files:\n%s", st)
	}
	bound("active", "go on")
	if !strings.Contains(gitIn(t, dir, "ls-files", note), "note.txt") {
		t.Skip("the boundary did not commit the person's file") // the rest holds nonetheless
	}
	if st, _ := gitStatusTraced(t, dir); st != "?? playbook-runs/scratch.txt" {
		t.Fatalf("git status after the boundary committed %s:\n%s", note, st)
	}
	os.Remove(filepath.Join(dir, "playbook-runs", "scratch.txt"))
	os.MkdirAll(filepath.Join(dir, "notes"), 0o755)
	os.WriteFile(filepath.Join(dir, "notes", "todo.md"), []byte("notes\n"), 0o644)
	gitIn(t, dir, "add", "notes/todo.md")
	bound("paused", "waits again")
	if st, _ := gitStatusTraced(t, dir); st != "A  notes/todo.md" {
		t.Fatalf("git status of a staged file after a boundary:\n%s", st)
	}

	// With core.untrackedCache false, git drops its cache, and so does
	// a boundary.
	if readIndex(t, dir).Untracked == nil {
		t.Fatal("git's untracked cache is not in the index")
	}
	gitIn(t, dir, "config", "core.untrackedCache", "false")
	bound("active", "on")
	if readIndex(t, dir).Untracked != nil {
		t.Fatal("a boundary kept the untracked cache with core.untrackedCache false")
	}
}

var opendirs = regexp.MustCompile(`opendir:(\d+)`)

// gitStatusTraced is git status --porcelain and the count of folders it
// read (git's trace2: read_directory's opendir).
func gitStatusTraced(t *testing.T, dir string) (string, int) {
	t.Helper()
	trace := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command("git", "status", "--porcelain")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TRACE2_PERF="+trace)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git status: %v", err)
	}
	data, _ := os.ReadFile(trace)
	m := opendirs.FindSubmatch(data)
	if m == nil {
		t.Fatalf("git's trace says nothing of the folders it read:\n%s", data)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return strings.TrimRight(string(out), "\n"), n
}

// cacheTreeRoot is the tree the index's cache-tree says the whole index
// makes, "" when it says none.
func cacheTreeRoot(t *testing.T, dir string) string {
	t.Helper()
	if d := readIndex(t, dir); !d.CacheTree.IsZero() {
		return d.CacheTree.String()
	}
	return ""
}

// readIndex decodes the vault's .git/index.
func readIndex(t *testing.T, dir string) index.Index {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := index.Decode(data, true, func(id object.Hash) ([]*index.Entry, error) {
		b, err := os.ReadFile(filepath.Join(dir, ".git", "sharedindex."+id.String()))
		if err != nil {
			return nil, err
		}
		return index.DecodeShared(id, b, true)
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// git writes a split index whole whenever its file system monitor marks
// an entry as unchanged (fsmonitor.h, mark_fsmonitor_valid: an "unclassified"
// change, which a split index cannot hold), so in a vault watched by a
// monitor (Watchman's hook, README) every git status after a boundary
// wrote .git/index whole, and quire's next boundary then wrote a new
// shared index: 46 MB at 100,000 runs, and 0.6 s of a boundary through
// quire serve. A boundary after git wrote the index whole splits it again
// against the shared index it was split from: no new shared index, and
// what git changed in the index (a person's staged file) is kept.
func TestABoundaryAfterGitWroteTheIndexWholeKeepsItsSharedIndex(t *testing.T) {
	t.Parallel()
	dir, v, run := newCloseRun(t)
	gitIn(t, dir, "config", "core.splitIndex", "true")
	// A monitor that says nothing changed: git stats the entries the
	// index marks to be looked at (those quire's boundary wrote), finds
	// them unchanged and marks them so, as it does for each path a real
	// monitor reports.
	hook := filepath.Join(t.TempDir(), "monitor")
	os.WriteFile(hook, []byte("#!/bin/sh\nprintf 'token\\0'\n"), 0o755)
	gitIn(t, dir, "config", "core.fsmonitor", hook)
	bound := func(to string) {
		t.Helper()
		if code, out, errs := quire(t, "", v, "run", "transition", to, "--playbook", "finance", "--run", run,
			"--reason", "turns", "--actor", "agent-7"); code != 0 {
			t.Fatalf("run transition %s: %s %s", to, out, errs)
		}
	}
	shared := func() []string {
		t.Helper()
		names, _ := filepath.Glob(filepath.Join(dir, ".git", "sharedindex.*"))
		return names
	}
	bound("paused")
	first := shared()
	if len(first) != 1 || readIndex(t, dir).SharedID.IsZero() {
		t.Fatalf("core.splitIndex true: shared indexes %v", first)
	}
	// The person's staged file: git add writes the index whole too (it
	// marks the file unchanged), as does each git status below. (Under
	// core.splitIndex true, set here so that quire splits an index this
	// small, git's next command would split it again itself; with the
	// setting unset, as at 100,000 runs, it stays whole.)
	os.MkdirAll(filepath.Join(dir, "notes"), 0o755)
	os.WriteFile(filepath.Join(dir, "notes", "todo.md"), []byte("notes\n"), 0o644)
	gitIn(t, dir, "add", "notes/todo.md")
	toLookAt := func() map[string]bool {
		t.Helper()
		out := map[string]bool{}
		for _, l := range strings.Split(gitIn(t, dir, "ls-files", "-f"), "\n") {
			if f, ok := strings.CutPrefix(l, "H "); ok {
				out[f] = true
			}
		}
		return out
	}
	for i, to := range []string{"active", "paused", "active"} {
		if !readIndex(t, dir).SharedID.IsZero() {
			t.Fatalf("round %d: git kept the index split (the monitor's whole write did not happen)", i)
		}
		before := toLookAt()
		bound(to)
		if got := shared(); !slices.Equal(got, first) {
			t.Fatalf("round %d: a boundary after git wrote the index whole wrote a shared index: %v, was %v", i, got, first)
		}
		if d := readIndex(t, dir); d.SharedID.IsZero() || "sharedindex."+d.SharedID.String() != filepath.Base(first[0]) {
			t.Fatalf("round %d: the boundary's index links %s, not %s", i, d.SharedID, first[0])
		}
		// git's monitor bits (ls-files -f: h unchanged since the monitor
		// last answered, H to be looked at): the boundary's files are to
		// be looked at, the others as git left them.
		want := map[string]bool{}
		for _, f := range strings.Split(gitIn(t, dir, "diff-tree", "-r", "--name-only", "HEAD^", "HEAD"), "\n") {
			want[f] = true
		}
		for f := range before {
			want[f] = true
		}
		if got := toLookAt(); !maps.Equal(got, want) {
			t.Fatalf("round %d: the index marks to be looked at %v, want %v (the boundary's files and those git left so)", i, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		}
		if cached := gitIn(t, dir, "diff", "--cached", "--name-only", "HEAD"); cached != "notes/todo.md" {
			t.Fatalf("round %d: the index differs from HEAD in %q, want only notes/todo.md", i, cached)
		}
		if st := gitIn(t, dir, "status", "--porcelain"); st != "A  notes/todo.md" {
			t.Fatalf("round %d: git status after the boundary:\n%s", i, st)
		}
	}
	if code, out, errs := quire(t, "", v, "check"); code != 0 {
		t.Fatalf("quire check: %s %s", out, errs)
	}
}
