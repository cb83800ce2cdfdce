package history_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"quire/ledger/history"
	"quire/vault"
	"quire/words/event"
)

const (
	events  = "playbooks/finance/events.jsonl"
	runLog  = "runs/close-the-month/run.jsonl"
	runID   = "01900000-0000-7000-8000-000000000001"
	bookUID = "01900000-0000-7000-8000-0000000000b0"
)

// source is what the ledger tells the histories: one playbook, finance,
// whose events lie in its events.jsonl and one run's run.jsonl.
type source struct{ forgot []string }

func (s *source) Files(playbook string) ([]string, error) {
	if playbook != "finance" {
		return nil, nil
	}
	return []string{events, runLog}, nil
}

func (s *source) Owner(file string) (string, bool) {
	switch file {
	case events:
		return bookUID, false
	case runLog:
		return runID, true
	}
	return "", false
}

func (s *source) Forget(playbook string) { s.forgot = append(s.forgot, playbook) }

type fixture struct {
	t   *testing.T
	dir string
	v   *vault.Vault
	src *source
	s   *history.Store
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	v, err := vault.Init(dir, "acme", time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	for _, f := range []string{events, runLog} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	src := &source{}
	return &fixture{t: t, dir: dir, v: v, src: src, s: history.New(v, src)}
}

// commitLog commits the run's log as the ledger's write transaction does.
func (f *fixture) commitLog(subject string) {
	f.t.Helper()
	f.locked(func() error {
		if _, ok := f.s.Commit([]string{runLog}, vault.Signature{Name: "ana", When: time.Now()}, vault.Message{Subject: subject}); !ok {
			f.t.Error("the commit failed")
		}
		return nil
	})
}

// locked runs fn holding the vault's lock, as the ledger's write
// transaction does.
func (f *fixture) locked(fn func() error) {
	f.t.Helper()
	if err := f.v.Locked(fn); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) size(file string) int64 {
	fi, err := os.Stat(filepath.Join(f.dir, file))
	if err != nil {
		return 0
	}
	return fi.Size()
}

func (f *fixture) appendRaw(file, raw string) {
	f.t.Helper()
	fh, err := os.OpenFile(filepath.Join(f.dir, file), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		f.t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.WriteString(raw); err != nil {
		f.t.Fatal(err)
	}
}

func line(typ, detail, id string, seq int64) string {
	ln := event.Line{Event: typ, Timestamp: "2026-11-01T09:30:00.000Z", Detail: detail, ID: id, Seq: seq}
	raw, err := ln.Marshal()
	if err != nil {
		panic(err)
	}
	return string(raw)
}

// record appends a recorded line to file as a write does: the history
// repaired, the record reserved, then the line written. It answers the seq.
func (f *fixture) record(file, detail string) int64 {
	f.t.Helper()
	var seq int64
	f.locked(func() error {
		if err := f.s.FollowGit(); err != nil {
			return err
		}
		h, err := f.s.Of("finance")
		if err != nil {
			return err
		}
		if err := h.Repair(); err != nil {
			return err
		}
		raw := line("step_completed", detail, fmt.Sprintf("id-%d", h.Len()+1), h.Len()+1)
		if seq, err = h.Reserve(file, f.size(file), len(raw)); err != nil {
			return err
		}
		f.appendRaw(file, raw)
		return nil
	})
	return seq
}

// hand appends a line as an agent with only files does: no id, no seq.
func (f *fixture) hand(file, detail string) {
	f.appendRaw(file, fmt.Sprintf("{\"event\": \"step_completed\", \"timestamp\": \"2026-11-01T09:30\", \"step\": null, \"detail\": %q}\n", detail))
}

func (f *fixture) history() *history.History {
	f.t.Helper()
	h, err := f.s.Of("finance")
	if err != nil {
		f.t.Fatal(err)
	}
	return h
}

// places reads the whole history as "seq id detail", checking that seq runs
// 1, 2, 3… and no id comes twice.
func (f *fixture) places(s *history.Store) []string {
	f.t.Helper()
	h, err := s.Of("finance")
	if err != nil {
		f.t.Fatal(err)
	}
	recs, err := h.Page(0, 1000)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	ids := map[string]bool{}
	for i, r := range recs {
		if r.Seq != int64(i+1) || r.Line.Seq != r.Seq {
			f.t.Fatalf("record %d has seq %d (line %d)", i+1, r.Seq, r.Line.Seq)
		}
		if r.Line.ID == "" || ids[r.Line.ID] {
			f.t.Fatalf("record %d: id %q empty or seen before", r.Seq, r.Line.ID)
		}
		ids[r.Line.ID] = true
		out = append(out, fmt.Sprintf("%d %s %s", r.Seq, r.Line.ID, r.Line.Detail))
	}
	return out
}

func (f *fixture) derived() string {
	f.t.Helper()
	seq, err := os.ReadFile(filepath.Join(f.dir, history.Dir, "finance.seq"))
	if err != nil {
		f.t.Fatal(err)
	}
	files, err := os.ReadFile(filepath.Join(f.dir, history.Dir, "finance.files"))
	if err != nil {
		f.t.Fatal(err)
	}
	// A rebuild's list begins with a nonce of its own (history.go).
	if strings.HasPrefix(string(files), "# rebuilt ") {
		_, files, _ = bytes.Cut(files, []byte("\n"))
	}
	return string(seq) + "\x00" + string(files)
}

func (f *fixture) git(args ...string) string {
	f.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = f.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		f.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// Events take seq 1, 2, 3… in the order they were reserved, whichever file
// holds them; a page reads them from any seq on, and another process's
// store reads what this one wrote.
func TestRecordsArePagedInSeqOrder(t *testing.T) {
	f := newFixture(t)
	for i, file := range []string{events, runLog, runLog, events} {
		if seq := f.record(file, fmt.Sprintf("e%d", i+1)); seq != int64(i+1) {
			t.Fatalf("event %d took seq %d", i+1, seq)
		}
	}
	h := f.history()
	if h.Len() != 4 {
		t.Fatalf("Len %d, want 4", h.Len())
	}
	for _, c := range []struct {
		after int64
		limit int
		want  []int64
	}{{0, 2, []int64{1, 2}}, {2, 10, []int64{3, 4}}, {3, 1, []int64{4}}, {4, 10, nil}, {9, 10, nil}} {
		recs, err := h.Page(c.after, c.limit)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, r := range recs {
			got = append(got, r.Seq)
			if want := fmt.Sprintf("e%d", r.Seq); r.Line.Detail != want || !strings.Contains(string(r.Raw), want) {
				t.Errorf("seq %d: detail %q, raw %s", r.Seq, r.Line.Detail, r.Raw)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("Page(%d, %d): %v, want %v", c.after, c.limit, got, c.want)
		}
	}
	other := history.New(f.v, &source{})
	if got, want := f.places(other), f.places(f.s); !slices.Equal(got, want) || len(got) != 4 {
		t.Fatalf("another store reads %v, this one %v", got, want)
	}
	f.record(runLog, "e5")
	if got := f.places(other); len(got) != 5 {
		t.Fatalf("another store reads %d events after a fifth, want 5", len(got))
	}
}

// A record reserved whose line is not whole yet ends a reader's page
// before it; the next writer's Repair drops it and cuts a torn line back
// off its file, keeping the bytes in the quarantine, so the seq is given
// again and nothing is read twice.
func TestRepairDropsAReservationNeverWritten(t *testing.T) {
	f := newFixture(t)
	f.record(runLog, "e1")
	f.record(runLog, "e2")
	whole := f.size(runLog)
	raw := line("step_completed", "torn", "id-3", 3)
	f.locked(func() error {
		_, err := f.history().Reserve(runLog, whole, len(raw))
		return err
	})
	f.appendRaw(runLog, raw[:10]) // the writer died here
	h := f.history()
	if h.Len() != 3 {
		t.Fatalf("Len %d with a reservation, want 3", h.Len())
	}
	if recs, err := h.Page(0, 10); err != nil || len(recs) != 2 {
		t.Fatalf("a page over a torn reservation: %d records, %v", len(recs), err)
	}
	f.locked(f.history().Repair)
	if h.Len() != 2 || f.size(runLog) != whole {
		t.Fatalf("after Repair: Len %d, run.jsonl %d bytes, want 2 and %d", h.Len(), f.size(runLog), whole)
	}
	kept, _ := filepath.Glob(filepath.Join(f.dir, vault.QuarantineDir, "*"))
	if len(kept) != 1 {
		t.Fatalf("the quarantine holds %v, want the torn line", kept)
	}
	if seq := f.record(runLog, "e3"); seq != 3 {
		t.Fatalf("the next event took seq %d, want 3", seq)
	}
	if err := h.Verify(); err != nil {
		t.Fatal(err)
	}
}

// A history rebuilt from the files keeps the seq each line carries where
// it can, gives every other line one free seq (a line written by hand
// before a numbered one the highest free below it, the others the lowest
// free after the line before them), and gives the same files twice.
func TestRebuildNumbersEveryLineOnce(t *testing.T) {
	f := newFixture(t)
	f.appendRaw(events, line("playbook_created", "L1", "id-1", 1))
	f.hand(events, "E2")
	f.appendRaw(runLog, line("run_created", "R1", "id-2", 2))
	f.hand(runLog, "R2")
	f.appendRaw(runLog, line("step_started", "R3", "id-6", 6))
	f.appendRaw(runLog, line("step_started", "R4", "id-2b", 2)) // its seq taken
	f.appendRaw(runLog, `{"event":"not whole`)                  // a torn last line is no event
	want := []string{
		"1 id-1 L1",
		"2 id-2 R1",
		"3 " + bookUID + "_2 E2", // the lowest free after L1
		"4 id-2b R4",             // none free after R3: the lowest free
		"5 " + runID + "_2 R2",   // the highest free below R3
		"6 id-6 R3",
	}
	if got := f.places(f.s); !slices.Equal(got, want) {
		t.Fatalf("rebuilt:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	once := f.derived()
	if err := os.RemoveAll(filepath.Join(f.dir, history.Dir)); err != nil {
		t.Fatal(err)
	}
	again := history.New(f.v, &source{})
	if got := f.places(again); !slices.Equal(got, want) {
		t.Fatalf("rebuilt again: %v", got)
	}
	if f.derived() != once {
		t.Fatal("two rebuilds of the same files, two histories")
	}
}

// Lines written by hand at the end of a file are numbered, in the file's
// order, when a reader asks (AdoptFor, once for a file of the same size)
// or a writer adopts them; reads present them with their seq and the id,
// run and place a recorded line carries.
func TestHandWrittenLinesAreAdopted(t *testing.T) {
	f := newFixture(t)
	f.record(runLog, "e1")
	f.hand(runLog, "h2")
	f.hand(runLog, strings.Repeat("long ", 1000)+"h3") // past the first bytes read from the end
	each := func() []string {
		var out []string
		err := f.s.EachEvent("finance", runLog, func(ln *event.Line) error {
			out = append(out, fmt.Sprintf("%d %s %s", ln.Seq, ln.ID, ln.Run))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := each(); !slices.Equal(got, []string{"1 id-1 ", "0  ", "0  "}) {
		t.Fatalf("before they are numbered: %q", got)
	}
	adopts := 0
	adopt := func() error {
		adopts++
		return f.v.Locked(func() error { return f.s.Adopt("finance", runLog) })
	}
	for range 2 {
		if err := f.s.AdoptFor(runLog, adopt); err != nil {
			t.Fatal(err)
		}
	}
	if adopts != 1 {
		t.Fatalf("a reader adopted %d times, want once", adopts)
	}
	want := []string{"1 id-1 ", "2 " + runID + "_2 " + runID, "3 " + runID + "_3 " + runID}
	if got := each(); !slices.Equal(got, want) {
		t.Fatalf("after: %q, want %q", got, want)
	}
	ln, err := f.s.NthEvent("finance", runLog, 3)
	if err != nil || ln == nil || ln.Seq != 3 || ln.ID != runID+"_3" || !strings.HasSuffix(ln.Detail, "h3") {
		t.Fatalf("NthEvent 3: %+v, %v", ln, err)
	}
	if ln, err := f.s.NthEvent("finance", runLog, 4); ln != nil || err != nil {
		t.Fatalf("NthEvent past the end: %+v, %v", ln, err)
	}
	if ln, err := f.s.NthEvent("finance", "runs/gone/run.jsonl", 1); ln != nil || err != nil {
		t.Fatalf("NthEvent of no file: %+v, %v", ln, err)
	}
	// A writer numbers what was written by hand before its own line.
	f.hand(runLog, "h4")
	f.locked(func() error { return f.s.Adopt("finance", runLog) })
	if seq := f.record(runLog, "e5"); seq != 5 {
		t.Fatalf("the event after a line written by hand took seq %d, want 5", seq)
	}
	if err := f.s.AdoptFor(runLog, adopt); err != nil || adopts != 1 {
		t.Fatalf("a file that ends with a numbered line was adopted again (%d, %v)", adopts, err)
	}
	if got := f.places(f.s); len(got) != 5 || got[3] != "4 "+runID+"_4 h4" {
		t.Fatalf("history %q", got)
	}
}

// After git takes event lines back (here git checkout), the history points
// past its file: Stale says so, and the next write's FollowGit throws it
// away, tells the source, and rebuilds it from the files, so the next event
// takes the next free seq. While git is as quire left it, FollowGit looks
// at nothing but git's stat.
func TestFollowGitRebuildsWhatGitTookBack(t *testing.T) {
	f := newFixture(t)
	f.record(runLog, "e1")
	f.commitLog("e1")
	f.record(runLog, "e2")
	f.record(runLog, "e3")
	if stale, err := f.s.Stale(); err != nil || len(stale) != 0 {
		t.Fatalf("stale before git: %v, %v", stale, err)
	}
	f.git("checkout", "--", runLog)
	if stale, err := f.s.Stale(); err != nil || !slices.Equal(stale, []string{"finance"}) {
		t.Fatalf("stale after git checkout: %v, %v", stale, err)
	}
	if seq := f.record(runLog, "e2 again"); seq != 2 {
		t.Fatalf("the event after git checkout took seq %d, want 2", seq)
	}
	if !slices.Equal(f.src.forgot, []string{"finance"}) {
		t.Fatalf("the source was told to forget %v", f.src.forgot)
	}
	if got := f.places(f.s); len(got) != 2 || got[1] != "2 id-2 e2 again" {
		t.Fatalf("history %q", got)
	}
	// The stamp is true again: a change no git command made is not looked
	// for by a write (quire check's Stale finds it).
	f.commitLog("e2")
	if err := os.Truncate(filepath.Join(f.dir, runLog), 10); err != nil {
		t.Fatal(err)
	}
	f.locked(f.s.FollowGit)
	if len(f.src.forgot) != 1 {
		t.Fatalf("FollowGit looked past git's stat: forgot %v", f.src.forgot)
	}
	if stale, _ := f.s.Stale(); !slices.Equal(stale, []string{"finance"}) {
		t.Fatalf("Stale after a hand cut: %v", stale)
	}
}

// A commit that fails (git's branch lock held by another program) leaves
// its paths in .quire/uncommitted; the next commit takes them along and
// says so, and FinishPending commits them alone.
func TestCommitLeavesWhatFailsPending(t *testing.T) {
	f := newFixture(t)
	t.Cleanup(vault.SetGitLockWait(50 * time.Millisecond))
	for _, name := range []string{"a", "b", "c"} {
		if err := os.WriteFile(filepath.Join(f.dir, name+".md"), []byte(name+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lock := filepath.Join(f.dir, ".git", "refs", "heads", "main.lock")
	commit := func(paths ...string) (string, bool) {
		var id string
		var ok bool
		f.locked(func() error {
			id, ok = f.s.Commit(paths, vault.Signature{Name: "ana", When: time.Now()}, vault.Message{Subject: "write " + strings.Join(paths, " ")})
			return nil
		})
		return id, ok
	}
	pending := func() string {
		data, _ := os.ReadFile(filepath.Join(f.dir, ".quire", "uncommitted"))
		return string(data)
	}
	os.WriteFile(lock, nil, 0o644)
	if id, ok := commit("a.md"); ok || id != "" {
		t.Fatalf("a commit under git's lock answered %q, %v", id, ok)
	}
	if pending() != "a.md\n" {
		t.Fatalf(".quire/uncommitted holds %q", pending())
	}
	os.Remove(lock)
	id, ok := commit("b.md")
	if !ok || id == "" {
		t.Fatal("the next commit failed")
	}
	if files := f.git("show", "--format=%B", "--name-only", id); !strings.Contains(files, "Also commits what an earlier write left uncommitted: a.md") ||
		!strings.Contains(files, "\na.md\n") || !strings.Contains(files, "\nb.md\n") {
		t.Fatalf("the next commit:\n%s", files)
	}
	if pending() != "" {
		t.Fatalf(".quire/uncommitted still holds %q", pending())
	}
	os.WriteFile(lock, nil, 0o644)
	commit("c.md")
	os.Remove(lock)
	f.locked(func() error {
		id, paths, err := f.s.FinishPending(vault.Signature{Name: "vault-janitor", When: time.Now()})
		if err != nil || id == "" || !slices.Equal(paths, []string{"c.md"}) {
			t.Errorf("FinishPending: %q %v %v", id, paths, err)
		}
		if id, paths, err := f.s.FinishPending(vault.Signature{Name: "vault-janitor", When: time.Now()}); id != "" || paths != nil || err != nil {
			t.Errorf("FinishPending with nothing pending: %q %v %v", id, paths, err)
		}
		return nil
	})
	if s := f.git("log", "-1", "--format=%an %s"); s != "vault-janitor Commit what earlier writes left uncommitted\n" {
		t.Fatalf("last commit: %q", s)
	}
	if s := f.git("status", "--porcelain", "--", "a.md", "b.md", "c.md"); s != "" {
		t.Fatalf("left uncommitted: %s", s)
	}
}

// quire check reads a history as it is on disk (Peek, never rebuilt) and
// Verify names the first record whose line is not whole.
func TestVerifyNamesARecordWithoutItsLine(t *testing.T) {
	f := newFixture(t)
	if _, ok, err := f.s.Peek("finance"); ok || err != nil {
		t.Fatalf("Peek before any history: %v, %v", ok, err)
	}
	f.record(runLog, "e1")
	cut := f.size(runLog)
	f.record(runLog, "e2")
	h, ok, err := f.s.Peek("finance")
	if !ok || err != nil || h.Len() != 2 || h.Verify() != nil {
		t.Fatalf("Peek: %v, %v, Verify %v", ok, err, h.Verify())
	}
	if err := os.Truncate(filepath.Join(f.dir, runLog), cut+5); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("record 2 points at %s byte %d, where no whole line is", runLog, cut)
	if err := h.Verify(); err == nil || err.Error() != want {
		t.Fatalf("Verify: %v, want %s", err, want)
	}
}

// Replay of files held in memory (a commit's blobs) gives the history a
// rebuild of the same files gives: the same seqs, ids and lines.
func TestReplayGivesWhatARebuildGives(t *testing.T) {
	f := newFixture(t)
	f.appendRaw(events, line("playbook_created", "L1", "id-1", 1))
	f.hand(events, "E2")
	f.appendRaw(runLog, line("run_created", "R1", "id-2", 2))
	f.hand(runLog, "R2")
	f.appendRaw(runLog, line("step_started", "R3", "id-6", 6))
	f.appendRaw(runLog, line("step_started", "R4", "id-2b", 2))
	rebuilt := f.places(f.s)
	var files []history.File
	for _, name := range []string{events, runLog} {
		data, err := os.ReadFile(filepath.Join(f.dir, name))
		if err != nil {
			t.Fatal(err)
		}
		owner, run := f.src.Owner(name)
		files = append(files, history.File{Name: name, Data: data, Owner: owner, Run: run})
	}
	recs, err := history.Replay(files)
	if err != nil {
		t.Fatal(err)
	}
	var replayed []string
	for _, r := range recs {
		replayed = append(replayed, fmt.Sprintf("%d %s %s", r.Seq, r.Line.ID, r.Line.Detail))
	}
	if !slices.Equal(replayed, rebuilt) {
		t.Fatalf("replayed:\n%s\nrebuilt:\n%s", strings.Join(replayed, "\n"), strings.Join(rebuilt, "\n"))
	}
}

// A file the index never held that a git command removes (git stash -u
// takes the untracked files along) is looked at too: the history, which
// numbered its lines, is rebuilt, and the next event takes the seq the
// removed line had.
func TestFollowGitSeesAnUntrackedFileGitRemoved(t *testing.T) {
	f := newFixture(t)
	f.record(runLog, "e1")
	f.commitLog("e1")
	if seq := f.record(events, "p1, never committed"); seq != 2 {
		t.Fatalf("the playbook's event took seq %d", seq)
	}
	f.git("-c", "user.name=p", "-c", "user.email=p@x", "stash", "-u", "-q")
	if _, err := os.Stat(filepath.Join(f.dir, events)); !os.IsNotExist(err) {
		t.Fatalf("git stash -u left %s: %v", events, err)
	}
	if seq := f.record(runLog, "e2"); seq != 2 {
		t.Fatalf("the event after git stash -u took seq %d, want 2", seq)
	}
}

// A group of writes takes the branch's lock (refs/heads/<branch>.lock)
// at its first commit, and its later writes follow git: that lock is
// quire's own, not a git command's, and git is not taken to have moved
// (at 100,000 runs every write of a group of 16 clients looked at every
// history file again, 8 ms each). A branch git moves is seen.
func TestTheBranchLockIsNotGitMoving(t *testing.T) {
	f := newFixture(t)
	f.record(runLog, "e1")
	f.commitLog("e1")
	if f.s.GitMoved() {
		t.Fatal("git moved after quire's own commit")
	}
	branch := strings.TrimSpace(strings.TrimPrefix(f.git("symbolic-ref", "HEAD"), "refs/heads/"))
	lock := filepath.Join(f.dir, ".git", "refs", "heads", branch+".lock")
	time.Sleep(10 * time.Millisecond) // a folder's new mtime differs
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if f.s.GitMoved() {
		t.Fatal("the branch's lock was taken for git moving")
	}
	os.Remove(lock)
	f.git("update-ref", "refs/heads/"+branch, "HEAD")
	f.git("-c", "user.name=p", "-c", "user.email=p@x", "commit", "-q", "--allow-empty", "-m", "a person's")
	if !f.s.GitMoved() {
		t.Fatal("a person's commit moved the branch unseen")
	}
}
