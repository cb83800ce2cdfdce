package serve

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The Idempotency-Key header is a write's request_id: a retried POST
// answers the first answer and records nothing more.
func TestIdempotencyKeyHeader(t *testing.T) {
	l := newLedger(t)
	runID := startRun(t, l, seed(t, l))
	ts, _ := newTestServer(t, newServer(l, true, nil))
	post := func(key, body string) (int, map[string]any) {
		req, _ := http.NewRequest("POST", ts.URL+"/v1/orgs/acme/playbooks/finance/runs/"+runID+"/events", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var out map[string]any
		json.Unmarshal(raw, &out)
		return resp.StatusCode, out
	}
	body := `{"event":"step_completed","step":"do/1","actor":"agent-7"}`
	s1, a1 := post("key-1", body)
	s2, a2 := post("key-1", body)
	if s1 != 200 || s2 != 200 || a1["id"] != a2["id"] || a1["seq"] != a2["seq"] {
		t.Fatalf("first %d %v, repeat %d %v", s1, a1, s2, a2)
	}
	if s, out := post("key-1", `{"event":"step_completed","step":"do/2","actor":"agent-7"}`); s != http.StatusConflict || !strings.Contains(message(out), "request_id") {
		t.Fatalf("the same key with another body: %d %v", s, out)
	}
	if s, out := post("key-2", `{"event":"step_completed","step":"do/2","actor":"agent-7","request_id":"other"}`); s != http.StatusBadRequest || !strings.Contains(message(out), "Idempotency-Key") {
		t.Fatalf("a header and a request_id that differ: %d %v", s, out)
	}
	runs, _ := filepath.Glob(filepath.Join(l.Root(), "playbook-runs", "close-the-month-*", "run.jsonl"))
	data, _ := os.ReadFile(runs[0])
	if n := strings.Count(string(data), "step_completed"); n != 1 {
		t.Fatalf("run.jsonl holds %d step_completed lines, want 1:\n%s", n, data)
	}
}
