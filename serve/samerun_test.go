package serve

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"quire/internal/gittest"
	"quire/ledger"
)

// Writers recording on the same run at once, without a time, are never
// refused: the clock is read under the vault's lock, so each event's time
// follows the one before it. Every acknowledged event is in the history
// once, seq has no gap, and the vault checks clean.
func TestConcurrentWritersOnOneRun(t *testing.T) {
	l := newLedger(t)
	project := seedPlain(t, l)
	run := startRun(t, l, project)
	tok, err := CreateToken(l, "agent-7", []string{"playbook:write", "playbook:read"})
	if err != nil {
		t.Fatal(err)
	}
	_, c := newTestServer(t, newServer(l, false, nil))
	c = c.with(tok)
	const writers, rounds = 16, 3
	acked := map[string]bool{}
	var mu sync.Mutex
	for round := range rounds {
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ev := map[string]any{"event": "step_started", "step": fmt.Sprintf("do/%d/%d", round, w), "actor": "agent-7"}
				if w%4 == 0 {
					ev["event"] = "step_completed" // a boundary: it commits
				}
				status, out := c.do("POST", "/v1/orgs/acme/playbooks/finance/runs/"+run+"/events", ev)
				mu.Lock()
				defer mu.Unlock()
				if status != 200 {
					t.Errorf("round %d writer %d: %d %v", round, w, status, out)
					return
				}
				acked[out["id"].(string)] = true
			}()
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
	}
	_, page := c.do("GET", "/v1/orgs/acme/playbooks/finance/events?limit=1000", nil)
	events, _ := page["events"].([]any)
	seen := map[string]bool{}
	last := ""
	for i, e := range events {
		ev := e.(map[string]any)
		if seq := int64(ev["seq"].(float64)); seq != int64(i+1) {
			t.Fatalf("seq %d at place %d", seq, i+1)
		}
		id := ev["id"].(string)
		if seen[id] {
			t.Fatalf("event %s twice", id)
		}
		seen[id] = true
		if ev["correlationid"] == run {
			if tm := ev["time"].(string); tm < last {
				t.Fatalf("event %s at %s, before the run's previous event at %s", id, tm, last)
			} else {
				last = tm
			}
		}
	}
	for id := range acked {
		if !seen[id] {
			t.Fatalf("acknowledged event %s is not in the history", id)
		}
	}
	if len(acked) != writers*rounds {
		t.Fatalf("%d acknowledged", len(acked))
	}
	vaultClean(t, l)
}

// A time far ahead of the server's clock is refused, saying how far; it
// would make every later event of the run go back.
func TestATimeAheadOfTheClockIsRefused(t *testing.T) {
	l := newLedger(t)
	project := seedPlain(t, l)
	run := startRun(t, l, project)
	tok, _ := CreateToken(l, "agent-7", []string{"playbook:write"})
	_, c := newTestServer(t, newServer(l, false, nil))
	c = c.with(tok)
	url := "/v1/orgs/acme/playbooks/finance/runs/" + run + "/events"
	status, out := c.do("POST", url, map[string]any{"event": "step_started", "step": "a", "time": "2099-01-01T00:00:00Z"})
	e, _ := out["error"].(map[string]any)
	issues, _ := e["issues"].([]any)
	if status != 400 || code(out) != "invalid_input" || len(issues) == 0 || issues[0].(map[string]any)["path"] != "/time" ||
		!strings.Contains(message(out), "days ahead of the server's clock") || !strings.Contains(message(out), "at most 5 minutes ahead") {
		t.Fatalf("a time in 2099: %d %v", status, out)
	}
	for _, ev := range []map[string]any{{"event": "step_started", "step": "a"}, {"event": "step_completed", "step": "a"}} {
		if status, out := c.do("POST", url, ev); status != 200 {
			t.Fatalf("after the refusal: %d %v", status, out)
		}
	}
	for op, body := range map[string]map[string]any{"end": {"status": "failed"}, "transition": {"to": "paused"}} {
		body["time"] = "2099-01-01T00:00:00Z"
		if status, out := c.do("POST", "/v1/orgs/acme/playbooks/finance/runs/"+run+"/"+op, body); status != 400 || !strings.Contains(message(out), "ahead of the server's clock") {
			t.Fatalf("%s in 2099: %d %v", op, status, out)
		}
	}
}

// vaultClean: quire check finds nothing, git fsck and git status are clean.
func vaultClean(t *testing.T, l *ledger.Ledger) {
	t.Helper()
	rep, err := l.Check()
	if err != nil || len(rep.Problems) > 0 {
		t.Fatalf("quire check: %v %+v", err, rep)
	}
	if out, err := gittest.Fsck(l.Root(), "--strict"); err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
}

// seedPlain is seed with a workflow without a page, so that nothing is
// type-checked: these tests are about the history alone.
func seedPlain(t *testing.T, l *ledger.Ledger) string {
	t.Helper()
	p := mustCall(t, l, "create_project", map[string]any{"name": "Finance"})
	mustCall(t, l, "create_playbook", map[string]any{"playbook": "finance", "name": "Finance"})
	mustCall(t, l, "create_definition", map[string]any{"playbook": "finance", "type": "workflow", "name": "close-the-month",
		"source": "document:\n  name: close-the-month\n", "actor": "ana"})
	return p["uid"].(string)
}
