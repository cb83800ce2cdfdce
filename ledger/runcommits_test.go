package ledger

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// subjects lists a run's commits as list_run_commits answers them, each
// page of the size given, newest first.
func (f *fixture) commitSubjects(runID string, limit int) []string {
	f.t.Helper()
	var out []string
	cursor := ""
	for i := 0; ; i++ {
		args := fmt.Sprintf(`{"playbook":"finance","run_id":%q,"limit":%d`, runID, limit)
		if cursor != "" {
			args += fmt.Sprintf(`,"cursor":%q`, cursor)
		}
		p := f.call("list_run_commits", args+"}").(*RunCommitPage)
		if len(p.Commits) > limit {
			f.t.Fatalf("a page of %d holds %d", limit, len(p.Commits))
		}
		for _, c := range p.Commits {
			if len(c.Commit) != 40 || c.Author == "" || !strings.HasSuffix(c.Time, "Z") {
				f.t.Fatalf("commit %+v", c)
			}
			out = append(out, c.Author+" | "+c.Subject)
		}
		if cursor = p.Next; cursor == "" {
			return out
		}
		if i > 100 {
			f.t.Fatal("the pages do not end")
		}
	}
}

// gitSubjects is what git log says of the run's commits, by their Run-Id
// trailer.
func (f *fixture) gitSubjects(runID string) []string {
	f.t.Helper()
	var out []string
	for _, ln := range strings.Split(strings.TrimSpace(f.git("log", "--format=%an | %s", "--grep=^Run-Id: "+runID+"$")), "\n") {
		if ln != "" {
			out = append(out, ln)
		}
	}
	return out
}

func TestRunCommitsFromTheIndex(t *testing.T) {
	f := newFixture(t)
	run := f.start()
	other := f.start()
	f.call("end_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"status":"failed","detail":"gave up","actor":"agent-7"}`, other.RunID))
	want := []string{"ana | close-the-month " + run.RunID[len(run.RunID)-8:] + ": run created"}
	if got := f.commitSubjects(run.RunID, 1); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("commits %q, want %q", got, want)
	}
	// From here the index is kept as quire commits: a commit of quire's
	// is added as it is made, no read catching up.
	f.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_started","step":"do/0/work","actor":"agent-7"}`, run.RunID))
	f.call("end_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"status":"failed","detail":"no data","actor":"agent-7"}`, run.RunID))
	head := strings.TrimSpace(f.git("rev-parse", "HEAD"))
	if b, _ := os.ReadFile(filepath.Join(f.dir, ".quire", "commits", "head")); strings.TrimSpace(string(b)) != head {
		t.Fatalf(".quire/commits/head is %q after quire's commit, HEAD %s", b, head)
	}
	want = f.gitSubjects(run.RunID)
	if len(want) < 2 {
		t.Fatalf("git log finds %q", want)
	}
	for _, limit := range []int{1, 2, 100} {
		if got := f.commitSubjects(run.RunID, limit); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("pages of %d: %q, want %q", limit, got, want)
		}
	}
	f.refuse("list_run_commits", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"cursor":"x"}`, run.RunID), "invalid_input", "/cursor", "not a cursor")
	f.refuse("list_run_commits", `{"playbook":"finance","run_id":"019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3e"}`, "not_found", "/run_id", "no run")

	// Gone, it is made again from the history.
	os.RemoveAll(filepath.Join(f.dir, ".quire", "commits"))
	if got := f.commitSubjects(run.RunID, 100); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rebuilt: %q, want %q", got, want)
	}

	// A commit another program makes is picked up by the next read: with
	// the run's trailer it is the run's, without it is nobody's.
	os.WriteFile(filepath.Join(f.dir, "notes.md"), []byte("a note\n"), 0o644)
	f.git("add", "notes.md")
	f.git("-c", "user.name=rui", "-c", "user.email=rui@example.com", "commit", "-q", "-m", "A note on the run\n\nRun-Id: "+run.RunID)
	os.WriteFile(filepath.Join(f.dir, "notes.md"), []byte("a note\nand another\n"), 0o644)
	f.git("-c", "user.name=rui", "-c", "user.email=rui@example.com", "commit", "-q", "-am", "Another note")
	want = append([]string{"rui | A note on the run"}, want...)
	if got := f.commitSubjects(run.RunID, 100); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after git commit: %q, want %q", got, want)
	}

	// A merge: both sides are read, each commit once.
	f.git("checkout", "-q", "-b", "side", "HEAD~1")
	os.WriteFile(filepath.Join(f.dir, "side.md"), []byte("side\n"), 0o644)
	f.git("add", "side.md")
	f.git("-c", "user.name=eva", "-c", "user.email=eva@example.com", "commit", "-q", "-m", "From the side\n\nRun-Id: "+run.RunID)
	f.git("checkout", "-q", "main")
	f.git("-c", "user.name=eva", "-c", "user.email=eva@example.com", "merge", "-q", "--no-edit", "side")
	got := f.commitSubjects(run.RunID, 100)
	if len(got) != len(want)+1 || !strings.Contains(fmt.Sprint(got), "eva | From the side") {
		t.Fatalf("after a merge: %q", got)
	}
	os.RemoveAll(filepath.Join(f.dir, ".quire", "commits"))
	if again := f.commitSubjects(run.RunID, 100); fmt.Sprint(again) != fmt.Sprint(got) {
		t.Fatalf("rebuilt after a merge: %q, want %q", again, got)
	}

	// A reset takes commits back: the index is made again from HEAD.
	f.git("reset", "-q", "--hard", head)
	want = want[1:]
	if got := f.commitSubjects(run.RunID, 100); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after git reset: %q, want %q", got, want)
	}
	// And after a quire commit on top, the index goes on from there.
	f.call("append_thread", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"text":"Checked.","actor":"agent-7"}`, run.RunID))
	want = f.gitSubjects(run.RunID)
	if got := f.commitSubjects(run.RunID, 100); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after a quire commit: %q, want %q", got, want)
	}
	if got := f.commitSubjects(other.RunID, 100); fmt.Sprint(got) != fmt.Sprint(f.gitSubjects(other.RunID)) {
		t.Fatalf("the other run: %q", got)
	}
}

func TestRunIDsOfTrailers(t *testing.T) {
	id := "019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3e"
	for msg, want := range map[string]string{
		"close: run created\n\nRun-Id: " + id + "\nPlaybook: finance\n": id,
		"close: run created\n\nbody\n\nRun-Id: " + id + "\n":            id,
		"Run-Id: " + id + "\n":                                "",
		"subject\n\nRun-Id: " + id + "\n\nlater paragraph\n":  "",
		"subject\n\nRun-Id: NOT-A-UUID\n":                     "",
		"subject\n\nRun-Id: " + id + "\nRun-Id: " + id + "\n": id,
	} {
		if got := strings.Join(runIDsOf(msg), ","); got != want {
			t.Errorf("%q: %q, want %q", msg, got, want)
		}
	}
}

func TestGetRunFiles(t *testing.T) {
	f := newFixture(t)
	run := f.start()
	f.call("append_thread", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"text":"Looked at the ledger.","actor":"agent-7"}`, run.RunID))
	f.call("put_artifact", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"name":"reports/q3.csv","content":"a,b\n1,2\n","actor":"agent-7"}`, run.RunID))
	f.call("put_artifact", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"name":"a.txt","content":"x","actor":"agent-7"}`, run.RunID))
	rf := f.call("get_run_files", fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, run.RunID)).(*RunFiles)
	if rf.Path != run.Path || !strings.Contains(rf.Context, "authorized by ana") || !strings.Contains(rf.Thread, "Looked at the ledger.") {
		t.Fatalf("files %+v", rf)
	}
	if fmt.Sprint(rf.Artifacts) != "[{a.txt 1} {reports/q3.csv 8}]" {
		t.Fatalf("artifacts %v", rf.Artifacts)
	}
	if !strings.Contains(string(rf.State), `"run_id": "`+run.RunID+`"`) && !strings.Contains(string(rf.State), `"run_id":"`+run.RunID+`"`) {
		t.Fatalf("state %s", rf.State)
	}
	// A run.state.json that a hand edit left no JSON is answered as its text.
	os.WriteFile(filepath.Join(f.dir, filepath.FromSlash(run.Path), "run.state.json"), []byte("{broken"), 0o644)
	rf = f.call("get_run_files", fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, run.RunID)).(*RunFiles)
	if string(rf.State) != `"{broken"` {
		t.Fatalf("state %s", rf.State)
	}
	f.refuse("get_run_files", `{"playbook":"finance","run_id":"019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3e"}`, "not_found", "/run_id", "no run")
}
