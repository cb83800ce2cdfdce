package serve

import (
	"net/http"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"quire/ledger"
	"quire/words/refusal"
)

// refusalSchema is the refusal object of DESIGN.md.
var refusalSchema = map[string]any{
	"type":     "object",
	"required": []string{"error"},
	"properties": map[string]any{
		"error": map[string]any{
			"type":     "object",
			"required": []string{"code", "message", "issues"},
			"properties": map[string]any{
				"code":    map[string]any{"enum": refusal.Codes, "description": "unauthenticated (401) is a request without a token this vault knows; forbidden (403) a token without the scope, or an argument naming another principal than the token's"},
				"kind":    map[string]any{"type": "string"},
				"message": map[string]any{"type": "string"},
				"issues": map[string]any{"type": "array", "minItems": 1, "description": "at least one; each names the argument at fault by its JSON pointer (\"\" is the whole call or body)", "items": map[string]any{
					"type":     "object",
					"required": []string{"path", "message"},
					"properties": map[string]any{
						"path":    map[string]any{"type": "string", "description": "a JSON pointer into the call's arguments or the document"},
						"line":    map[string]any{"type": "integer", "minimum": 1},
						"message": map[string]any{"type": "string"},
					},
				}},
			},
		},
	},
}

// OpenAPI is the OpenAPI 3.1 document of the HTTP routes, made from the
// table of operations: one operation per route, its operationId the
// operation's name, its parameters and body from the arguments' schema,
// its answer's schema, the refusal object for every refusal, and the
// bearer scope it needs.
func OpenAPI() map[string]any {
	paths := map[string]any{}
	for _, op := range ledger.Ops() {
		if op.Method == "" || op.Path == "" {
			continue
		}
		p := "/v1/orgs/{org}" + strings.ReplaceAll(op.Path, "...}", "}")
		item, _ := paths[p].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[p] = item
		}
		m := strings.ToLower(op.Method)
		if _, dup := item[m]; dup {
			continue // the router serves the first by name too
		}
		item[m] = openAPIOperation(op)
	}
	return map[string]any{
		"openapi":           "3.1.0",
		"jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
		"info": map[string]any{
			"title":   "quire",
			"version": Version,
			"description": "quire's operations over HTTP: the same table that MCP serves as tools and quire call runs. " +
				"A refused call answers the refusal object with 400 (invalid_input), 401 (unauthenticated: no token, or one this vault does not know), 403 (forbidden), " +
				"404 (not_found), 409 (conflict), 413 (a body over 1 MiB, or sample_output over 256 KiB), 500 (a fault) or 503 (unavailable).",
		},
		"servers":  []any{map[string]any{"url": "/"}},
		"security": []any{map[string]any{"bearer": []string{}}},
		"paths":    paths,
		"components": map[string]any{
			"securitySchemes": map[string]any{
				"bearer": map[string]any{"type": "http", "scheme": "bearer",
					"description": "A token of quire token create; every route but /v1/openapi.json needs one once the vault has any. Its scopes: playbook:read, playbook:write, admin (each implying the ones before), or playbook:read:<playbook> and playbook:write:<playbook> for one playbook; playbook:delegate (or playbook:delegate:<playbook>, or admin) lets run_definition name another executor or authorized_by than the token's principal. A call acts as the token's principal: an actor, author, member, executor or authorized_by naming someone else is refused (forbidden)."},
			},
			"schemas": map[string]any{"Refusal": refusalSchema},
			"responses": map[string]any{
				"Refusal": map[string]any{
					"description": "The call is refused; nothing was changed.",
					"content":     map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/Refusal"}}},
				},
			},
		},
	}
}

func openAPIOperation(op *ledger.Op) map[string]any {
	in := inputSchema(op)
	pathParams := map[string]bool{}
	params := []any{map[string]any{"name": "org", "in": "path", "required": true,
		"description": "the vault's organization, as quire.yaml names it", "schema": map[string]any{"type": "string"}}}
	for _, seg := range splitPath(op.Path) {
		if !isParam(seg) {
			continue
		}
		name, rest := paramName(seg)
		pathParams[name] = true
		param := map[string]any{"name": name, "in": "path", "required": true, "schema": propSchema(in, name)}
		if rest {
			// OpenAPI's path templates take one segment; quire takes the
			// rest of the path, so a nested name needs no %2F.
			param["description"] = "the rest of the path, slashes and all: .../artifacts/reports/q3.csv names reports/q3.csv (%2F works too)"
			param["x-quire-rest-of-path"] = true
		}
		params = append(params, param)
	}
	body := op.Method == http.MethodPost || op.Method == http.MethodPut || op.Method == http.MethodPatch
	rest := in.CloneSchemas()
	rest.Required = slices.DeleteFunc(slices.Clone(rest.Required), func(n string) bool { return pathParams[n] })
	for n := range pathParams {
		delete(rest.Properties, n)
	}
	out := map[string]any{
		"operationId":        op.Name,
		"summary":            summary(op.Description),
		"description":        op.Description,
		"tags":               []string{tagOf(op.Path)},
		"security":           []any{map[string]any{"bearer": []string{op.Scope}}},
		"x-quire-scope":      op.Scope,
		"x-quire-read-only":  op.ReadOnly,
		"x-quire-idempotent": op.Idempotent,
	}
	if body {
		out["requestBody"] = map[string]any{
			"required": len(rest.Required) > 0,
			"content":  map[string]any{"application/json": map[string]any{"schema": rest}},
		}
	} else {
		for _, name := range propNames(rest) {
			params = append(params, map[string]any{"name": name, "in": "query",
				"required": slices.Contains(rest.Required, name), "schema": rest.Properties[name]})
		}
	}
	out["parameters"] = params
	ref := map[string]any{"$ref": "#/components/responses/Refusal"}
	responses := map[string]any{
		"200": map[string]any{"description": "The operation's answer.",
			"content": map[string]any{"application/json": map[string]any{"schema": schemaOf(op.Result).CloneSchemas()}}},
		"400": ref, "401": ref, "403": ref, "404": ref, "409": ref, "500": ref, "503": ref,
	}
	if body {
		responses["413"] = ref
	}
	out["responses"] = responses
	return out
}

func propSchema(s *jsonschema.Schema, name string) *jsonschema.Schema {
	if p := s.Properties[name]; p != nil {
		return p
	}
	return &jsonschema.Schema{Type: "string"}
}

// propNames lists an object schema's properties in the order of the
// struct's fields.
func propNames(s *jsonschema.Schema) []string {
	var out []string
	for _, n := range s.PropertyOrder {
		if _, ok := s.Properties[n]; ok {
			out = append(out, n)
		}
	}
	for n := range s.Properties {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// summary is the first sentence of a description.
func summary(d string) string {
	if i := strings.Index(d, ". "); i > 0 {
		d = d[:i+1]
	}
	if len(d) > 120 {
		d = d[:117] + "…"
	}
	return d
}

// tagOf groups routes by what they name: /playbooks/{p}/definitions/… is
// "definitions", /playbooks is "playbooks".
func tagOf(p string) string {
	var lit []string
	for _, s := range splitPath(p) {
		if !isParam(s) {
			lit = append(lit, s)
		}
	}
	switch len(lit) {
	case 0:
		return "org"
	case 1:
		return lit[0]
	}
	return lit[1]
}
