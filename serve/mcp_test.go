package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"quire/ledger"
)

func connectInMemory(t *testing.T, l *ledger.Ledger) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := NewMCPServer(l).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "quire-test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// bearer adds a token to every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.base.RoundTrip(r)
}

// connectHTTP connects an MCP client to url/mcp with token. The client
// holds the session's standalone stream (GET /mcp) open for as long as the
// session lives, so its HTTP client has no Timeout, which would cut that
// stream after the time given however well the server does (and with no
// retries the session then fails: "standalone SSE stream: exceeded 0
// retries without progress", as it did under the race detector once a
// test outlived 30 s). A server that does not answer is bounded instead by
// the wait for each answer's header.
func connectHTTP(t *testing.T, url, token string) (*mcp.ClientSession, error) {
	t.Helper()
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.ResponseHeaderTimeout = 30 * time.Second
	tr := &mcp.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearer{token, base}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "quire-test", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// toolSchemas checks the tools against the table and answers their output
// schemas, compiled as a strict client would.
func checkTools(t *testing.T, cs *mcp.ClientSession) map[string]*jsonschema.Schema {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != len(ledger.Ops()) {
		t.Fatalf("%d tools for %d operations", len(res.Tools), len(ledger.Ops()))
	}
	out := map[string]*jsonschema.Schema{}
	for _, tool := range res.Tools {
		op, ok := ledger.Lookup(tool.Name)
		if !ok {
			t.Fatalf("a tool %s the table does not have", tool.Name)
		}
		if tool.Description != toolDescription(op) || !strings.HasPrefix(tool.Description, op.Description) || op.Description == "" {
			t.Errorf("%s: description %q", tool.Name, tool.Description)
		}
		in, _ := json.Marshal(tool.InputSchema)
		var inm map[string]any
		json.Unmarshal(in, &inm)
		if inm["type"] != "object" {
			t.Errorf("%s: input schema %s", tool.Name, in)
		}
		for _, f := range argFields(op.Args) {
			props, _ := inm["properties"].(map[string]any)
			if _, ok := props[f.Name]; !ok {
				t.Errorf("%s: the input schema lacks %s", tool.Name, f.Name)
			}
			req, _ := json.Marshal(inm["required"])
			if f.Required != strings.Contains(string(req), `"`+f.Name+`"`) {
				t.Errorf("%s: %s required %v, schema says %s", tool.Name, f.Name, f.Required, req)
			}
		}
		outRaw, _ := json.Marshal(tool.OutputSchema)
		for _, raw := range [][]byte{in, outRaw} {
			if where := booleanSubschema(raw); where != "" {
				t.Errorf("%s: a boolean schema at %s, which the TypeScript SDK's client refuses", tool.Name, where)
			}
		}
		a := tool.Annotations
		if a == nil || a.ReadOnlyHint != op.ReadOnly || a.IdempotentHint != op.Idempotent {
			t.Errorf("%s: annotations %+v for read-only %v, idempotent %v", tool.Name, a, op.ReadOnly, op.Idempotent)
		}
		c := jsonschema.NewCompiler()
		raw, _ := json.Marshal(tool.OutputSchema)
		if tool.OutputSchema == nil {
			// A tool without an output schema (a write, a list) still
			// answers its answer's schema, as /v1/openapi.json gives it.
			raw, _ = json.Marshal(outputSchema(op))
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
		if err != nil {
			t.Fatal(err)
		}
		c.AddResource(tool.Name+".json", doc)
		sch, err := c.Compile(tool.Name + ".json")
		if err != nil {
			t.Fatalf("%s: output schema %s: %v", tool.Name, raw, err)
		}
		out[tool.Name] = sch
	}
	return out
}

// caller calls tools and checks each answer against its output schema.
type caller struct {
	t       *testing.T
	cs      *mcp.ClientSession
	schemas map[string]*jsonschema.Schema
	// principal is the token's, when the session has one: the story's
	// executor and authorizer, since a token acts only as its principal.
	principal string
}

func (c *caller) call(name string, args map[string]any) (map[string]any, *mcp.CallToolResult) {
	c.t.Helper()
	res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("%s: %v", name, err)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		c.t.Fatalf("%s: structured content %s", name, raw)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !jsonEqual(json.RawMessage(text), raw) && !jsonEqual(json.RawMessage(`{"items":`+text+`}`), raw) {
		c.t.Fatalf("%s: the text %s is not the structured content %s", name, text, raw)
	}
	// A refusal too: clients check every structured content.
	v, _ := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err := c.schemas[name].Validate(v); err != nil {
		c.t.Fatalf("%s: %s is not of its output schema: %v", name, raw, err)
	}
	return out, res
}

func (c *caller) ok(name string, args map[string]any) map[string]any {
	c.t.Helper()
	out, res := c.call(name, args)
	if res.IsError {
		c.t.Fatalf("%s: %v", name, out)
	}
	return out
}

func (c *caller) refused(name string, args map[string]any, wantCode string) map[string]any {
	c.t.Helper()
	out, res := c.call(name, args)
	if !res.IsError || code(out) != wantCode {
		c.t.Fatalf("%s: want a %s tool error, got %v", name, wantCode, out)
	}
	return out
}

// runStory is what an agent does: make a playbook and a workflow, start a
// run, record events, write the thread, end it, read it and its files,
// comment on it.
func runStory(t *testing.T, c *caller, actor string) (runID string) {
	ctx := context.Background()
	project := c.ok("create_project", map[string]any{"name": "Finance " + actor})["uid"].(string)
	pb := c.ok("create_playbook", map[string]any{"playbook": "finance", "name": "Finance"})
	if pb["playbook"] != "finance" {
		t.Fatalf("create_playbook: %v", pb)
	}
	c.refused("create_playbook", map[string]any{"playbook": "finance", "name": "Finance"}, "conflict")
	bad := c.refused("create_playbook", map[string]any{"playbook": "No", "name": "x"}, "invalid_input")
	if is, _ := bad["error"].(map[string]any)["issues"].([]any); len(is) == 0 {
		t.Fatalf("a refusal without its issues: %v", bad)
	}
	c.ok("create_definition", map[string]any{"playbook": "finance", "type": "workflow", "name": "close-the-month", "source": workflowSource(t)})
	if lst := c.ok("list_playbooks", nil); len(lst["items"].([]any)) != 1 {
		t.Fatalf("list_playbooks: %v", lst)
	}
	if _, ok := ledger.Lookup("run_definition"); !ok {
		t.Log("the table has no run operations yet; the run's story is left out")
		return ""
	}
	executor, authorizer := "agent-7", "ana"
	if c.principal != "" {
		executor, authorizer = c.principal, c.principal
	}
	run := c.ok("run_definition", map[string]any{"playbook": "finance", "type": "workflow", "name": "close-the-month",
		"member_of": []string{project}, "executor": executor, "authorized_by": authorizer})
	runID = run["run_id"].(string)
	c.ok("record_event", map[string]any{"playbook": "finance", "run_id": runID, "event": "step_started", "step": "do/0/reconcile", "actor": executor})
	c.ok("record_event", map[string]any{"playbook": "finance", "run_id": runID, "event": "step_completed", "step": "do/0/reconcile",
		"detail": "Reconciled 412 entries", "actor": executor})
	c.ok("append_thread", map[string]any{"playbook": "finance", "run_id": runID, "text": "Reconciled; the close is next.", "actor": executor})
	end := c.ok("end_run", map[string]any{"playbook": "finance", "run_id": runID, "status": "succeeded",
		"output": map[string]any{"month": "2026-10", "revenue": 182450}, "actor": executor})
	if end["status"] != "succeeded" {
		t.Fatalf("end_run: %v", end)
	}
	got := c.ok("get_run", map[string]any{"playbook": "finance", "run_id": runID})
	if got["state"] != "complete" || got["events"].(float64) < 4 {
		t.Fatalf("get_run: %v", got)
	}
	// Its page: the run rendered through the workflow's result.
	if strings.Contains(workflowSource(t), "page:") {
		page, _ := got["page"].(map[string]any)
		if page["result"] != "2026-10 closed with $182,450 of revenue." {
			t.Fatalf("get_run page: %v", got["page"])
		}
	}
	// The page's reads, with the views' standing, each checked against its
	// output schema by call.
	if strings.Contains(workflowSource(t), "page:") {
		def := map[string]any{"playbook": "finance", "type": "workflow", "name": "close-the-month"}
		for _, op := range []string{"get_definition", "render_page"} {
			if page, _ := c.ok(op, def)["page"].(map[string]any); page["standing"] == nil {
				t.Fatalf("%s: no page.standing: %v", op, page)
			}
		}
		c.ok("update_playbook", map[string]any{"playbook": "finance", "page": playbookPage(t)})
		if page, _ := c.ok("render_playbook_page", map[string]any{"playbook": "finance"})["page"].(map[string]any); page["standing"] == nil {
			t.Fatalf("render_playbook_page: no page.standing: %v", page)
		}
	}
	c.refused("get_run", map[string]any{"playbook": "finance", "run_id": "019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3e"}, "not_found")
	for file, want := range map[string]string{"run.jsonl": `"run_succeeded"`, "thread.md": "the close is next",
		"run.state.json": `"complete"`, "definition.md": "playbook_version"} {
		uri := fmt.Sprintf("quire://finance/runs/%s/%s", runID, file)
		res, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		if len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, want) || res.Contents[0].MIMEType != RunFiles[file] {
			t.Fatalf("%s: %+v", uri, res.Contents)
		}
	}
	if _, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "quire://finance/runs/019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3e/run.jsonl"}); err == nil {
		t.Fatal("a run that is not there was read")
	}
	if _, ok := ledger.Lookup("make_comment"); ok {
		cm := c.ok("make_comment", map[string]any{"playbook": "finance", "address": "finance/runs/" + runID, "text": "Revenue looks right.", "author": authorizer})
		if cm["address"] != "finance/runs/"+runID {
			t.Fatalf("make_comment: %v", cm)
		}
		if lst := c.ok("list_comments", map[string]any{"playbook": "finance", "under": "finance/runs/" + runID}); !strings.Contains(fmt.Sprint(lst), "Revenue looks right.") {
			t.Fatalf("list_comments: %v", lst)
		}
	} else {
		t.Log("the table has no make_comment yet")
	}
	return runID
}

func TestMCPInMemory(t *testing.T) {
	l := newLedger(t)
	cs := connectInMemory(t, l)
	c := &caller{t: t, cs: cs, schemas: checkTools(t, cs)}
	tmpl, err := cs.ListResourceTemplates(context.Background(), nil)
	if err != nil || len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate != RunResourceTemplate {
		t.Fatalf("resource templates: %+v %v", tmpl, err)
	}
	runStory(t, c, "local")
	// Arguments the operation does not take, or of the wrong type, are
	// refused at their path.
	out := c.refused("get_playbook", map[string]any{"playbook": "finance", "colour": "red"}, "invalid_input")
	if !strings.Contains(message(out), "colour") {
		t.Fatalf("an unknown argument: %v", out)
	}
	c.refused("get_definition", map[string]any{"playbook": "finance", "type": "workflow", "name": "close-the-month", "version": "one"}, "invalid_input")
}

func TestMCPStreamableHTTP(t *testing.T) {
	l := newLedger(t)
	admin, err := CreateToken(l, "ana", []string{"admin"})
	if err != nil {
		t.Fatal(err)
	}
	reader, _ := CreateToken(l, "rui", []string{"playbook:read"})
	ts, _ := newTestServer(t, newServer(l, false, nil))
	if _, err := connectHTTP(t, ts.URL, ""); err == nil {
		t.Fatal("an MCP client without a token connected")
	}
	if _, err := connectHTTP(t, ts.URL, "quire_wrong"); err == nil {
		t.Fatal("an MCP client with a wrong token connected")
	}
	rcs, err := connectHTTP(t, ts.URL, reader)
	if err != nil {
		t.Fatal(err)
	}
	rc := &caller{t: t, cs: rcs, schemas: checkTools(t, rcs)}
	out := rc.refused("create_playbook", map[string]any{"playbook": "finance", "name": "Finance"}, "forbidden")
	if !strings.Contains(message(out), "admin") {
		t.Fatalf("forbidden: %v", out)
	}
	cs, err := connectHTTP(t, ts.URL, admin)
	if err != nil {
		t.Fatal(err)
	}
	c := &caller{t: t, cs: cs, schemas: rc.schemas, principal: "ana"}
	runID := runStory(t, c, "ana")
	// The reader reads what the admin wrote, resources included.
	rc.ok("get_playbook", map[string]any{"playbook": "finance"})
	if runID != "" {
		if _, err := rcs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "quire://finance/runs/" + runID + "/run.jsonl"}); err != nil {
			t.Fatal(err)
		}
	}
	// The token's principal is the actor where the call names none.
	ev := c.ok("list_playbook_events", map[string]any{"playbook": "finance", "limit": 3})
	if !strings.Contains(fmt.Sprint(ev["events"]), "caller:ana") {
		t.Fatalf("the principal is not the actor: %v", ev)
	}
}

// booleanSubschema finds a property or items schema written as true or
// false, and answers its path.
func booleanSubschema(raw []byte) string {
	var walk func(v any, path string) string
	walk = func(v any, path string) string {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		if props, ok := m["properties"].(map[string]any); ok {
			for k, p := range props {
				if _, isBool := p.(bool); isBool {
					return path + "/properties/" + k
				}
				if w := walk(p, path+"/properties/"+k); w != "" {
					return w
				}
			}
		}
		for _, key := range []string{"items", "additionalProperties"} {
			if w := walk(m[key], path+"/"+key); w != "" {
				return w
			}
		}
		for _, key := range []string{"anyOf", "oneOf", "allOf"} {
			list, _ := m[key].([]any)
			for i, sub := range list {
				if w := walk(sub, fmt.Sprintf("%s/%s/%d", path, key, i)); w != "" {
					return w
				}
			}
		}
		return ""
	}
	var v any
	json.Unmarshal(raw, &v)
	return walk(v, "")
}
