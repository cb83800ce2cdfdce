package checker_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire/ledger/checker"
	"quire/ledger/history"
	"quire/runfolder"
	"quire/vault"
)

// host is a runtime of its own around a bare vault: the checker needs no
// ledger, only what Host says.
type host struct {
	v         *vault.Vault
	stale     []string // the histories that point past their files
	reindexed int
	progress  []string
}

func (h *host) ReadLocked(fn func() error) error                       { return h.v.LockedRead(fn) }
func (h *host) Write(fn func() error) error                            { return h.v.Locked(fn) }
func (h *host) Folder(rel string) runfolder.Folder                     { return runfolder.Folder{V: h.v, Rel: rel} }
func (h *host) Histories() checker.Histories                           { return h }
func (h *host) PointPast(func(string) (int64, bool)) ([]string, error) { return h.stale, nil }
func (h *host) Disagrees(string) string                                { return "" }
func (h *host) DisagreesFrom(string, int64, history.Mark, func(string) bool) (string, history.Mark) {
	return "", history.Mark{}
}
func (h *host) Pending() []string                                           { return nil }
func (h *host) Reindex() error                                              { h.reindexed++; return nil }
func (h *host) RunWarnings(vault.Entry, *runfolder.State) []checker.Problem { return nil }
func (h *host) Now() time.Time                                              { return time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC) }
func (h *host) Progress(task, unit string, done, total int) {
	h.progress = append(h.progress, fmt.Sprintf("%s: %d/%d %s", task, done, total, unit))
}

func newVault(t *testing.T) (*vault.Vault, *host, *checker.Checker) {
	t.Helper()
	v, err := vault.Init(t.TempDir(), "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	h := &host{v: v}
	return v, h, checker.New(v, h)
}

func write(t *testing.T, v *vault.Vault, rel, content string) {
	t.Helper()
	abs := v.Abs(rel)
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(abs, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func problems(ps []checker.Problem) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return strings.Join(out, "\n")
}

// A run folder made by hand, outside the index: quire check names each
// rule it breaks at its file and line, and what it cannot judge.
func TestCheckARunFolderMadeByHand(t *testing.T) {
	v, h, c := newVault(t)
	const run = "playbook-runs/close-r1"
	write(t, v, run+"/definition.md", "---\nuid: r1\nplaybook_version: one\n---\n")
	write(t, v, run+"/run.jsonl", `{"event":"step_completed","timestamp":"2026-11-01T09:30:00Z","step":"a","detail":"first"}`+"\n"+
		`{"event":"archived","timestamp":"2026-11-01T09:31:00Z","step":null}`+"\n"+
		`{"event":"step_completed","timestamp":"2026-11-01T09:32:00Z","step":null,"detail":"late"}`+"\n"+
		`{"event":"step_comp`)
	write(t, v, run+"/artifacts", "a file where a folder goes")
	h.stale = []string{"finance"}
	rep, err := c.Check()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		run + ": the run folder is not in vault/00-index.jsonl",
		run + ": rule 6: the run folder lacks context.md",
		run + ": rule 6: the run folder lacks thread.md",
		run + ": rule 6: the run folder lacks run.state.json; quire janitor (or quire reindex) derives it from run.jsonl and definition.md and commits it",
		run + "/artifacts: is a file; the capsule wants a folder",
		run + "/definition.md: front matter lacks the required field(s) playbook, member_of, binding, started, executor, authorized_by",
		run + `/definition.md: playbook_version "one" is not a version; rule 2 pins a concrete version`,
		run + "/run.jsonl:1: the first event is step_completed; a run's log begins with run_created",
		run + `/run.jsonl:2: no "detail" field: every line holds the capsule's minimum fields event, timestamp, step (null where there is none) and detail`,
		run + "/run.jsonl:3: rule 5: a step_completed line after the run was archived at line 2; archived runs are read-only",
		run + "/run.jsonl:4: a torn last line (a write cut short); the next write repairs it",
		".quire/history/finance.seq: the history of finance points past the files it indexes (a git stash, reset or checkout took lines back); the next write, or quire reindex, rebuilds it",
		run + ": not in vault/00-index.jsonl, and cannot be added to it: it lacks context.md",
	}
	got := problems(rep.Problems)
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("check lacks %q", w)
		}
	}
	if rep.Runs != 1 || rep.Events != 3 || len(rep.Problems) != len(want) || t.Failed() {
		t.Fatalf("%d runs, %d events, %d problems:\n%s", rep.Runs, rep.Events, len(rep.Problems), got)
	}
}

// What a writer that stopped in the middle leaves is reported by quire
// check and put right by the repair pass, inside the host's write, which
// says what it did; then check finds nothing.
func TestRepairFinishesWhatAStoppedWriterLeft(t *testing.T) {
	v, h, c := newVault(t)
	write(t, v, "playbook-runs/.new-r2/definition.md", "---\nuid: r2\n---\n")
	write(t, v, "vault/.00-index.jsonl.tmp123", "half")
	rep, err := c.Check()
	if err != nil {
		t.Fatal(err)
	}
	got := problems(rep.Problems)
	for _, w := range []string{
		"playbook-runs/.new-r2: a staging folder a run_definition left when it stopped before the folder was complete; the run was never acknowledged, and quire janitor removes it",
		"vault/.00-index.jsonl.tmp123: a temporary file of a write that stopped before its rename; quire janitor removes it",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("check lacks %q:\n%s", w, got)
		}
	}
	fixed, err := c.Repair()
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(fixed.Repaired, "\n"); !strings.Contains(s, "removed the staging folder playbook-runs/.new-r2 of a run_definition that stopped before its folder was complete") ||
		!strings.Contains(s, "removed the temporary file vault/.00-index.jsonl.tmp123 of a write that stopped before its rename") || len(fixed.Left) != 0 {
		t.Fatalf("repair: %+v", fixed)
	}
	if h.reindexed != 0 {
		t.Fatalf("repair reindexed %d times with no history stale", h.reindexed)
	}
	if rep, err := c.Check(); err != nil || len(rep.Problems) != 0 {
		t.Fatalf("check after the repair: %v\n%s", err, problems(rep.Problems))
	}
}

// check --history proves each commit against its parent, keeps what it
// proved in .quire/check-history.json, and proves only the new commits the
// next time, still reporting what it found.
func TestCheckHistoryProvesEachCommitOnce(t *testing.T) {
	v, h, c := newVault(t)
	const run = "playbook-runs/close-r3"
	commit := func(files map[string]string) string {
		t.Helper()
		var paths []string
		for rel, content := range files {
			write(t, v, rel, content)
			paths = append(paths, rel)
		}
		var id string
		err := v.Locked(func() (err error) {
			id, err = v.Commit(paths, vault.Signature{Name: "mallory", When: time.Now()}, "by hand")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	line := func(seq int, detail string) string {
		return fmt.Sprintf(`{"event":"step_completed","timestamp":"2026-11-01T09:%02d:00Z","step":null,"detail":%q,"seq":%d}`+"\n", seq, detail, seq)
	}
	commit(map[string]string{run + "/run.jsonl": line(1, "one"), run + "/definition.md": "---\nuid: r3\n---\n"})
	commit(map[string]string{run + "/run.jsonl": line(1, "one") + line(2, "two")})
	rewrite := commit(map[string]string{run + "/run.jsonl": line(1, "ONE") + line(2, "two") + line(3, "three")})
	def := commit(map[string]string{run + "/definition.md": "---\nuid: r3\nplaybook_version: 9\n---\n"})
	late := commit(map[string]string{run + "/run.jsonl": line(1, "ONE") + line(2, "two") + line(3, "three") + line(2, "again")})

	rep, found, err := c.CheckHistory()
	if err != nil {
		t.Fatal(err)
	}
	want := "commit " + rewrite[:12] + ": " + run + "/run.jsonl:1: rule 3: committed line 1 of run.jsonl was changed; run.jsonl is append-only (append a correction instead)\n" +
		"commit " + def[:12] + ": " + run + "/definition.md:3: rule 2: definition.md changed after its run began; it pins the run's definition and version and is written once\n" +
		"commit " + late[:12] + ": " + run + "/run.jsonl:4: seq 2 comes after seq 3 (line 3); a run's lines are in seq order"
	if got := problems(found); got != want {
		t.Fatalf("history problems:\n%s\nwant:\n%s", got, want)
	}
	head, _ := v.HeadCommit()
	if rep.Head != head.String() || rep.Commits != 6 || rep.Proved != 6 || rep.Note != "" {
		t.Fatalf("the walk: %+v", rep)
	}
	if n := len(h.progress); n != 6 || h.progress[n-1] != "check --history: proving the commits: 6/6 commits" {
		t.Fatalf("progress: %q", h.progress)
	}
	state, err := os.ReadFile(v.Abs(".quire/check-history.json"))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(state); !strings.HasPrefix(s, `{"head":"`+head.String()+`","proved":"`) ||
		!strings.Contains(s, `","problems":[{"commit":"`+rewrite+`","path":"`+run+`/run.jsonl","line":1,"message":"rule 3: committed line 1`) {
		t.Fatalf(".quire/check-history.json: %s", s)
	}

	// Again: nothing new proved, only HEAD's commit read, the same problems.
	rep, again, err := c.CheckHistory()
	if err != nil || rep.Commits != 0 || rep.Proved != 6 || rep.Reads > 1 || problems(again) != want {
		t.Fatalf("second walk: %+v %v\n%s", rep, err, problems(again))
	}
	// A new commit: only it is proved.
	removed := commit(map[string]string{run + "/run.jsonl": line(1, "ONE")})
	rep, found, err = c.CheckHistory()
	if err != nil || rep.Commits != 1 || rep.Proved != 7 {
		t.Fatalf("third walk: %+v %v", rep, err)
	}
	if got, w := problems(found), want+"\ncommit "+removed[:12]+": "+run+"/run.jsonl:2: rule 3: committed lines 2 to 4 of run.jsonl were removed; run.jsonl is append-only"; got != w {
		t.Fatalf("history problems:\n%s\nwant:\n%s", got, w)
	}
	// An unreadable file: said, and the whole history proved again.
	write(t, v, ".quire/check-history.json", "{")
	if rep, found, err = c.CheckHistory(); err != nil || rep.Commits != 7 || len(found) != 4 ||
		rep.Note != ".quire/check-history.json was unreadable; proved the whole history again" {
		t.Fatalf("after the file was spoilt: %+v %v\n%s", rep, err, problems(found))
	}
}
