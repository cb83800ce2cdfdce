package ledger

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire/vault"
)

// lockBranch leaves the branch's git lock as another program would hold
// it, so every commit fails until unlock.
func (f *fixture) lockBranch() (unlock func()) {
	f.t.Helper()
	f.t.Cleanup(vault.SetGitLockWait(50 * time.Millisecond))
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
	ev := f.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_completed","step":"do/1","actor":"agent-7"}`, r.RunID)).(*RecordedEvent)
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
	ev = f.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_completed","step":"do/2","actor":"agent-7"}`, r.RunID)).(*RecordedEvent)
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

// A call repeating a request_id answers the first answer and writes
// nothing, in the same process, after a restart, and after a kill between
// the line and its kept answer (here: .quire/requests/ lost); the same id
// with other arguments is refused.
func TestRequestIDMakesRetriesSafe(t *testing.T) {
	f := newFixture(t)
	start := fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"close-the-month","member_of":[%q],"executor":"agent-7","authorized_by":"ana","request_id":"start-1"}`, f.project)
	r := f.call("run_definition", start).(*Run)
	if again := f.call("run_definition", start).(*Run); again.RunID != r.RunID {
		t.Fatalf("a repeated run_definition made run %s beside %s", again.RunID, r.RunID)
	}
	rec := fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_completed","step":"do/1","actor":"agent-7","request_id":"ev-1"}`, r.RunID)
	first := f.call("record_event", rec).(*RecordedEvent)
	f.refuse("record_event", strings.Replace(rec, "do/1", "do/2", 1), "conflict", "", "request_id \"ev-1\" was used before")
	f.refuse("end_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"status":"failed","actor":"agent-7","request_id":"ev-1"}`, r.RunID), "conflict", "", "the operation record_event")
	f.refuse("record_event", strings.Replace(rec, `"ev-1"`, `" ev"`, 1), "invalid_input", "/request_id", "request id")
	for i, l := range []*Ledger{f.l, New(f.l.v)} { // the same process, and a new one
		if i == 1 {
			os.RemoveAll(filepath.Join(f.dir, ".quire", "requests")) // killed before the answer was kept
		}
		ev, err := l.Call(t.Context(), "record_event", []byte(rec))
		if err != nil {
			t.Fatal(err)
		}
		if got := ev.(*RecordedEvent); got.ID != first.ID || got.Seq != first.Seq {
			t.Fatalf("repeat %d answered %s seq %d, first %s seq %d", i, got.ID, got.Seq, first.ID, first.Seq)
		}
		again, err := l.Call(t.Context(), "run_definition", []byte(start))
		if err != nil || again.(*Run).RunID != r.RunID || again.(*Run).Events != 1 {
			t.Fatalf("repeat %d of run_definition: %v %+v", i, err, again)
		}
	}
	log, _ := os.ReadFile(filepath.Join(f.dir, r.Path, "run.jsonl"))
	if n := strings.Count(string(log), "\n"); n != 2 {
		t.Fatalf("run.jsonl holds %d lines, want 2:\n%s", n, log)
	}
	if runs := f.call("list_runs", `{"playbook":"finance"}`); strings.Count(fmt.Sprint(runs), "run_id") > 1 {
		t.Fatalf("runs: %v", runs)
	}
	// An end and a comment repeat too.
	end := fmt.Sprintf(`{"playbook":"finance","run_id":%q,"status":"failed","actor":"agent-7","request_id":"end-1"}`, r.RunID)
	e1 := f.call("end_run", end).(*Run)
	if e2 := f.call("end_run", end).(*Run); e2.Events != e1.Events || e2.State != "failed" {
		t.Fatalf("repeated end_run: %+v", e2)
	}
	com := fmt.Sprintf(`{"playbook":"finance","address":"finance/runs/%s","text":"why?","author":"ana","request_id":"c-1"}`, r.RunID)
	if c1, c2 := f.call("make_comment", com).(*Comment), f.call("make_comment", com).(*Comment); c1.ID != c2.ID {
		t.Fatalf("a repeated make_comment made %s and %s", c1.ID, c2.ID)
	}
	f.clean()
}

// A hand-edited run.state.json neither skips nor repeats event ids nor
// moves the executor: the state is derived from run.jsonl and definition.md,
// and quire check reports the file until the next boundary rewrites it.
func TestHandEditedStateIsNotTrusted(t *testing.T) {
	f := newFixture(t)
	r := f.start()
	for i := 1; i <= 2; i++ {
		f.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_completed","step":"do/%d","actor":"agent-7"}`, r.RunID, i))
	}
	statePath := filepath.Join(f.dir, r.Path, "run.state.json")
	for _, edit := range [][2]string{{`"events": 3`, `"events": 1`}, {`"events": 3`, `"events": 9`}, {`"executor": "agent-7"`, `"executor": "mallory"`}} {
		data, _ := os.ReadFile(statePath)
		if !strings.Contains(string(data), edit[0]) {
			t.Fatalf("run.state.json lacks %s:\n%s", edit[0], data)
		}
		os.WriteFile(statePath, []byte(strings.Replace(string(data), edit[0], edit[1], 1)), 0o644)
		rep, err := f.l.Check()
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Problems) != 1 || !strings.HasSuffix(rep.Problems[0].Path, "run.state.json") {
			t.Fatalf("check after %s: %v", edit[1], rep.Problems)
		}
		for _, l := range []*Ledger{f.l, New(f.l.v)} {
			st, err := l.Call(t.Context(), "get_run", []byte(fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, r.RunID)))
			if err != nil || st.(*Run).Events != 3 || st.(*Run).Executor != "agent-7" {
				t.Fatalf("after %s get_run says %+v (%v)", edit[1], st, err)
			}
		}
		os.WriteFile(statePath, data, 0o644)
	}
	os.WriteFile(statePath, []byte(strings.Replace(func() string { d, _ := os.ReadFile(statePath); return string(d) }(), `"executor": "agent-7"`, `"executor": "mallory"`, 1)), 0o644)
	f.refuse("transition_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"to":"paused","actor":"mallory"}`, r.RunID), "forbidden", "", "rule 4")
	ev := f.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_completed","step":"do/3","actor":"agent-7"}`, r.RunID)).(*RecordedEvent)
	if ev.ID != r.RunID+"_4" {
		t.Fatalf("the next event is %s, want %s_4", ev.ID, r.RunID)
	}
	f.clean()
}

// After git stash or git reset --hard takes event lines back, the history
// under .quire/ is rebuilt from the files: no seq is given twice, no event
// read twice, and the views fold the history as it now is.
func TestHistoryFollowsGitTakingFilesBack(t *testing.T) {
	f := newFixture(t)
	r := f.start()
	rec := func(ev, step string) *Event {
		return &f.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":%q,"step":%q,"actor":"agent-7"}`, r.RunID, ev, step)).(*RecordedEvent).Event
	}
	rec("step_completed", "do/1")
	rec("step_started", "do/2") // not committed
	rec("step_started", "do/3") // not committed
	f.git("stash")
	// quire check is a read: it has the history follow git first.
	if rep, _ := f.l.Check(); len(rep.Problems) != 0 {
		t.Fatalf("check after git stash: %v", rep.Problems)
	}
	rec("step_completed", "do/2")
	f.clean()
	rec("step_completed", "do/3")
	f.git("reset", "--hard", "HEAD~1")
	last := rec("step_completed", "do/4")
	f.clean()
	page := f.call("list_playbook_events", `{"playbook":"finance","limit":1000}`).(*EventPage)
	for i, ev := range page.Events {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d: %+v", i+1, ev.Seq, page.Events)
		}
	}
	if n := len(page.Events); page.Events[n-1].ID != last.ID || last.Seq != int64(n) {
		t.Fatalf("the last event is %s seq %d; the history ends with %+v", last.ID, last.Seq, page.Events[n-1])
	}
}

// A last line lacking only its newline is kept and given one; a torn tail
// is moved into .quire/quarantine/, reported by quire check, never dropped
// silently.
func TestLastLineWithoutNewline(t *testing.T) {
	f := newFixture(t)
	r := f.start()
	logPath := filepath.Join(f.dir, r.Path, "run.jsonl")
	appendRaw := func(s string) {
		fh, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		fh.WriteString(s)
		fh.Close()
	}
	at := func(min int) string {
		return time.Now().UTC().Add(time.Duration(min+1) * time.Minute).Format("2006-01-02T15:04")
	}
	hand := `{"event": "milestone_fired", "timestamp": "` + at(0) + `", "step": null, "detail": "by hand"}`
	appendRaw(hand)
	f.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_completed","step":"do/1","actor":"agent-7","time":%q}`, r.RunID, at(1)+":00Z"))
	data, _ := os.ReadFile(logPath)
	if !strings.Contains(string(data), hand+"\n") {
		t.Fatalf("the hand-written line is gone:\n%s", data)
	}
	torn := `{"event":"step_completed","timestamp":"` + at(2) + `:00Z","st`
	appendRaw(torn)
	f.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_completed","step":"do/2","actor":"agent-7","time":%q}`, r.RunID, at(3)+":00Z"))
	data, _ = os.ReadFile(logPath)
	if strings.Contains(string(data), torn) {
		t.Fatalf("the torn tail is still in run.jsonl:\n%s", data)
	}
	kept, _ := filepath.Glob(filepath.Join(f.dir, ".quire", "quarantine", r.Path, "run.jsonl.*.torn"))
	if len(kept) != 1 {
		t.Fatalf("quarantine holds %v", kept)
	}
	if b, _ := os.ReadFile(kept[0]); string(b) != torn {
		t.Fatalf("quarantined %q", b)
	}
	rep, err := f.l.Check()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range rep.Problems {
		found = found || strings.Contains(p.Message, "a torn line cut from "+r.Path+"/run.jsonl")
	}
	if !found {
		t.Fatalf("check does not report the quarantined tail: %v", rep.Problems)
	}
}

// Symbolic links carried into a vault lead no write outside it: the write
// is refused naming the link, the file outside is untouched, and quire
// check lists the link.
func TestNoWriteThroughSymbolicLinks(t *testing.T) {
	f := newFixture(t)
	r := f.start()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	os.WriteFile(secret, []byte("keep\n"), 0o644)
	run := filepath.Join(f.dir, r.Path)
	link := func(rel, to string) (undo func()) {
		p := filepath.Join(f.dir, rel)
		os.Rename(p, p+".real")
		if err := os.Symlink(to, p); err != nil {
			t.Fatal(err)
		}
		return func() { os.Remove(p); os.Rename(p+".real", p) }
	}
	rec := fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_completed","step":"do/1","actor":"agent-7"}`, r.RunID)
	for _, c := range []struct{ rel, op, args string }{
		{r.Path + "/run.jsonl", "record_event", rec},
		{r.Path + "/run.state.json", "record_event", rec},
		{r.Path + "/thread.md", "append_thread", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"text":"x","actor":"agent-7"}`, r.RunID)},
		{"vault/00-index.jsonl", "run_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"close-the-month","member_of":[%q],"executor":"agent-7","authorized_by":"ana"}`, f.project)},
		{"playbooks/finance/events.jsonl", "make_comment", `{"playbook":"finance","address":"playbooks/finance","text":"x","author":"ana"}`},
		{".quire", "record_event", rec},
	} {
		to := secret
		if c.rel == ".quire" {
			to = outside
		}
		undo := link(c.rel, to)
		f.refuse(c.op, c.args, "conflict", "", "symbolic link")
		if rep, err := f.l.Check(); err != nil || !strings.Contains(fmt.Sprint(rep.Problems), c.rel+": is a symbolic link") {
			if err != nil {
				t.Fatalf("check with the link %s: %v", c.rel, err)
			}
			t.Fatalf("check does not list the link %s: %v", c.rel, rep.Problems)
		}
		undo()
		if b, _ := os.ReadFile(secret); string(b) != "keep\n" {
			t.Fatalf("a write through %s changed the file outside: %q", c.rel, b)
		}
		if ents, _ := os.ReadDir(outside); len(ents) != 1 {
			t.Fatalf("a write through %s made files outside: %v", c.rel, ents)
		}
	}
	_ = run
	f.call("record_event", rec)
	f.clean()
}
