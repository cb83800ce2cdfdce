package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"quire/ledger"
)

// The schemas of the OpenAPI document, compiled once: every answer of an
// HTTP test is checked against its operation's response schema (a refusal
// against the refusal's), so a Go type whose JSON the schema misstates
// fails every test that meets it. The MCP tests check every structured
// result against its tool's outputSchema the same way (caller.call).
var (
	answerOnce    sync.Once
	answerErr     error
	answerSchemas map[string]*jsonschema.Schema // by operation, and "" for the refusal
)

func compileAnswerSchemas() {
	raw, _ := json.Marshal(OpenAPI())
	var doc struct {
		Paths      map[string]map[string]json.RawMessage
		Components struct{ Schemas map[string]json.RawMessage }
	}
	if answerErr = json.Unmarshal(raw, &doc); answerErr != nil {
		return
	}
	c := jsonschema.NewCompiler()
	compile := func(name string, schema json.RawMessage) *jsonschema.Schema {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(schema)))
		if err == nil {
			err = c.AddResource(name+".json", v)
		}
		var s *jsonschema.Schema
		if err == nil {
			s, err = c.Compile(name + ".json")
		}
		if err != nil && answerErr == nil {
			answerErr = fmt.Errorf("%s: %s: %w", name, schema, err)
		}
		return s
	}
	answerSchemas = map[string]*jsonschema.Schema{"": compile("refusal", doc.Components.Schemas["Refusal"])}
	for _, item := range doc.Paths {
		for _, rawOp := range item {
			var op struct {
				OperationID string `json:"operationId"`
				Responses   map[string]struct {
					Content map[string]struct{ Schema json.RawMessage }
				}
			}
			if answerErr = json.Unmarshal(rawOp, &op); answerErr != nil {
				return
			}
			answerSchemas[op.OperationID] = compile(op.OperationID, op.Responses["200"].Content["application/json"].Schema)
		}
	}
}

// checkAnswer checks one HTTP answer of the API against the OpenAPI
// document: an answer of 2xx against its operation's, any other against
// the refusal's.
func checkAnswer(t testing.TB, method, path string, resp *http.Response, body []byte) {
	t.Helper()
	if !strings.HasPrefix(path, "/v1/orgs/") || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return
	}
	answerOnce.Do(compileAnswerSchemas)
	if answerErr != nil {
		t.Fatalf("the OpenAPI document's schemas: %v", answerErr)
	}
	schema, name := answerSchemas[""], "the refusal"
	if resp.StatusCode < 300 {
		var segs []string
		for _, e := range strings.Split(strings.Trim(path, "/"), "/")[3:] {
			u, _ := url.PathUnescape(e)
			segs = append(segs, u)
		}
		rt, _, _ := match(routesOf(ledger.Ops()), method, segs)
		if rt == nil {
			t.Fatalf("%s %s answered %d without a route", method, path, resp.StatusCode)
		}
		schema, name = answerSchemas[rt.op.Name], rt.op.Name
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("%s %s: %d, not JSON: %v", method, path, resp.StatusCode, err)
	}
	if err := schema.Validate(v); err != nil {
		t.Fatalf("%s %s: %d %s is not of %s's schema in the OpenAPI document: %v", method, path, resp.StatusCode, body, name, err)
	}
}

// The reads of a page with data carry its standing, and answer as their
// schemas say over HTTP (checkAnswer) and MCP.
func TestPageReadsAnswerTheirSchemas(t *testing.T) {
	l := newLedger(t)
	project := seed(t, l)
	mustCall(t, l, "update_definition", map[string]any{"playbook": "finance", "type": "workflow", "name": "close-the-month",
		"source": workflowSource(t) + "  glance:\n    headline: '{{ output.month }}'\n    figures: [1, '{{ run.status }}']\n"})
	run := startRun(t, l, project)
	mustCall(t, l, "end_run", map[string]any{"playbook": "finance", "run_id": run, "status": "succeeded",
		"output": map[string]any{"month": "2026-10", "revenue": 182450}, "actor": "agent-7"})
	mustCall(t, l, "update_playbook", map[string]any{"playbook": "finance", "page": playbookPage(t)})
	_, c := newTestServer(t, newServer(l, true, nil))
	def := "/v1/orgs/acme/playbooks/finance/definitions/workflow/close-the-month"
	for _, r := range []struct{ method, path string }{{"GET", def}, {"POST", def + "/render"}, {"POST", "/v1/orgs/acme/playbooks/finance/render"}} {
		status, out := c.do(r.method, r.path, map[string]any{})
		if r.method == "GET" {
			status, out = c.do(r.method, r.path, nil)
		}
		page, _ := out["page"].(map[string]any)
		if status != 200 || page["standing"] == nil {
			t.Fatalf("%s %s: %d %v", r.method, r.path, status, out)
		}
		if g := fmt.Sprint(page["glance"]); !strings.HasSuffix(r.path, "/finance/render") && g != "map[figures:[1 succeeded] headline:2026-10]" {
			t.Fatalf("%s %s: glance %s", r.method, r.path, g)
		}
	}
}

// No schema quire declares allows null alone: no Go type of an argument or
// an answer encodes as null and nothing else, so such a schema is false
// for every value the type writes (as page.standing's was, a pointer to a
// type with its own MarshalJSON). Every operation's, answered or not.
func TestNoSchemaAllowsNullAlone(t *testing.T) {
	var walk func(v any, path string) []string
	walk = func(v any, path string) []string {
		var found []string
		switch v := v.(type) {
		case map[string]any:
			if ts, ok := v["type"].([]any); ok && len(ts) == 1 && ts[0] == "null" {
				found = append(found, path)
			}
			for k, c := range v {
				found = append(found, walk(c, path+"/"+k)...)
			}
		case []any:
			for i, c := range v {
				found = append(found, walk(c, fmt.Sprintf("%s/%d", path, i))...)
			}
		}
		return found
	}
	var doc any
	raw, _ := json.Marshal(OpenAPI())
	json.Unmarshal(raw, &doc)
	found := walk(doc, "openapi")
	for _, op := range ledger.Ops() {
		for which, s := range map[string]any{"input": inputSchema(op), "output": outputSchema(op)} {
			var v any
			raw, _ := json.Marshal(s)
			json.Unmarshal(raw, &v)
			found = append(found, walk(v, op.Name+" "+which)...)
		}
	}
	if len(found) > 0 {
		t.Fatalf("%d schemas allow null alone:\n%s", len(found), strings.Join(found, "\n"))
	}
}
