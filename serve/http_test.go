package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"quire/ledger"
	"quire/words/refusal"
)

// Every operation of the table has its route: a call to it answers
// something other than a missing route, whatever the ledger then says.
func TestEveryOperationHasARoute(t *testing.T) {
	l := newLedger(t)
	project := seed(t, l)
	runID := "019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3e"
	if _, ok := ledger.Lookup("run_definition"); ok {
		runID = startRun(t, l, project)
	}
	fill := map[string]string{"playbook": "finance", "type": "workflow", "name": "close-the-month",
		"run_id": runID, "event_id": runID + "_1"}
	_, c := newTestServer(t, newServer(l, true, nil))
	ops := ledger.Ops()
	if len(ops) < 5 {
		t.Fatalf("the table has %d operations", len(ops))
	}
	for _, op := range ops {
		t.Run(op.Name, func(t *testing.T) {
			if op.Method == "" || op.Path == "" {
				t.Fatalf("%s has no route (Method %q, Path %q)", op.Name, op.Method, op.Path)
			}
			p := op.Path
			for _, seg := range splitPath(op.Path) {
				if isParam(seg) {
					v, ok := fill[seg[1:len(seg)-1]]
					if !ok {
						v = "x"
					}
					p = strings.Replace(p, seg, v, 1)
				}
			}
			var body any
			if op.Method != http.MethodGet {
				body = map[string]any{}
			}
			status, out := c.do(op.Method, "/v1/orgs/acme"+p, body)
			if status == http.StatusMethodNotAllowed || (status == http.StatusNotFound && strings.HasPrefix(message(out), "no route")) {
				t.Fatalf("%s %s: %d %v", op.Method, p, status, out)
			}
			if status >= 500 && status != http.StatusServiceUnavailable {
				t.Fatalf("%s %s: %d %v", op.Method, p, status, out)
			}
			if status != http.StatusOK && code(out) == "" {
				t.Fatalf("%s %s: %d without a refusal object: %v", op.Method, p, status, out)
			}
		})
	}
}

// A POST route with a JSON body and path segments: create_definition, and
// a GET that coerces its query parameters by the arguments' types.
func TestBodiesAndQueries(t *testing.T) {
	l := newLedger(t)
	_, c := newTestServer(t, newServer(l, true, nil))
	st, out := c.do("POST", "/v1/orgs/acme/playbooks", map[string]any{"playbook": "finance", "name": "Finance"})
	if st != 200 || out["playbook"] != "finance" {
		t.Fatalf("create_playbook: %d %v", st, out)
	}
	st, out = c.do("POST", "/v1/orgs/acme/playbooks/finance/definitions",
		map[string]any{"type": "workflow", "name": "close-the-month", "source": workflowSource(t)})
	if st != 200 || out["version"] != float64(1) {
		t.Fatalf("create_definition: %d %v", st, out)
	}
	// The path's playbook and the body's must agree.
	st, out = c.do("POST", "/v1/orgs/acme/playbooks/finance/definitions",
		map[string]any{"playbook": "other", "type": "workflow", "name": "x-y-z", "source": "a: 1"})
	if st != 400 || !strings.Contains(message(out), "path names playbook") {
		t.Fatalf("two playbooks: %d %v", st, out)
	}
	st, out = c.do("GET", "/v1/orgs/acme/playbooks/finance/definitions/workflow/close-the-month?version=1", nil)
	if st != 200 || out["source"] != workflowSource(t) {
		t.Fatalf("get_definition?version=1: %d %v", st, out)
	}
	st, out = c.do("GET", "/v1/orgs/acme/playbooks/finance/definitions/workflow/close-the-month?version=one", nil)
	if st != 400 || code(out) != "invalid_input" || !strings.Contains(message(out), "/version") {
		t.Fatalf("version=one: %d %v", st, out)
	}
	st, out = c.do("GET", "/v1/orgs/acme/playbooks/finance/definitions/workflow/close-the-month?colour=red", nil)
	if st != 400 || !strings.Contains(message(out), "colour") {
		t.Fatalf("an unknown parameter: %d %v", st, out)
	}
	st, out = c.do("DELETE", "/v1/orgs/acme/playbooks/finance", nil)
	if st != 405 {
		t.Fatalf("DELETE a playbook: %d %v", st, out)
	}
	st, out = c.do("POST", "/v1/orgs/acme/playbooks", "[1,2]")
	if st != 400 || code(out) != "invalid_input" {
		t.Fatalf("an array body: %d %v", st, out)
	}
	st, _ = c.do("GET", "/v1/orgs/acme/playbooks/finance/", nil)
	if st != 200 {
		t.Fatalf("a trailing slash: %d", st)
	}
}

// Every refusal code has its status, and the refusal object comes with it.
func TestRefusalStatuses(t *testing.T) {
	l := newLedger(t)
	seed(t, l)
	s := newServer(l, true, nil)
	s.invoke = func(ctx context.Context, op *ledger.Op, args any) (any, error) {
		if op.Name == "list_projects" {
			return nil, refusal.New(refusal.Unavailable, "the checker is busy")
		}
		return l.Invoke(ctx, op, args)
	}
	_, c := newTestServer(t, s)
	admin, err := CreateToken(l, "ana", []string{"admin"})
	if err != nil {
		t.Fatal(err)
	}
	reader, _ := CreateToken(l, "rui", []string{"playbook:read"})
	cases := []struct {
		name, token, method, path string
		body                      any
		status                    int
		code                      string
	}{
		{"400", admin, "POST", "/v1/orgs/acme/playbooks", map[string]any{"playbook": "No!", "name": "x"}, 400, "invalid_input"},
		{"401 none", "", "GET", "/v1/orgs/acme/playbooks", nil, 401, "unauthenticated"},
		{"401 bad", "quire_nottoken", "GET", "/v1/orgs/acme/playbooks", nil, 401, "unauthenticated"},
		{"401 mcp", "", "POST", "/mcp", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, 401, "unauthenticated"},
		{"403", reader, "POST", "/v1/orgs/acme/playbooks", map[string]any{"playbook": "sales", "name": "Sales"}, 403, "forbidden"},
		{"404 playbook", reader, "GET", "/v1/orgs/acme/playbooks/nowhere", nil, 404, "not_found"},
		{"404 org", reader, "GET", "/v1/orgs/globex/playbooks", nil, 404, "not_found"},
		{"404 route", reader, "GET", "/v1/orgs/acme/nothing/here", nil, 404, "not_found"},
		{"409", admin, "POST", "/v1/orgs/acme/playbooks", map[string]any{"playbook": "finance", "name": "Finance"}, 409, "conflict"},
		{"503", reader, "GET", "/v1/orgs/acme/projects", nil, 503, "unavailable"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, out := c.with(tc.token).do(tc.method, tc.path, tc.body)
			if st != tc.status || code(out) != tc.code || message(out) == "" {
				t.Fatalf("%s %s: %d %v, want %d %s", tc.method, tc.path, st, out, tc.status, tc.code)
			}
		})
	}
	// The OpenAPI document is read without a token, and says 401 is
	// unauthenticated.
	if st, raw := c.doRaw("GET", "/v1/openapi.json", nil); st != 200 || !strings.Contains(string(raw), `"unauthenticated"`) {
		t.Fatalf("GET /v1/openapi.json without a token: %d %.200s", st, raw)
	}
}

// A body over 1 MiB is refused with 413 whether it says its length or not,
// and so is a sample_output over 256 KiB.
func TestBodyLimits(t *testing.T) {
	l := newLedger(t)
	_, c := newTestServer(t, newServer(l, true, nil))
	big := `{"name":"` + strings.Repeat("a", MaxBody) + `"}`
	st, out := c.do("POST", "/v1/orgs/acme/projects", big)
	if st != 413 || code(out) != "invalid_input" {
		t.Fatalf("a 1 MiB body: %d %v", st, out)
	}
	// Chunked: no Content-Length, so the limit stops the read itself.
	st, out = c.do("POST", "/v1/orgs/acme/projects", io.MultiReader(strings.NewReader(big)))
	if st != 413 || code(out) != "invalid_input" || !strings.Contains(message(out), "1 MiB") {
		t.Fatalf("a chunked 1 MiB body: %d %v", st, out)
	}
	sample := fmt.Sprintf(`{"name":"x","sample_output":{"text":%q}}`, strings.Repeat("b", MaxSampleOutput))
	st, out = c.do("POST", "/v1/orgs/acme/projects", sample)
	if st != 413 || code(out) != "invalid_input" || !strings.Contains(message(out), "/sample_output") {
		t.Fatalf("a 256 KiB sample_output: %d %v", st, out)
	}
	deep := `{"name":"x","sample_output":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`
	st, out = c.do("POST", "/v1/orgs/acme/projects", deep)
	if st != 400 || !strings.Contains(message(out), "nested") {
		t.Fatalf("a deep sample_output: %d %v", st, out)
	}
	st, out = c.do("POST", "/v1/orgs/acme/projects", map[string]any{"name": "Small"})
	if st != 200 {
		t.Fatalf("after the refusals: %d %v", st, out)
	}
}

// A panic in a handler answers 500 with the refusal object, and the next
// request is served.
func TestPanicAnswers500(t *testing.T) {
	l := newLedger(t)
	s := newServer(l, true, nil)
	s.invoke = func(ctx context.Context, op *ledger.Op, args any) (any, error) {
		if op.Name == "list_projects" {
			var m map[string]int
			//lint:ignore SA5000 the nil map is the point: a real runtime panic
			m["boom"]++
		}
		return l.Invoke(ctx, op, args)
	}
	_, c := newTestServer(t, s)
	for range 3 {
		st, out := c.do("GET", "/v1/orgs/acme/projects", nil)
		if st != 500 || code(out) != "unavailable" || !strings.Contains(message(out), "list_projects") {
			t.Fatalf("a panic: %d %v", st, out)
		}
		st, out = c.do("GET", "/v1/orgs/acme/playbooks", nil)
		if st != 200 {
			t.Fatalf("after a panic: %d %v", st, out)
		}
	}
	// A panic outside any call, in the handler itself.
	h := s.recovered(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("in the router") }))
	rec := &recorder{h: http.Header{}}
	h.ServeHTTP(rec, mustRequest(t, "GET", "/v1/orgs/acme/playbooks"))
	var out map[string]any
	json.Unmarshal(rec.body.Bytes(), &out)
	if rec.status != 500 || code(out) != "unavailable" {
		t.Fatalf("a panic in the router: %d %s", rec.status, rec.body.String())
	}
}

type recorder struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.h }
func (r *recorder) WriteHeader(s int)           { r.status = s }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }

func mustRequest(t *testing.T, method, url string) *http.Request {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// A server without tokens answers only requests addressed to localhost.
func TestOpenServerOnlyForLocalhost(t *testing.T) {
	l := newLedger(t)
	_, c := newTestServer(t, newServer(l, true, nil))
	req, _ := http.NewRequest("GET", c.base+"/v1/orgs/acme/playbooks", nil)
	req.Host = "attacker.example:8080"
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Fatalf("a rebinding host: %d", resp.StatusCode)
	}
	// Not open, no tokens: refused.
	_, c2 := newTestServer(t, newServer(l, false, nil))
	if st, out := c2.do("GET", "/v1/orgs/acme/playbooks", nil); st != 401 || !strings.Contains(message(out), "quire token create") {
		t.Fatalf("closed without tokens: %d %v", st, out)
	}
}

func TestCrossOriginWritesRefused(t *testing.T) {
	l := newLedger(t)
	_, c := newTestServer(t, newServer(l, true, nil))
	req, _ := http.NewRequest("POST", c.base+"/v1/orgs/acme/projects", strings.NewReader(`{"name":"Evil"}`))
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Fatalf("a cross-site POST: %d", resp.StatusCode)
	}
	if _, err := os.Stat(filepath.Join(l.Root(), "projects/evil.md")); err == nil {
		t.Fatal("the cross-site POST made a project")
	}
}

// No two operations share a route: the second would never be served.
func TestRoutesAreDistinct(t *testing.T) {
	seen := map[string]string{}
	for _, op := range ledger.Ops() {
		key := op.Method + " " + braces.ReplaceAllString(op.Path, "{}")
		if other, dup := seen[key]; dup {
			t.Errorf("%s and %s share the route %s", other, op.Name, key)
		}
		seen[key] = op.Name
	}
}

// A nested artifact name takes the rest of the path, with or without %2F,
// and the OpenAPI document says so.
func TestNestedArtifactPath(t *testing.T) {
	l := newLedger(t)
	runID := startRun(t, l, seed(t, l))
	_, c := newTestServer(t, newServer(l, true, nil))
	base := "/v1/orgs/acme/playbooks/finance/runs/" + runID + "/artifacts/"
	for name, path := range map[string]string{"reports/2026/q3.csv": "reports/2026/q3.csv", "raw/a.json": "raw%2Fa.json"} {
		st, out := c.do("PUT", base+path, map[string]any{"content": "x", "actor": "agent-7"})
		if st != 200 {
			t.Fatalf("PUT %s: %d %v", path, st, out)
		}
		run := mustCall(t, l, "get_run", map[string]any{"playbook": "finance", "run_id": runID})
		if _, err := os.Stat(filepath.Join(l.Root(), run["path"].(string)+"/artifacts/"+name)); err != nil {
			t.Fatalf("PUT %s: %v", path, err)
		}
	}
	if st, out := c.do("PUT", base+"reports/", map[string]any{"content": "x", "actor": "agent-7"}); st == 200 {
		t.Fatalf("a name ending in a slash: %d %v", st, out)
	}
	doc := toJSON(OpenAPI())
	if !strings.Contains(doc, `"/v1/orgs/{org}/playbooks/{playbook}/runs/{run_id}/artifacts/{name}"`) || !strings.Contains(doc, "the rest of the path") {
		t.Fatalf("the OpenAPI document does not say a name takes the rest of the path")
	}
}
