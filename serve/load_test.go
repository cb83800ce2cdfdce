package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// appendLoad has clients concurrent clients append perClient events each
// over HTTP, every client to its own run, then reads the playbook's
// history back: every event is there once, and seq runs 1, 2, 3… without
// a gap. It answers the events appended and how long they took.
func appendLoad(tb testing.TB, clients, perClient int) (int, time.Duration) {
	needOps(tb, "run_definition", "record_event", "list_playbook_events")
	l := newLedger(tb)
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
				body, _ := json.Marshal(map[string]any{"event": "call_record", "detail": fmt.Sprintf("client %d call %d", i, n),
					"data": map[string]any{"client": i, "n": n}})
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
			if e.Type == "call_record" {
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
