package serve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"quire/ledger"
)

// issuePaths are the paths of a refusal's issues.
func issuePaths(m map[string]any) []string {
	e, _ := m["error"].(map[string]any)
	list, _ := e["issues"].([]any)
	var out []string
	for _, is := range list {
		p, _ := is.(map[string]any)["path"].(string)
		out = append(out, p)
	}
	return out
}

// With tokens, a call acts as its token's principal: an actor, author,
// member, executor or authorized_by naming someone else is refused at its
// path, over HTTP and over MCP alike; executor and authorized_by of a new
// run may name another with playbook:delegate.
func TestATokenActsAsItsPrincipal(t *testing.T) {
	l := newLedger(t)
	project := seed(t, l)
	runID := startRun(t, l, project) // executor agent-7, authorized by ana
	ana, _ := CreateToken(l, "ana", []string{"playbook:write"})
	agent, _ := CreateToken(l, "agent-7", []string{"playbook:write"})
	mallory, _ := CreateToken(l, "mallory", []string{"playbook:write"})
	boss, _ := CreateToken(l, "boss", []string{"playbook:write", "playbook:delegate:finance"})
	rui, _ := CreateToken(l, "rui", []string{"playbook:read"})
	ts, c := newTestServer(t, newServer(l, false, nil))
	runs := "/v1/orgs/acme/playbooks/finance/runs/" + runID
	start := "/v1/orgs/acme/playbooks/finance/definitions/workflow/close-the-month/runs"

	refused := func(token, method, path string, body any, status int, wantCode, at string) {
		t.Helper()
		st, out := c.with(token).do(method, path, body)
		if st != status || code(out) != wantCode || !strings.Contains(strings.Join(issuePaths(out), " "), at) {
			t.Fatalf("%s %s %v: %d %v, want %d %s at %s", method, path, body, st, out, status, wantCode, at)
		}
	}
	// ana's token pauses agent-7's... as agent-7: refused, whatever the
	// capsule would let agent-7 do.
	refused(ana, "POST", runs+"/transition", map[string]any{"to": "paused", "actor": "agent-7"}, 403, "forbidden", "/actor")
	refused(mallory, "POST", runs+"/events", map[string]any{"event": "step_started", "step": "do/0/work", "actor": "agent-7"}, 403, "forbidden", "/actor")
	// Left out, the actor is the token's: mallory is not the run's
	// executor nor its authorizer, so rule 4 refuses.
	refused(mallory, "POST", runs+"/transition", map[string]any{"to": "paused"}, 403, "forbidden", "")
	if st, out := c.with(ana).do("POST", runs+"/transition", map[string]any{"to": "paused", "actor": "ana"}); st != 200 || out["state"] != "paused" {
		t.Fatalf("ana pauses the run she authorized: %d %v", st, out)
	}
	if st, out := c.with(agent).do("POST", runs+"/transition", map[string]any{"to": "active"}); st != 200 || out["state"] != "active" {
		t.Fatalf("agent-7 resumes its run: %d %v", st, out)
	}
	// A comment by someone else.
	refused(ana, "POST", "/v1/orgs/acme/comments", map[string]any{"playbook": "finance", "address": "finance/runs/" + runID, "text": "x", "author": "boss"}, 403, "forbidden", "/author")
	// A new run: executor and authorized_by are the token's, unless it may
	// delegate.
	body := func(executor, authorizedBy string) map[string]any {
		b := map[string]any{"member_of": []string{project}}
		if executor != "" {
			b["executor"] = executor
		}
		if authorizedBy != "" {
			b["authorized_by"] = authorizedBy
		}
		return b
	}
	refused(mallory, "POST", start, body("agent-7", "mallory"), 403, "forbidden", "/executor")
	refused(mallory, "POST", start, body("", "ana"), 403, "forbidden", "/authorized_by")
	if st, out := c.with(mallory).do("POST", start, body("", "")); st != 200 || out["executor"] != "mallory" || out["authorized_by"] != "mallory" {
		t.Fatalf("a run of mallory's own: %d %v", st, out)
	}
	if st, out := c.with(boss).do("POST", start, body("agent-7", "ana")); st != 200 || out["executor"] != "agent-7" || out["authorized_by"] != "ana" {
		t.Fatalf("a delegated run: %d %v", st, out)
	}
	// Its run created commit is the one who started it: the token's
	// principal, not the authorizer it names.
	if log, _ := exec.Command("git", "-C", l.Root(), "log", "-1", "--format=%an").Output(); string(log) != "boss\n" {
		t.Errorf("the delegated run's commit is authored by %q, want boss", log)
	}
	// The activity's marks: a writing scope, and only one's own.
	seen := map[string]any{"items": []string{"finance/runs/" + runID}}
	refused(rui, "POST", "/v1/orgs/acme/activity/seen", map[string]any{"member": "rui", "items": seen["items"]}, 403, "forbidden", "")
	refused(ana, "POST", "/v1/orgs/acme/activity/seen", map[string]any{"member": "rui", "items": seen["items"]}, 403, "forbidden", "/member")
	if st, out := c.with(ana).do("POST", "/v1/orgs/acme/activity/seen", seen); st != 200 || out["member"] != "ana" {
		t.Fatalf("ana marks her own: %d %v", st, out)
	}

	// The same over MCP, streamable HTTP.
	cs, err := connectHTTP(t, ts.URL, ana)
	if err != nil {
		t.Fatal(err)
	}
	mc := &caller{t: t, cs: cs, schemas: checkTools(t, cs)}
	out := mc.refused("transition_run", map[string]any{"playbook": "finance", "run_id": runID, "to": "paused", "actor": "agent-7"}, "forbidden")
	if p := issuePaths(out); len(p) != 1 || p[0] != "/actor" {
		t.Fatalf("over MCP: %v", out)
	}
	mc.refused("mark_activity_seen", map[string]any{"member": "rui", "items": seen["items"]}, "forbidden")
	// Over stdio (no token) the caller names whom it likes.
	local := &caller{t: t, cs: connectInMemory(t, l)}
	local.schemas = checkTools(t, local.cs)
	local.ok("transition_run", map[string]any{"playbook": "finance", "run_id": runID, "to": "paused", "actor": "agent-7"})
}

// treeHash hashes every file of the vault (the work tree, .git/refs and
// .git/packed-refs), but the caches under .quire/.
func treeHash(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == ".quire" || (strings.HasPrefix(rel, ".git/") && rel != ".git/refs" && !strings.HasPrefix(rel, ".git/refs/")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasPrefix(rel, ".git/") && !strings.HasPrefix(rel, ".git/refs/") && rel != ".git/packed-refs" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	return out
}

func diffTrees(a, b map[string]string) []string {
	var out []string
	for k, v := range a {
		if b[k] != v {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// readArgs are arguments every operation of the table takes and, for a
// read, answers: a test of a new operation starts by adding its own.
func readArgs(t *testing.T, l *ledger.Ledger, project, runID, member string) map[string]map[string]any {
	t.Helper()
	def := map[string]any{"playbook": "finance", "type": "workflow", "name": "close-the-month"}
	with := func(m map[string]any, kv ...any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	run := map[string]any{"playbook": "finance", "run_id": runID}
	cm := mustCall(t, l, "make_comment", map[string]any{"playbook": "finance", "address": "finance/runs/" + runID, "text": "Looks right.", "author": "ana"})
	return map[string]map[string]any{
		"list_activity":        {"member": member},
		"mark_activity_seen":   {"member": member, "items": []string{"finance/runs/" + runID}},
		"explain_address":      {"address": "finance/runs/" + runID},
		"check_vault":          {},
		"archive_idle_runs":    {"now": "2099-01-01T00:00:00Z", "days": 1},
		"repair_vault":         {},
		"make_comment":         {"playbook": "finance", "address": "finance/runs/" + runID, "text": "x", "author": member},
		"list_comments":        {"playbook": "finance"},
		"resolve_comment":      {"playbook": "finance", "id": cm["id"], "how": "acted", "actor": member},
		"create_project":       {"name": "Other"},
		"list_projects":        {},
		"list_remotes":         {},
		"create_playbook":      {"playbook": "other", "name": "Other"},
		"get_playbook":         {"playbook": "finance"},
		"list_playbooks":       {},
		"update_playbook":      {"playbook": "finance", "name": "Money"},
		"create_definition":    with(def, "name", "other-one", "source", workflowSource(t)),
		"update_definition":    with(def, "source", workflowSource(t)),
		"get_definition":       with(def, "render", true, "sample_output", map[string]any{"month": "2026-10", "revenue": 1}),
		"list_definitions":     {"playbook": "finance"},
		"retire_definition":    def,
		"render_page":          with(def, "run_id", runID),
		"diff_page":            with(def, "old", "HEAD"),
		"render_playbook_page": {"playbook": "finance"},
		"try_page":             with(def, "source", workflowSource(t)),
		"verify_page":          {"playbook": "finance", "subject": "workflow/close-the-month"},
		"list_playbook_events": {"playbook": "finance", "limit": 10},
		"get_event":            {"playbook": "finance", "event_id": runID + "_1"},
		"list_runs":            {"playbook": "finance"},
		"get_run":              with(run, "blocks", true),
		"get_run_files":        run,
		"list_run_commits":     with(run, "limit", 5),
		"run_definition":       with(def, "member_of", []string{project}, "executor", member, "authorized_by", member),
		"record_event":         with(run, "event", "step_started", "step", "do/0/work", "actor", member),
		"append_thread":        with(run, "text", "x", "actor", member),
		"put_artifact":         with(run, "name", "a.txt", "content", "x", "actor", member),
		"end_run":              with(run, "status", "failed", "detail", "gave up", "actor", member),
		"transition_run":       with(run, "to", "paused", "actor", member),
		"cancel_run":           with(run, "detail", "not needed", "actor", member),
		"inspect_workflow":     {"source": agentRunSource},
		"try_code":             {"source": agentRunSource, "label": "count", "state": map[string]any{"items": []int{1, 2}}},
	}
}

// agentRunSource is a small AgentRun workflow document of one code node.
const agentRunSource = `{"v": 2, "name": "count", "schemas": {"N": {"type": "object"}}, "output": {"schemaId": "N", "path": "n"},
  "root": {"node": "code", "label": "count", "as": "n", "code": "(s) => ({ count: s.items.length })"}}`

// A read token changes nothing: every operation of the table, called with
// arguments it would act on, over HTTP and over MCP, leaves every file of
// the vault as it was; each read answers, each write is refused as
// forbidden. So a read scope is never given to an operation that writes.
func TestAReadTokenWritesNothing(t *testing.T) {
	l := newLedger(t)
	project := seed(t, l)
	runID := startRun(t, l, project)
	pg := "data:\n  language: typescript\n  source:\n    events:\n      - type: run_succeeded\n  views:\n    runs_per_day: series\n  module: |\n    export function fold(view: View, event: Event): View {\n      return view;\n    }\nruns: |\n  {{ views.runs_per_day | json }}\n"
	mustCall(t, l, "update_playbook", map[string]any{"playbook": "finance", "page": pg})
	args := readArgs(t, l, project, runID, "rui")
	reader, _ := CreateToken(l, "rui", []string{"playbook:read"})
	ts, c := newTestServer(t, newServer(l, false, nil))
	c = c.with(reader)
	cs, err := connectHTTP(t, ts.URL, reader)
	if err != nil {
		t.Fatal(err)
	}
	checkTools(t, cs)
	before := treeHash(t, l.Root())
	for _, op := range ledger.Ops() {
		a, ok := args[op.Name]
		if !ok {
			t.Errorf("%s: readArgs has no arguments for it", op.Name)
			continue
		}
		// HTTP: the path from the arguments, the rest as the body or query.
		p, rest := op.Path, map[string]any{}
		for k, v := range a {
			rest[k] = v
		}
		for _, seg := range splitPath(op.Path) {
			if isParam(seg) {
				name := strings.TrimSuffix(seg[1:len(seg)-1], "...")
				p = strings.Replace(p, seg, fmt.Sprint(rest[name]), 1)
				delete(rest, name)
			}
		}
		var body any = rest
		if op.Method == "GET" {
			q := []string{}
			for k, v := range rest {
				b, _ := json.Marshal(v)
				s := strings.Trim(string(b), `"`)
				q = append(q, k+"="+s)
			}
			if len(q) > 0 {
				p += "?" + strings.Join(q, "&")
			}
			body = nil
		}
		st, out := c.do(op.Method, "/v1/orgs/acme"+p, body)
		read := op.Scope == ScopeRead
		if read && st != 200 {
			t.Errorf("%s over HTTP with a read token: %d %v", op.Name, st, out)
		}
		if !read && (st != 403 || code(out) != "forbidden") {
			t.Errorf("%s (scope %s) over HTTP with a read token: %d %v", op.Name, op.Scope, st, out)
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: op.Name, Arguments: a})
		if err != nil {
			t.Fatalf("%s over MCP: %v", op.Name, err)
		}
		if res.IsError == read {
			t.Errorf("%s (scope %s) over MCP with a read token: error %v, %v", op.Name, op.Scope, res.IsError, res.Content)
		}
		if read && !op.ReadOnly {
			t.Errorf("%s needs only %s but is not read-only", op.Name, op.Scope)
		}
	}
	if changed := diffTrees(before, treeHash(t, l.Root())); len(changed) > 0 {
		t.Fatalf("a read token changed %v", changed)
	}
}

// Every refusal carries at least one issue, at the path of the argument
// at fault where there is one: over HTTP for each status, and over MCP.
func TestEveryRefusalHasIssues(t *testing.T) {
	l := newLedger(t)
	project := seed(t, l)
	runID := startRun(t, l, project)
	s := newServer(l, true, nil)
	s.invoke = func(ctx context.Context, op *ledger.Op, args any) (any, error) {
		switch op.Name {
		case "list_projects":
			var m map[string]int
			//lint:ignore SA5000 the nil map is the point: a panic, 500
			m["boom"]++
		case "check_vault":
			return nil, fmt.Errorf("the disk is gone") // not a refusal: 503
		}
		return l.Invoke(ctx, op, args)
	}
	ts, c := newTestServer(t, s)
	ana, _ := CreateToken(l, "ana", []string{"admin"})
	rui, _ := CreateToken(l, "rui", []string{"playbook:read"})
	c = c.with(ana)
	nobody := "019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3e"
	runs := "/v1/orgs/acme/playbooks/finance/runs/"
	def := "/v1/orgs/acme/playbooks/finance/definitions/workflow/close-the-month"
	if st, out := c.do("POST", runs+runID+"/transition", map[string]any{"to": "paused"}); st != 200 {
		t.Fatalf("pause: %d %v", st, out)
	}
	cases := []struct {
		token, method, path string
		body                any
		status              int
		at                  string // "-": any path
	}{
		{ana, "POST", "/v1/orgs/acme/playbooks", map[string]any{"playbook": "No!", "name": "x"}, 400, "/playbook"},
		{ana, "GET", runs + nobody, nil, 404, "/run_id"},
		{ana, "GET", runs + "nope", nil, 400, "/run_id"},
		{ana, "GET", "/v1/orgs/acme/playbooks/finance/events/" + nobody + "_1", nil, 404, "/event_id"},
		{ana, "GET", "/v1/orgs/acme/playbooks/finance/definitions/workflow/nowhere", nil, 404, "/name"},
		{ana, "GET", def + "?version=9", nil, 404, "/version"},
		{ana, "GET", "/v1/orgs/acme/playbooks/nowhere", nil, 404, "/playbook"},
		{ana, "POST", "/v1/orgs/acme/comments/" + nobody + "/resolve", map[string]any{"playbook": "finance", "how": "acted"}, 404, "/id"},
		{ana, "POST", "/v1/orgs/acme/playbooks", map[string]any{"playbook": "finance", "name": "Finance"}, 409, "/playbook"},
		{ana, "POST", "/v1/orgs/acme/playbooks/finance/definitions", map[string]any{"type": "workflow", "name": "close-the-month", "source": workflowSource(t)}, 409, "/name"},
		{ana, "POST", runs + runID + "/transition", map[string]any{"to": "paused"}, 409, "/to"},
		{ana, "POST", runs + runID + "/events", map[string]any{"event": "step_started", "step": "do/0/work"}, 409, "/event"},
		{ana, "POST", runs + runID + "/end", map[string]any{"status": "failed", "detail": "gave up"}, 409, "/status"},
		{ana, "POST", runs + runID + "/transition", map[string]any{"to": "active", "actor": "agent-7"}, 403, "/actor"},
		{rui, "POST", runs + runID + "/transition", map[string]any{"to": "active"}, 403, "/playbook"},
		{"", "GET", "/v1/orgs/acme/playbooks", nil, 401, ""},
		{"quire_x", "GET", "/v1/orgs/acme/playbooks", nil, 401, ""},
		{ana, "GET", "/v1/orgs/globex/playbooks", nil, 404, "-"},
		{ana, "GET", "/v1/orgs/acme/no/such/route", nil, 404, "-"},
		{ana, "DELETE", "/v1/orgs/acme/playbooks", nil, 405, "-"},
		{ana, "POST", "/v1/orgs/acme/projects", `{"name":"` + strings.Repeat("a", MaxBody) + `"}`, 413, ""},
		{ana, "POST", "/v1/orgs/acme/projects", "[1]", 400, ""},
		{ana, "GET", "/v1/orgs/acme/projects", nil, 500, "-"},
		{ana, "GET", "/v1/orgs/acme/check", nil, 503, "-"},
	}
	for i, tc := range cases {
		st, out := c.with(tc.token).do(tc.method, tc.path, tc.body)
		paths := issuePaths(out)
		if st != tc.status || len(paths) == 0 || (tc.at != "-" && paths[0] != tc.at) {
			t.Errorf("%d: %s %s: %d %v, want %d with an issue at %q", i, tc.method, tc.path, st, out, tc.status, tc.at)
		}
	}
	// Over MCP, a refusal of the ledger and one of the transport.
	cs, err := connectHTTP(t, ts.URL, ana)
	if err != nil {
		t.Fatal(err)
	}
	mc := &caller{t: t, cs: cs, schemas: checkTools(t, cs)}
	out := mc.refused("get_run", map[string]any{"playbook": "finance", "run_id": nobody}, "not_found")
	if p := issuePaths(out); len(p) != 1 || p[0] != "/run_id" {
		t.Fatalf("get_run over MCP: %v", out)
	}
	out = mc.refused("get_event", map[string]any{"playbook": "finance", "event_id": nobody + "_1"}, "not_found")
	if p := issuePaths(out); len(p) != 1 || p[0] != "/event_id" {
		t.Fatalf("get_event over MCP: %v", out)
	}
}

// limit: 0 is refused, not taken as the default, and a run's input nests
// at most 512 levels: over HTTP and over MCP.
func TestLimitZeroAndADeepInput(t *testing.T) {
	l := newLedger(t)
	project := seed(t, l)
	_, c := newTestServer(t, newServer(l, true, nil))
	for _, p := range []string{"/playbooks/finance/runs?limit=0", "/playbooks/finance/events?limit=0", "/activity?limit=0", "/playbooks/finance/runs?limit=1001"} {
		st, out := c.do("GET", "/v1/orgs/acme"+p, nil)
		if st != 400 || strings.Join(issuePaths(out), " ") != "/limit" {
			t.Errorf("GET %s: %d %v", p, st, out)
		}
	}
	if st, out := c.do("GET", "/v1/orgs/acme/playbooks/finance/runs?limit=1", nil); st != 200 {
		t.Errorf("limit=1: %d %v", st, out)
	}
	deep := func(n int) json.RawMessage {
		return json.RawMessage(strings.Repeat(`{"a":`, n-1) + "[]" + strings.Repeat("}", n-1))
	}
	start := "/v1/orgs/acme/playbooks/finance/definitions/workflow/close-the-month/runs"
	body := func(input json.RawMessage) map[string]any {
		return map[string]any{"member_of": []string{project}, "executor": "agent-7", "authorized_by": "ana", "input": input}
	}
	if st, out := c.do("POST", start, body(deep(513))); st != 400 || strings.Join(issuePaths(out), " ") != "/input" {
		t.Errorf("an input of 513 levels: %d %v", st, out)
	}
	if st, out := c.do("POST", start, body(deep(512))); st != 200 {
		t.Errorf("an input of 512 levels: %d %v", st, out)
	}
	mc := &caller{t: t, cs: connectInMemory(t, l)}
	mc.schemas = checkTools(t, mc.cs)
	out := mc.refused("list_runs", map[string]any{"playbook": "finance", "limit": 0}, "invalid_input")
	if p := issuePaths(out); len(p) != 1 || p[0] != "/limit" {
		t.Errorf("list_runs limit 0 over MCP: %v", out)
	}
	out = mc.refused("run_definition", map[string]any{"playbook": "finance", "type": "workflow", "name": "close-the-month",
		"member_of": []string{project}, "executor": "agent-7", "authorized_by": "ana", "input": deep(600)}, "invalid_input")
	if p := issuePaths(out); len(p) != 1 || p[0] != "/input" {
		t.Errorf("a deep input over MCP: %v", out)
	}
}
