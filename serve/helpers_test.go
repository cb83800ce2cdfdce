package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"quire/ledger"
	"quire/vault"
)

// newLedger is a fresh vault of the organization acme.
func newLedger(t testing.TB) *ledger.Ledger {
	t.Helper()
	v, err := vault.Init(t.TempDir(), "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	l := ledger.New(v)
	t.Cleanup(func() { l.Close() })
	return l
}

// mustCall runs an operation on the ledger directly and answers its JSON.
func mustCall(t testing.TB, l *ledger.Ledger, name string, args any) map[string]any {
	t.Helper()
	raw, _ := json.Marshal(args)
	res, err := l.Call(context.Background(), name, raw)
	if err != nil {
		t.Fatalf("%s %s: %v", name, raw, err)
	}
	b, _ := json.Marshal(res)
	var out map[string]any
	json.Unmarshal(b, &out)
	return out
}

// workflowSource is the spec's close-the-month workflow from the demo
// vault, or a small one when the fixture is not there.
func workflowSource(t testing.TB) string {
	if b, err := os.ReadFile("../testdata/vault/close-the-month.yaml"); err == nil {
		return string(b)
	}
	return "document:\n  dsl: '1.0.0'\n  namespace: finance\n  name: close-the-month\n  version: '1.0.0'\ndo:\n  - reconcile:\n      call: reconcile\n"
}

// playbookPage is a playbook's page: the data and runs of close-the-month's
// page, without its result.
func playbookPage(t testing.TB) string {
	src := workflowSource(t)
	at := strings.Index(src, "\npage:\n")
	if at < 0 {
		t.Fatal("close-the-month has no page")
	}
	var out []string
	keep := true
	for _, line := range strings.Split(src[at+len("\npage:\n"):], "\n") {
		if strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ") {
			keep = !strings.HasPrefix(line, "  result:")
		}
		if keep {
			out = append(out, strings.TrimPrefix(line, "  "))
		}
	}
	return strings.Join(out, "\n")
}

// seed makes a project, the playbook finance and its workflow
// close-the-month, and answers the project's uid.
func seed(t testing.TB, l *ledger.Ledger) string {
	t.Helper()
	p := mustCall(t, l, "create_project", map[string]any{"name": "Finance"})
	mustCall(t, l, "create_playbook", map[string]any{"playbook": "finance", "name": "Finance"})
	mustCall(t, l, "create_definition", map[string]any{"playbook": "finance", "type": "workflow", "name": "close-the-month",
		"source": workflowSource(t), "actor": "ana"})
	return p["uid"].(string)
}

// startRun starts a run of close-the-month directly and answers its id.
func startRun(t testing.TB, l *ledger.Ledger, project string) string {
	t.Helper()
	r := mustCall(t, l, "run_definition", map[string]any{"playbook": "finance", "type": "workflow", "name": "close-the-month",
		"member_of": []string{project}, "executor": "agent-7", "authorized_by": "ana"})
	return r["run_id"].(string)
}

func needOps(t testing.TB, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, ok := ledger.Lookup(n); !ok {
			t.Skipf("the table has no %s yet", n)
		}
	}
}

// client speaks to a test server's HTTP API.
type client struct {
	t     testing.TB
	base  string
	token string
	hc    *http.Client
}

func newTestServer(t testing.TB, s *server) (*httptest.Server, *client) {
	ts := httptest.NewServer(s.handler())
	t.Cleanup(ts.Close)
	return ts, &client{t: t, base: ts.URL, hc: ts.Client()}
}

func (c *client) with(token string) *client {
	cc := *c
	cc.token = token
	return &cc
}

// do sends a request; body is JSON-encoded unless it is a string or nil.
func (c *client) do(method, path string, body any) (int, map[string]any) {
	c.t.Helper()
	status, raw := c.doRaw(method, path, body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		var list []any
		if json.Unmarshal(raw, &list) == nil {
			return status, map[string]any{"items": list}
		}
		c.t.Fatalf("%s %s: %d, not JSON: %q", method, path, status, raw)
	}
	return status, out
}

func (c *client) doRaw(method, path string, body any) (int, []byte) {
	c.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case io.Reader:
		r = b
	default:
		raw, _ := json.Marshal(b)
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, c.base+path, r)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	checkAnswer(c.t, method, req.URL.EscapedPath(), resp, raw)
	return resp.StatusCode, raw
}

// code is the refusal code of an answer, or "".
func code(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func message(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}
