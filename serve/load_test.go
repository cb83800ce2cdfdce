package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"quire/ledger"
)

// appendLoad has clients concurrent clients append perClient events each
// over HTTP, every client to its own run, then reads the playbook's
// history back: every event is there once, and seq runs 1, 2, 3… without
// a gap. It answers the events appended and how long they took.
func appendLoad(tb testing.TB, clients, perClient int) (int, time.Duration) {
	return loadOf(tb, newLedger(tb), clients, perClient, false)
}

// boundaryLoad is appendLoad on l with every event a boundary
// (step_completed), each its own commit.
func boundaryLoad(tb testing.TB, l *ledger.Ledger, clients, perClient int) (int, time.Duration) {
	return loadOf(tb, l, clients, perClient, true)
}

func loadOf(tb testing.TB, l *ledger.Ledger, clients, perClient int, boundary bool) (int, time.Duration) {
	needOps(tb, "run_definition", "record_event", "list_playbook_events")
	project := seed(tb, l)
	runs := make([]string, clients)
	for i := range runs {
		runs[i] = startRun(tb, l, project)
	}
	tok, err := CreateToken(l, "agent-7", []string{"playbook:write"})
	if err != nil {
		tb.Fatal(err)
	}
	ts := httptest.NewServer(newServer(l, false, nil).handler())
	defer ts.Close()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}, Timeout: time.Minute}

	var wg sync.WaitGroup
	errs := make(chan error, clients)
	start := time.Now()
	for i, run := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			url := ts.URL + "/v1/orgs/acme/playbooks/finance/runs/" + run + "/events"
			for n := range perClient {
				ev := map[string]any{"event": "call_record", "detail": fmt.Sprintf("client %d call %d", i, n),
					"data": map[string]any{"client": i, "n": n}}
				if boundary {
					ev["event"], ev["step"] = "step_completed", fmt.Sprintf("step/%d", n)
				}
				body, _ := json.Marshal(ev)
				req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+tok)
				req.Header.Set("Content-Type", "application/json")
				resp, err := hc.Do(req)
				if err != nil {
					errs <- err
					return
				}
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					errs <- fmt.Errorf("client %d event %d: %d %s", i, n, resp.StatusCode, raw)
					return
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}

	// Read the whole history back over HTTP.
	perRun := map[string][]int{}
	var seq int64
	after := int64(0)
	for {
		req, _ := http.NewRequest("GET", fmt.Sprintf("%s/v1/orgs/acme/playbooks/finance/events?after=%d&limit=1000", ts.URL, after), nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := hc.Do(req)
		if err != nil {
			tb.Fatal(err)
		}
		var page struct {
			Events []struct {
				Type          string `json:"type"`
				Seq           int64  `json:"seq"`
				CorrelationID string `json:"correlationid"`
				Caller        string `json:"caller"`
				Data          struct {
					Client int `json:"client"`
					N      int `json:"n"`
				} `json:"data"`
			} `json:"events"`
			Next int64 `json:"next"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			tb.Fatalf("list_playbook_events: %d %v", resp.StatusCode, err)
		}
		for _, e := range page.Events {
			seq++
			if e.Seq != seq {
				tb.Fatalf("seq %d where %d was due", e.Seq, seq)
			}
			if e.Type == "call_record" || e.Type == "step_completed" {
				if e.Caller != "agent-7" {
					tb.Fatalf("event %d: caller %q", e.Seq, e.Caller)
				}
				perRun[e.CorrelationID] = append(perRun[e.CorrelationID], e.Data.N)
			}
		}
		if page.Next == 0 || len(page.Events) == 0 {
			break
		}
		after = page.Next
	}
	for i, run := range runs {
		ns := perRun[run]
		if len(ns) != perClient {
			tb.Fatalf("run %d holds %d of its %d events", i, len(ns), perClient)
		}
		for k, n := range ns {
			if n != k {
				tb.Fatalf("run %d: event %d is the client's %d", i, k, n)
			}
		}
	}
	return clients * perClient, took
}

// 16 clients appending at once lose nothing and leave no gap in seq.
func TestHTTPAppendLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	n, took := appendLoad(t, 16, 30)
	t.Logf("%d events in %v: %.0f events/s", n, took, float64(n)/took.Seconds())
}

// Boundaries that wait on the lock together are written as a group, and
// each is still its own commit: 4 clients record 3 boundaries each on
// their own runs, and git log shows 12 commits more, one line each in the
// reflog, every one naming its step, with the vault clean.
func TestHTTPBoundariesAreEachTheirOwnCommit(t *testing.T) {
	l := newLedger(t)
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", l.Root()}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	n, _ := loadOfCounted(t, l, 4, 3, git)
	if n != 12 {
		t.Fatalf("%d boundaries", n)
	}
	vaultClean(t, l)
	if st := git("status", "--porcelain"); st != "" {
		t.Fatalf("git status after the boundaries:\n%s", st)
	}
}

// loadOfCounted is boundaryLoad checking the history it leaves: a commit
// for each boundary, naming its step, one line of the reflog for every
// commit, and no merge (each commit the child of the one before).
func loadOfCounted(t *testing.T, l *ledger.Ledger, clients, perClient int, git func(...string) string) (int, time.Duration) {
	n, took := boundaryLoad(t, l, clients, perClient)
	steps := 0
	for _, subject := range strings.Split(git("log", "--format=%s"), "\n") {
		if strings.Contains(subject, ": step step/") && strings.HasSuffix(subject, " completed") {
			steps++
		}
	}
	commits := git("rev-list", "--count", "HEAD")
	reflog := len(strings.Split(git("reflog", "show", "main"), "\n"))
	if steps != n || commits != fmt.Sprint(reflog) {
		t.Fatalf("%d boundaries made %d commits of a step; %s commits, %d reflog lines\n%s", n, steps, commits, reflog, git("log", "--format=%s"))
	}
	if merges := git("rev-list", "--min-parents=2", "--count", "HEAD"); merges != "0" {
		t.Fatalf("%s merges in the history: the commits are not one chain", merges)
	}
	return n, took
}

// BenchmarkHTTPAppend: 16 clients append 1,000 events each, over HTTP, to
// 16 runs of one playbook; each iteration is the whole 16,000.
func BenchmarkHTTPAppend(b *testing.B) {
	total, elapsed := 0, time.Duration(0)
	for b.Loop() {
		n, took := appendLoad(b, 16, 1000)
		total += n
		elapsed += took
	}
	b.ReportMetric(float64(total)/elapsed.Seconds(), "events/s")
}

// BenchmarkHTTPBoundary: 16 clients record 100 boundaries each, over HTTP,
// to 16 runs of one playbook; each iteration is the whole 1,600.
func BenchmarkHTTPBoundary(b *testing.B) {
	total, elapsed := 0, time.Duration(0)
	for b.Loop() {
		n, took := boundaryLoad(b, newLedger(b), 16, 100)
		total += n
		elapsed += took
	}
	b.ReportMetric(float64(total)/elapsed.Seconds(), "boundaries/s")
}
