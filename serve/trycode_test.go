package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"quire/fold"
	"quire/ledger"
)

// warmQuickJS compiles QuickJS into the cache the vault's folds use (the
// user's, fold.CompiledCache, as the ledger's), as the vault's first fold
// does, so the calls a test times start their workers from it: a
// compilation takes seconds of CPU, and many times that under the race
// detector, past try_code's 10 s for a call. Once the cache holds it, this
// costs a worker's start.
func warmQuickJS(t *testing.T, l *ledger.Ledger) {
	t.Helper()
	p, err := fold.NewPool(fold.PoolOptions{CacheDir: fold.CompiledCache(filepath.Join(l.Root(), ".quire", "qjs-cache"))})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	prog := fold.NewProgram("export function fold(view, event) { return view; }", nil, 1, nil)
	if _, err := p.Fold(context.Background(), prog, nil, []fold.Event{{Seq: 1, JSON: []byte(`{}`), Time: time.Now()}}); err != nil {
		t.Fatal(err)
	}
}

// runawaySource is an AgentRun document whose one code node never returns.
const runawaySource = `{"v": 2, "name": "spin", "schemas": {"N": {"type": "object"}}, "output": {"schemaId": "N", "path": "n"},
  "root": {"node": "code", "label": "spin", "as": "n", "code": "(s) => { let n = 0; for (;;) n++; }"}}`

// try_code runs code, so it needs playbook:write: a read token is refused
// as forbidden over HTTP and over MCP, with the scope it needs.
func TestTryCodeNeedsTheWriteScope(t *testing.T) {
	t.Parallel()
	l := newLedger(t)
	warmQuickJS(t, l)
	reader, _ := CreateToken(l, "rui", []string{"playbook:read"})
	writer, _ := CreateToken(l, "ana", []string{"playbook:write"})
	ts, c := newTestServer(t, newServer(l, false, nil))
	args := map[string]any{"source": agentRunSource, "label": "count", "state": map[string]any{"items": []int{1, 2}}}
	const words = "try_code needs the scope playbook:write; the token of rui has playbook:read"
	if st, out := c.with(reader).do("POST", "/v1/orgs/acme/workflows/try-code", args); st != 403 || code(out) != "forbidden" || message(out) != words {
		t.Errorf("a read token over HTTP: %d %v", st, out)
	}
	cs, err := connectHTTP(t, ts.URL, reader)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "try_code", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var out map[string]any
	json.Unmarshal(raw, &out)
	if !res.IsError || code(out) != "forbidden" || message(out) != words {
		t.Errorf("a read token over MCP: %s", raw)
	}
	if st, out := c.with(writer).do("POST", "/v1/orgs/acme/workflows/try-code", args); st != 200 || fmt.Sprint(out["value"]) != "map[count:2]" {
		t.Errorf("a write token over HTTP: %d %v", st, out)
	}
}

// Parallel calls of try_code over a code node that loops for ever are
// each answered in bounded time: the one running and the two waiting
// with an error of kind time after try_code's 1 s of wall time each,
// the others refused at once as unavailable, naming the bound. Then a
// call runs as usual. Before, one worker folded them in turn without a
// bound on the queue (5 s of CPU each, twice over, and on a loaded
// machine twenty tries of 10 s): of 16 such calls 2 were answered after
// 33 to 48 s and 14 connections dropped. With QUIRE_TEST_LONG the calls
// are made while two busy processes a processor, started by the test,
// load the machine: the bound is of wall time, so it holds all the same.
func TestTryCodeRunawaysAreBounded(t *testing.T) {
	t.Parallel()
	if os.Getenv("QUIRE_TEST_LONG") != "" {
		for range 2 * runtime.NumCPU() {
			cmd := exec.Command("sh", "-c", "while :; do :; done")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			})
		}
	}
	l := newLedger(t)
	warmQuickJS(t, l)
	writer, _ := CreateToken(l, "ana", []string{"playbook:write"})
	ts, c := newTestServer(t, newServer(l, false, nil))
	const calls = 8
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: calls}, Timeout: time.Minute}
	type answer struct {
		status int
		body   map[string]any
		took   time.Duration
		err    error
	}
	answers := make([]answer, calls)
	body, _ := json.Marshal(map[string]any{"source": runawaySource, "label": "spin", "state": map[string]any{}})
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", ts.URL+"/v1/orgs/acme/workflows/try-code", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+writer)
			req.Header.Set("Content-Type", "application/json")
			<-start
			began := time.Now()
			resp, err := hc.Do(req)
			a := answer{err: err}
			if err == nil {
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				a.status = resp.StatusCode
				if err := json.Unmarshal(raw, &a.body); err != nil {
					a.err = fmt.Errorf("not JSON: %q", raw)
				}
			}
			a.took = time.Since(began)
			answers[i] = a
		}()
	}
	close(start)
	wg.Wait()
	sort.Slice(answers, func(i, j int) bool { return answers[i].took < answers[j].took })
	const timeWords = "the function ran for more than 1s, try_code's bound of wall time: it may loop for ever, or need more than a busy machine gave it"
	const busyWords = "try_code is busy: it runs 1 function at a time and at most 2 more calls wait their turn, and 3 are running or waiting; try again in a few seconds"
	ran, refused := 0, 0
	for _, a := range answers {
		switch {
		case a.err != nil:
			t.Errorf("a call was not answered: %v (after %v)", a.err, a.took)
		case a.took > 12*time.Second:
			t.Errorf("a call was answered after %v: %d %v", a.took, a.status, a.body)
		case a.status == 200:
			e, _ := a.body["error"].(map[string]any)
			if e["kind"] != "time" || e["message"] != timeWords {
				t.Errorf("after %v: %v", a.took, a.body)
			}
			ran++
		case a.status == 503 && code(a.body) == "unavailable" && message(a.body) == busyWords:
			refused++
		default:
			t.Errorf("after %v: %d %v", a.took, a.status, a.body)
		}
	}
	if ran != 3 || refused != calls-3 {
		var lines []string
		for _, a := range answers {
			lines = append(lines, fmt.Sprintf("%v: %d %v", a.took, a.status, a.body))
		}
		t.Errorf("%d ran and %d were refused, want 3 and %d:\n%s", ran, refused, calls-3, strings.Join(lines, "\n"))
	}
	var took []string
	for _, a := range answers {
		took = append(took, a.took.Round(time.Millisecond).String())
	}
	t.Logf("answered after %s", strings.Join(took, ", "))
	// The one running and the two waiting took their turns.
	if slowest := answers[calls-1].took; slowest < 3*time.Second {
		t.Errorf("the last of three runaways was answered after %v", slowest)
	}
	args := map[string]any{"source": agentRunSource, "label": "count", "state": map[string]any{"items": []int{1, 2}}}
	if st, out := c.with(writer).do("POST", "/v1/orgs/acme/workflows/try-code", args); st != 200 || fmt.Sprint(out["value"]) != "map[count:2]" {
		t.Errorf("after the runaways: %d %v", st, out)
	}
}
