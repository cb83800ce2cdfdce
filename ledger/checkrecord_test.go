package ledger

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire/internal/gittest"
)

// TestIncrementalCheckAnswersAsTheFullOne changes a vault at random,
// through quire and by hand (lines and state edited in place, files
// restored with git checkout, touched, committed with git, reset), and
// after each step asks quire check twice and quire check --full: the
// check that answers from the last passing check's record (and the one
// after it, which reads nothing that changed) says what the full one
// says.
func TestIncrementalCheckAnswersAsTheFullOne(t *testing.T) {
	steps, seeds := 20, 1
	if os.Getenv("QUIRE_TEST_LONG") != "" {
		steps, seeds = 120, 5
	}
	for seed := int64(1); seed <= int64(seeds); seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { incrementalChecks(t, seed, steps) })
	}
}

func incrementalChecks(t *testing.T, seed int64, steps int) {
	rng := rand.New(rand.NewSource(seed))
	f := newFixture(t)
	f.git("config", "user.name", "rui")
	f.git("config", "user.email", "rui@example.com")
	var did []string
	answered, edited := 0, false
	away := "" // a run folder moved out of the vault, put back after its checks
	aside := filepath.Join(t.TempDir(), "run")
	for step := 0; step < steps; step++ {
		if away != "" {
			// list_runs refuses a run whose folder is gone.
			if err := os.Rename(aside, away); err != nil {
				t.Fatal(err)
			}
			away = ""
		}
		runs := f.call("list_runs", `{"playbook":"finance","limit":1000}`).(*RunPage).Runs
		var active []*Run
		for _, r := range runs {
			if r.State == "active" {
				active = append(active, r)
			}
		}
		file := func(r *Run, name string) string { return filepath.Join(f.dir, filepath.FromSlash(r.Path), name) }
		k := rng.Intn(18)
		// putBack makes .git/index HEAD's again and the work tree the
		// index's, without what git does not track.
		putBack := func() {
			f.git("reset", "-q")
			f.git("checkout", "--", ".")
			f.git("clean", "-fdq", "--", "playbook-runs", "vault")
			edited = false
		}
		if edited && (k <= 2 || k == 7) {
			// quire refuses to write over a committed line changed by
			// hand (the write guard), and into a folder that holds a
			// link: put them back first.
			putBack()
		}
		switch {
		case k < 2 || len(runs) == 0:
			f.start()
			did = append(did, "start")
		case k == 2 && len(active) > 0:
			r := active[rng.Intn(len(active))]
			f.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_completed","step":"do/1/work","actor":"agent-7"}`, r.RunID))
			did = append(did, "step")
		case k == 3:
			// A line that is no event, appended by hand.
			r := runs[rng.Intn(len(runs))]
			fh, _ := os.OpenFile(file(r, "run.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
			fh.WriteString("not an event\n")
			fh.Close()
			did = append(did, "bad line")
		case k == 4:
			// run.state.json edited in place, its size kept.
			r := runs[rng.Intn(len(runs))]
			data, _ := os.ReadFile(file(r, "run.state.json"))
			os.WriteFile(file(r, "run.state.json"), []byte(strings.Replace(string(data), "agent-7", "agent-8", 1)), 0o644)
			did = append(did, "state edited")
		case k == 5:
			// What was edited by hand restored from the commit.
			f.git("checkout", "--", ".") // a link made stays: edited stands
			did = append(did, "git checkout")
		case k == 6:
			r := runs[rng.Intn(len(runs))]
			now := time.Now().Add(-time.Duration(rng.Intn(3)) * time.Second)
			os.Chtimes(file(r, "definition.md"), now, now)
			did = append(did, "touch")
		case k == 7 && len(active) > 0:
			putBack()
			f.handWrite(active[rng.Intn(len(active))], "step_completed", "by/hand", "written by hand")
			f.git("commit", "-qam", "a step written by hand")
			did = append(did, "git commit")
		case k == 8:
			if n := strings.Count(f.git("log", "--oneline"), "\n"); n > 6 {
				f.git("reset", "-q", "--hard", "HEAD~1")
				did = append(did, "git reset")
			}
		case k == 9:
			// A committed line changed in place, its size and times put
			// back: only the change time tells.
			r := runs[rng.Intn(len(runs))]
			p := file(r, "run.jsonl")
			fi, _ := os.Stat(p)
			data, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(data), `"event":"run_created"`, `"event":"run_createX"`, 1)), 0o644)
			os.Chtimes(p, fi.ModTime(), fi.ModTime())
			edited = true
			did = append(did, "line changed, times put back")
		case k == 10:
			// The index of things edited by hand.
			p := filepath.Join(f.dir, "vault", "00-index.jsonl")
			data, _ := os.ReadFile(p)
			if rng.Intn(2) == 0 {
				os.WriteFile(p, append(data, "{not an index line\n"...), 0o644)
			} else {
				os.WriteFile(p, []byte(strings.Replace(string(data), `"type":"playbook-run"`, `"type":"playbook-rux"`, 1)), 0o644)
			}
			did = append(did, "index edited")
		case k == 11:
			// A file of a run's folder: context.md edited, or a file of
			// its own in artifacts/ or beside the capsule's entries.
			r := runs[rng.Intn(len(runs))]
			switch rng.Intn(3) {
			case 0:
				fh, _ := os.OpenFile(file(r, "context.md"), os.O_WRONLY|os.O_APPEND, 0)
				fh.WriteString("by hand\n")
				fh.Close()
			case 1:
				os.WriteFile(file(r, "artifacts/note.txt"), []byte("mine\n"), 0o644)
			case 2:
				os.Symlink("/etc/hosts", file(r, "hosts"))
				edited = true
			}
			did = append(did, "run folder file")
		case k == 12:
			// Put back what was edited, and a check that passes.
			putBack()
			did = append(did, "clean")
		case k == 13 || k == 14:
			// An entry of .git/index set to another blob by hand, and
			// committed with git (k 13): HEAD's tree of a run changed, and
			// no file of the work tree did.
			if k == 13 {
				putBack() // git commit takes the whole index: this entry alone
			}
			r := runs[rng.Intn(len(runs))]
			other := filepath.Join(t.TempDir(), "context.md")
			os.WriteFile(other, []byte(fmt.Sprintf("set by hand at step %d\n", step)), 0o644)
			blob := strings.TrimSpace(f.git("hash-object", "-w", other))
			f.git("update-index", "--cacheinfo", "100644,"+blob+","+r.Path+"/context.md")
			edited = true // quire's next write would commit what the index holds
			did = append(did, "git update-index")
			if k == 13 {
				f.git("commit", "-qm", "context.md set by hand")
				did = append(did, "git commit")
			}
		case k == 15:
			// A run folder deleted whole.
			away = filepath.Join(f.dir, filepath.FromSlash(runs[rng.Intn(len(runs))].Path))
			if err := os.Rename(away, aside); err != nil {
				t.Fatal(err)
			}
			did = append(did, "run folder removed")
		case k == 16:
			// A run's file taken out of .git/index, kept in the work tree
			// (putBack tracks it again).
			f.git("rm", "-q", "--cached", "--ignore-unmatch", "--", runs[rng.Intn(len(runs))].Path+"/definition.md")
			edited = true
			did = append(did, "git rm --cached")
		case k == 17:
			// A file beside the run folders, committed with git, then
			// deleted by hand.
			notes := filepath.Join(f.dir, "playbook-runs", "NOTES.md")
			if _, err := os.Stat(notes); err != nil {
				os.WriteFile(notes, []byte(fmt.Sprintf("notes at step %d\n", step)), 0o644)
				f.git("add", "playbook-runs/NOTES.md")
				f.git("commit", "-qm", "notes", "--", "playbook-runs/NOTES.md")
				did = append(did, "notes committed")
			} else {
				os.Remove(notes)
				did = append(did, "notes deleted")
			}
		}
		// A compaction the step's writes started in the background
		// changes .git/objects, whose stamps a check compares: it ends
		// first, and the next waits until the checks are done (CI, once:
		// the check after the full one read the vault again).
		release := gittest.HoldCompaction(f.dir)
		// Then past the record's racy window, so that a check may answer
		// from it: the changes above, and the compaction's, are then seen
		// by their stamps alone. (CI, once more, with the wait the other
		// way round: a compaction that ended as the checks began left
		// .git/objects' stamps within 100 ms of all three, and the fourth
		// read the vault again, as it must.)
		time.Sleep(120 * time.Millisecond)
		// The check from the last passing check's record first (it reads
		// what changed since), then the full one, then the check after
		// that (from the full one's record when it passed).
		first := checkWords(t, f, CheckArgs{})
		full := checkWords(t, f, CheckArgs{Full: true})
		if first != full {
			t.Fatalf("after %v, incremental:\n%s\nquire check --full:\n%s", did, first, full)
		}
		if got := checkWords(t, f, CheckArgs{}); got != full {
			t.Fatalf("after %v, again:\n%s\nquire check --full:\n%s", did, got, full)
		}
		if clean(full) {
			// A clean vault: the check after the full one answers from its
			// record, reading nothing.
			rep, err := f.l.CheckWith(CheckArgs{})
			if err != nil || rep.Read == nil || rep.Read.Vault || rep.Read.Runs != 0 {
				t.Fatalf("after %v, a clean vault unchanged since: read %+v, %v", did, rep.Read, err)
			}
			answered++
		}
		release()
	}
	t.Logf("%d steps answered from the record", answered)
}

// checkWords is what quire check answers, as a person reads it.
func checkWords(t *testing.T, f *fixture, a CheckArgs) string {
	t.Helper()
	rep, err := f.l.CheckWith(a)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, p := range rep.Problems {
		b.WriteString(p.String() + "\n")
	}
	for _, w := range rep.Warnings {
		b.WriteString("warning: " + w.String() + "\n")
	}
	fmt.Fprintf(&b, "%d runs, %d events", rep.Runs, rep.Events)
	return b.String()
}

// quire check --history with nothing new since a walk that found no
// problem reads its mark (the commit it ended at), not the record of
// every commit proved; a record deleted or changed since is not trusted
// by the mark, and the whole history is proved again.
func TestCheckHistoryNothingNewReadsTheMark(t *testing.T) {
	f := newFixture(t)
	f.start()
	first, problems, err := f.l.CheckHistory()
	if err != nil || len(problems) > 0 || first.Commits == 0 {
		t.Fatalf("the first walk: %+v, %v, %v", first, problems, err)
	}
	again, problems, err := f.l.CheckHistory()
	if err != nil || len(problems) > 0 || again.Commits != 0 || again.Reads != 0 || again.Proved != first.Proved || again.Head != first.Head {
		t.Fatalf("nothing new: %+v (first %+v), %v, %v", again, first, problems, err)
	}
	f.start()
	next, _, _ := f.l.CheckHistory()
	if next.Commits != 1 || next.Proved != first.Proved+1 {
		t.Fatalf("one new commit: %+v", next)
	}
	os.Remove(filepath.Join(f.dir, ".quire", "check-history.json"))
	whole, _, _ := f.l.CheckHistory()
	if whole.Commits != next.Proved {
		t.Fatalf("the record deleted: %+v, want the %d commits proved again", whole, next.Proved)
	}
}

// clean says whether checkWords' answer names no problem (warnings are
// none).
func clean(words string) bool {
	lines := strings.Split(words, "\n")
	for _, l := range lines[:len(lines)-1] {
		if !strings.HasPrefix(l, "warning: ") {
			return false
		}
	}
	return true
}

// A check whose record saw playbook-runs/ with the stamp it has now takes
// the folder's names from the record rather than listing 100,000 of them:
// a run folder copied in by hand, or removed, after a passing check
// changes the folder's stamp, and the next check finds it as the full one
// does.
func TestACheckSeesARunFolderMadeOrRemovedSinceItsRecord(t *testing.T) {
	f := newFixture(t)
	r := f.start()
	defer gittest.HoldCompaction(f.dir)()
	time.Sleep(120 * time.Millisecond) // past the racy window of the start's stamps
	if words := checkWords(t, f, CheckArgs{}); !clean(words) {
		t.Fatalf("the vault as made: %s", words)
	}
	time.Sleep(120 * time.Millisecond)
	if rep, err := f.l.CheckWith(CheckArgs{}); err != nil || rep.Read.Vault {
		t.Fatalf("nothing changed: read %+v, %v; want the record's answer", rep.Read, err)
	}
	copied := filepath.Join(f.dir, "playbook-runs", "copied-by-hand")
	if err := os.CopyFS(copied, os.DirFS(filepath.Join(f.dir, filepath.FromSlash(r.Path)))); err != nil {
		t.Fatal(err)
	}
	got, full := checkWords(t, f, CheckArgs{}), checkWords(t, f, CheckArgs{Full: true})
	if got != full || !strings.Contains(got, "playbook-runs/copied-by-hand: the run folder is not in vault/00-index.jsonl") {
		t.Fatalf("a run folder copied in:\n%s\nquire check --full:\n%s", got, full)
	}
	if err := os.RemoveAll(copied); err != nil {
		t.Fatal(err)
	}
	time.Sleep(120 * time.Millisecond)
	if got, full := checkWords(t, f, CheckArgs{}), checkWords(t, f, CheckArgs{Full: true}); got != full || !clean(got) {
		t.Fatalf("the copy removed:\n%s\nquire check --full:\n%s", got, full)
	}
	time.Sleep(120 * time.Millisecond)
	if err := os.Rename(filepath.Join(f.dir, filepath.FromSlash(r.Path)), filepath.Join(t.TempDir(), "run")); err != nil {
		t.Fatal(err)
	}
	got, full = checkWords(t, f, CheckArgs{}), checkWords(t, f, CheckArgs{Full: true})
	if got != full || clean(got) {
		t.Fatalf("the run's folder removed:\n%s\nquire check --full:\n%s", got, full)
	}
}
