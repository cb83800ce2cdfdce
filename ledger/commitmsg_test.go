package ledger

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// Every kind of commit quire makes has a subject of at most 72 characters
// that says what happened to what, and a run's commits carry the run in
// their trailers, so git log --oneline, git shortlog and git log --grep
// serve a reviewer: a run's boundaries of every type, a long step's name,
// writes after the run ended, comments and their resolution, a project of
// a long name, definitions saved and retired.
func TestCommitSubjectsFitAndNameTheRun(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.call("create_project", `{"name":"`+strings.Repeat("Quarterly operations review ", 6)+`"}`)
	r := f.start()
	run := fmt.Sprintf(`"playbook":"finance","run_id":%q`, r.RunID)
	long := "do/1/" + strings.Repeat("reconcile-the-ledgers-of-every-subsidiary-", 3)
	for _, typ := range []string{"step_completed", "step_failed", "step_dead_letter", "step_skipped", "milestone_fired", "verification_receipt", "compensation_started", "compensation_step_completed", "compensation_step_failed", "pause_started", "pause_resumed"} {
		step := ""
		if strings.HasPrefix(typ, "step_") || strings.HasPrefix(typ, "compensation_step_") {
			step = `,"step":"do/1/review"`
		}
		f.call("record_event", fmt.Sprintf(`{%s,"event":%q,"actor":"agent-7"%s}`, run, typ, step))
	}
	f.call("record_event", fmt.Sprintf(`{%s,"event":"step_completed","step":%q,"actor":"agent-7"}`, run, long))
	c := f.call("make_comment", fmt.Sprintf(`{"playbook":"finance","address":"finance/runs/%s","text":"Check March.","author":"grace"}`, r.RunID)).(*Comment)
	f.call("resolve_comment", fmt.Sprintf(`{"playbook":"finance","id":%q,"how":"acted","actor":"agent-7"}`, c.ID))
	f.call("end_run", `{`+run+`,"status":"succeeded","actor":"agent-7"}`)
	f.call("append_thread", `{`+run+`,"text":"a note after the end","actor":"agent-7"}`)
	f.call("put_artifact", `{`+run+`,"name":"late/report.txt","content":"written after the end"}`)
	f.call("retire_definition", `{"playbook":"finance","type":"workflow","name":"close-the-month"}`)
	f.clean()

	for _, line := range strings.Split(strings.TrimSpace(f.git("log", "--format=%s")), "\n") {
		if n := utf8.RuneCountInString(line); n > 72 {
			t.Errorf("a subject of %d characters: %s", n, line)
		}
	}
	// The run's commits: each names the run, its playbook and its event's
	// seq in trailers, and git log --grep finds them all by the run's id.
	byRun := strings.TrimSpace(f.git("log", "--grep", "^Run-Id: "+r.RunID+"$", "--format=%s|%(trailers:key=Run-Id,valueonly,separator=)|%(trailers:key=Playbook,valueonly,separator=)|%(trailers:key=Event-Seq,valueonly,separator=)"))
	lines := strings.Split(byRun, "\n")
	seen := map[string]bool{}
	for _, l := range lines {
		parts := strings.Split(l, "|")
		if len(parts) != 4 || parts[1] != r.RunID || parts[2] != "finance" {
			t.Errorf("a commit of the run without its trailers: %q", l)
			continue
		}
		seen[parts[0]] = true
		if !strings.Contains(parts[0], "after the end") && parts[3] == "" {
			t.Errorf("a boundary's commit without Event-Seq: %q", l)
		}
	}
	name := "close-the-month " + r.RunID[len(r.RunID)-8:] + ": "
	for _, want := range []string{
		"run created",
		"step do/1/review completed",
		"step do/1/review failed",
		"milestone fired",
		"pause started",
		"run succeeded",
		"thread appended after the end",
		"artifact late/report.txt written after the end",
	} {
		if !seen[name+want] {
			t.Errorf("no commit %q among the run's:\n%s", name+want, byRun)
		}
	}
	// A subject cut short keeps its whole text in the body.
	if body := f.git("log", "--grep", "^Step: "+long+"$", "--format=%B"); !strings.Contains(body, name+"step "+long+" completed\n") {
		t.Errorf("the long step's commit:\n%s", body)
	}
}
