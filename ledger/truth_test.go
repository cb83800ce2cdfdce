package ledger

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lockBranch leaves the branch's git lock as another program would hold
// it, so every commit fails until unlock.
func (f *fixture) lockBranch() (unlock func()) {
	f.t.Helper()
	lock := filepath.Join(f.dir, ".git", "refs", "heads", "main.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		f.t.Fatal(err)
	}
	return func() { os.Remove(lock) }
}

// A write whose record is durable but whose commit fails answers success
// with committed: false, so a retry does not record it twice; the next
// writer's commit, or quire janitor, commits it.
func TestDurableWriteAnswersTrueWhenTheCommitFails(t *testing.T) {
	f := newFixture(t)
	r := f.start()
	unlock := f.lockBranch()
	ev := f.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_completed","step":"do/1","actor":"agent-7"}`, r.RunID)).(*Event)
	if ev.Committed == nil || *ev.Committed {
		t.Fatalf("committed = %v, want false", ev.Committed)
	}
	r2 := f.call("run_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"close-the-month","member_of":[%q],"executor":"agent-7","authorized_by":"ana"}`, f.project)).(*Run)
	if r2.Committed == nil || *r2.Committed {
		t.Fatalf("run_definition committed = %v, want false", r2.Committed)
	}
	end := f.call("end_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"status":"failed","actor":"agent-7"}`, r2.RunID)).(*Run)
	if end.Committed == nil || *end.Committed || end.State != "failed" {
		t.Fatalf("end_run: committed %v, state %s", end.Committed, end.State)
	}
	c := f.call("make_comment", fmt.Sprintf(`{"playbook":"finance","address":"finance/runs/%s","text":"look","author":"ana"}`, r.RunID)).(*Comment)
	if c.Committed == nil || *c.Committed {
		t.Fatalf("make_comment committed = %v, want false", c.Committed)
	}
	log, _ := os.ReadFile(filepath.Join(f.dir, r.Path, "run.jsonl"))
	if n := strings.Count(string(log), `"step_completed"`); n != 1 {
		t.Fatalf("run.jsonl holds %d step_completed lines, want 1", n)
	}
	unlock()

	// The next writer's commit takes along what was left uncommitted.
	ev = f.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_completed","step":"do/2","actor":"agent-7"}`, r.RunID)).(*Event)
	if ev.Committed == nil || !*ev.Committed {
		t.Fatalf("committed = %v after the lock went", ev.Committed)
	}
	f.clean()
	if s := f.git("show", "HEAD:"+r2.Path+"/run.jsonl"); !strings.Contains(s, "run_failed") {
		t.Fatalf("the ended run's log in HEAD:\n%s", s)
	}

	// quire janitor commits what is left when no writer comes.
	unlock = f.lockBranch()
	f.call("transition_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"to":"paused","actor":"agent-7"}`, r.RunID))
	unlock()
	rep := f.call("archive_idle_runs", `{}`).(*JanitorReport)
	if len(rep.Committed) != 2 {
		t.Fatalf("the janitor committed %v, want the run and the index", rep.Committed)
	}
	f.clean()
}
