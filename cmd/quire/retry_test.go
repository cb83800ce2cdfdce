package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"quire/internal/crashpoint"
	"quire/ledger"
	"quire/words/refusal"
)

// retryOp is a writing operation called with a request id, and how many
// times its effect is in the vault.
type retryOp struct {
	name, op, args string
	stride         int // make test kills it at every stride-th step; make test-long at every one
	effects        func(t *testing.T, l *ledger.Ledger, dir string) int
}

// eventsOf counts the events of typ in the playbook's history.
func eventsOf(playbook, typ string) func(t *testing.T, l *ledger.Ledger, dir string) int {
	return func(t *testing.T, l *ledger.Ledger, dir string) int {
		t.Helper()
		n := 0
		for after := int64(0); ; {
			page, err := l.Call(context.Background(), "list_playbook_events", json.RawMessage(fmt.Sprintf(`{"playbook":%q,"after":%d,"limit":1000}`, playbook, after)))
			if r, ok := refusal.As(err); ok && r.Code == refusal.NotFound && after == 0 {
				return 0 // the playbook is not made yet
			}
			if err != nil {
				t.Fatalf("list_playbook_events: %v", err)
			}
			p := page.(*ledger.EventPage)
			for _, ev := range p.Events {
				if strings.HasSuffix(ev.Type, "."+typ) || ev.Type == typ {
					n++
				}
			}
			if p.Next == 0 {
				return n
			}
			after = p.Next
		}
	}
}

// occurrences counts s in the file at rel.
func occurrences(rel, s string) func(t *testing.T, l *ledger.Ledger, dir string) int {
	return func(t *testing.T, l *ledger.Ledger, dir string) int {
		data, _ := os.ReadFile(filepath.Join(dir, rel))
		return bytes.Count(data, []byte(s))
	}
}

func (cv *crashVault) retryOps(t *testing.T) []retryOp {
	run := fmt.Sprintf(`"playbook":"finance","run_id":%q`, cv.run)
	runDir, _ := filepath.Glob(filepath.Join(cv.dir, "playbook-runs", "close-*"))
	thread := strings.TrimPrefix(runDir[0], cv.dir+"/") + "/thread.md"
	// A comment to resolve.
	l, err := ledger.Open(cv.dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := l.Call(context.Background(), "make_comment", json.RawMessage(fmt.Sprintf(`{"playbook":"finance","address":"finance/runs/%s","text":"to resolve","author":"ana"}`, cv.run)))
	l.Close()
	if err != nil {
		t.Fatal(err)
	}
	comment := c.(*ledger.Comment).ID
	return []retryOp{
		{"append_thread", "append_thread", `{` + run + `,"text":"retried text","actor":"agent-7","request_id":"r1"}`, 3,
			occurrences(thread, "retried text")},
		{"make_comment", "make_comment", fmt.Sprintf(`{"playbook":"finance","address":"finance/runs/%s","text":"looks right","author":"ana","request_id":"r2"}`, cv.run), 9,
			eventsOf("finance", "comment_made")},
		{"resolve_comment", "resolve_comment", fmt.Sprintf(`{"playbook":"finance","id":%q,"how":"acted","actor":"ana","request_id":"r3"}`, comment), 7,
			eventsOf("finance", "comment_resolved")},
		{"mark_activity_seen", "mark_activity_seen", fmt.Sprintf(`{"member":"ana","items":["finance/runs/%s"],"request_id":"r4"}`, cv.run), 7,
			occurrences("org/members/ana/seen.jsonl", "\n")},
		{"run_definition", "run_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"close","member_of":[%q],"executor":"agent-7","authorized_by":"ana","request_id":"r5"}`, cv.project), 9,
			eventsOf("finance", "run_created")},
		{"create_project", "create_project", `{"name":"Retried","request_id":"r6"}`, 3,
			occurrences("vault/00-index.jsonl", `"name":"Retried"`)},
		{"create_playbook", "create_playbook", `{"playbook":"retried","name":"Retried","request_id":"r7"}`, 5,
			eventsOf("retried", "playbook_created")},
		{"create_definition", "create_definition", `{"playbook":"finance","type":"workflow","name":"retried","source":"document:\n  name: retried\n","request_id":"r8"}`, 7,
			eventsOf("finance", "definition_saved")},
		{"update_definition", "update_definition", `{"playbook":"finance","type":"workflow","name":"close","source":"document:\n  name: close\n  summary: again\n","request_id":"r9"}`, 7,
			eventsOf("finance", "definition_saved")},
		{"update_playbook", "update_playbook", `{"playbook":"finance","description":"retried","request_id":"r10"}`, 5,
			eventsOf("finance", "playbook_updated")},
		{"record_event", "record_event", `{` + run + `,"event":"step_completed","step":"do/2/b","actor":"agent-7","request_id":"r11"}`, 9,
			eventsOf("finance", "step_completed")},
		{"end_run", "end_run", `{` + run + `,"status":"succeeded","actor":"agent-7","request_id":"r12"}`, 11,
			eventsOf("finance", "run_succeeded")},
	}
}

// retryAt kills a call of op at its nth file-changing step (or lets it
// finish), then retries it twice with the same request id: both retries
// answer, the same answer (the first call's, when it finished), and the
// effect is in the vault once. It reports whether the call was killed.
func (cv *crashVault) retryAt(t *testing.T, op retryOp, before, n int) bool {
	t.Helper()
	dir := cv.copyTo(t)
	cmd := quireProcess([]string{fmt.Sprintf("%s=%d", crashpoint.Env, n)}, "--vault", dir, "call", op.op, "--args", op.args)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	wasKilled := killed(err)
	if err != nil && !wasKilled {
		t.Fatalf("%s: quire call failed without a kill: %v\n%s%s", op.name, err, out.String(), errb.String())
	}
	where := fmt.Sprintf("%s killed at step %d", op.name, n)
	if !wasKilled {
		where = op.name + " (not killed)"
	}
	var answers []string
	if !wasKilled {
		answers = append(answers, normalAnswer(t, out.Bytes()))
	}
	for i := 0; i < 2; i++ {
		// Each retry in a process of its own, as a client's retry comes.
		retry := quireProcess(nil, "--vault", dir, "call", op.op, "--args", op.args)
		var rout, rerr bytes.Buffer
		retry.Stdout, retry.Stderr = &rout, &rerr
		if err := retry.Run(); err != nil {
			ls, _ := exec.Command("sh", "-c", "cd "+dir+" && find playbooks -newer quire.yaml; cat .quire/writing; git status --short").CombinedOutput()
			t.Fatalf("%s: retry %d: %v\n%s%s\n%s", where, i+1, err, rout.String(), rerr.String(), ls)
		}
		answers = append(answers, normalAnswer(t, rout.Bytes()))
	}
	for _, a := range answers[1:] {
		if a != answers[0] {
			t.Fatalf("%s: the answers differ:\n%s\n%s", where, answers[0], a)
		}
	}
	l, err := ledger.Open(dir)
	if err != nil {
		t.Fatalf("%s: open: %v", where, err)
	}
	defer l.Close()
	if got := op.effects(t, l, dir); got != before+1 {
		t.Fatalf("%s: the effect is in the vault %d times, want once\nanswer: %s", where, got-before, answers[0])
	}
	check, err := l.Check()
	if err != nil || len(check.Problems) > 0 {
		rep, _ := l.Repair()
		if check2, _ := l.Check(); err != nil || check2 == nil || len(check2.Problems) > 0 {
			t.Fatalf("%s: check: %v %v (janitor: %+v)", where, err, check.Problems, rep)
		}
	}
	return wasKilled
}

// normalAnswer is an answer without what a later read may tell otherwise
// of the same write: whether its commit is made yet.
func normalAnswer(t *testing.T, out []byte) string {
	t.Helper()
	var m any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("answer: %v\n%s", err, out)
	}
	if o, ok := m.(map[string]any); ok {
		delete(o, "committed")
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// A call with a request id killed at any file-changing step and retried
// with the same id writes its effect once, and every retry answers alike:
// request_id is exactly-once whatever the operation and the crash point.
// make test kills each at a sample of its steps; QUIRE_TEST_LONG=1 at
// every one.
func TestRetriedAfterAKillAtEveryStep(t *testing.T) {
	t.Parallel()
	cv := newCrashVault(t)
	long := os.Getenv("QUIRE_TEST_LONG") != ""
	for _, op := range cv.retryOps(t) {
		t.Run(op.name, func(t *testing.T) {
			l, err := ledger.Open(cv.dir)
			if err != nil {
				t.Fatal(err)
			}
			before := op.effects(t, l, cv.dir)
			l.Close()
			// make test kills at every 2*stride-th step from a step of
			// its own: over many runs every step is met, and each run
			// takes half the time (on the 2-core machine the test took 11
			// s of CPU, a twentieth of make test's).
			stride, from := 2*op.stride, 0
			if long {
				stride = 1
			} else {
				from = rand.IntN(stride)
			}
			steps := 0
			for n := 0; ; n++ {
				if n%stride != from && n > 0 {
					continue
				}
				if !cv.retryAt(t, op, before, n) {
					break
				}
				steps = n
			}
			t.Logf("%s: killed at %d of its steps (every %d from %d)", op.name, steps/stride+1, stride, from)
		})
	}
}
