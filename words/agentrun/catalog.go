package agentrun

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"quire/words/refusal"
)

// The catalog: the document's schemas, each checked as a JSON Schema with
// the others beside it and nothing loaded from anywhere.

var definitionsRef = regexp.MustCompile(`^#/definitions/([^/]+)$`)

// schemas checks each catalog schema: its references and that it is a
// valid JSON Schema (compiled with every other schema of the catalog
// beside it, and nothing loaded from anywhere).
func (in *inspector) schemas() {
	refsOK := true
	for _, name := range sortedKeys(in.catalog) {
		if !in.refs("/schemas/"+escapePointer(name), in.catalog[name]) {
			refsOK = false
		}
	}
	if !refsOK {
		return
	}
	for _, is := range compileCatalog(in.catalog) {
		in.add(is.Path, "%s", is.Message)
	}
}

// refs checks every $ref of a schema: #/definitions/<Name> of the catalog.
func (in *inspector) refs(ptr string, s any) bool {
	ok := true
	switch x := s.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			p := ptr + "/" + escapePointer(k)
			switch k {
			case "$ref", "$dynamicRef":
				ref, isStr := x[k].(string)
				if !isStr {
					continue // the schema's compile says what is wrong
				}
				m := definitionsRef.FindStringSubmatch(ref)
				switch {
				case m == nil && in.catalog[ref] != nil:
					in.add(p, "A schema refers to the catalog's schema %s as {\"$ref\":\"#/definitions/%s\"}, not {\"$ref\":%q}.", ref, ref, ref)
					ok = false
				case m == nil:
					in.add(p, "A $ref inside a schema is \"#/definitions/<Name>\", naming a schema of the catalog; %q is not.", ref)
					ok = false
				case in.catalog[m[1]] == nil:
					in.add(p, "%q names no schema of the catalog; its schemas are %s.", ref, strings.Join(sortedKeys(in.catalog), ", "))
					ok = false
				}
			case "const", "enum", "default", "examples", "criteria", "description", "title":
			default:
				if !in.refs(p, x[k]) {
					ok = false
				}
			}
		}
	case []any:
		for i, e := range x {
			if !in.refs(fmt.Sprintf("%s/%d", ptr, i), e) {
				ok = false
			}
		}
	}
	return ok
}

// catalogSchema is the catalog as one JSON Schema whose $defs are its
// schemas (their #/definitions/ references made #/$defs/, so the
// meta-schema checks each one), answering the schema named id.
func catalogSchema(catalog map[string]any, id string) map[string]any {
	defs := map[string]any{}
	for k, s := range catalog {
		defs[k] = toDefs(s)
	}
	out := map[string]any{"$defs": defs}
	if id != "" {
		out["$ref"] = "#/$defs/" + escapePointer(id)
	}
	return out
}

func toDefs(s any) any {
	switch x := s.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			switch k {
			case "$ref":
				if r, ok := e.(string); ok {
					if mm := definitionsRef.FindStringSubmatch(r); mm != nil {
						e = "#/$defs/" + mm[1]
					}
				}
				m[k] = e
			case "const", "enum", "default", "examples":
				m[k] = e
			default:
				m[k] = toDefs(e)
			}
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toDefs(e)
		}
		return out
	case json.Number:
		f, _ := x.Float64()
		return f
	}
	return s
}

// compileCatalog compiles the catalog and answers its problems at
// /schemas/<Name>/… pointers.
func compileCatalog(catalog map[string]any) []refusal.Issue {
	whole := catalogSchema(catalog, "")
	raw, err := json.Marshal(whole)
	if err != nil {
		return []refusal.Issue{{Path: "/schemas", Message: err.Error()}}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return []refusal.Issue{{Path: "/schemas", Message: err.Error()}}
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaBase, doc); err != nil {
		return []refusal.Issue{{Path: "/schemas", Message: "The catalog is not JSON Schema: " + err.Error()}}
	}
	var issues []refusal.Issue
	for _, name := range sortedKeys(catalog) {
		_, err := c.Compile(schemaBase + "#/$defs/" + escapePointer(name))
		if err == nil {
			continue
		}
		if sve, ok := err.(*jsonschema.SchemaValidationError); ok {
			if ve, ok := sve.Err.(*jsonschema.ValidationError); ok {
				// The compiler meets the catalog's schemas in no fixed
				// order: their problems are put in the order of their
				// pointers, so an inspection answers the same twice.
				ls := leaves(ve)
				locs := make(map[*jsonschema.ValidationError]string, len(ls))
				for _, leaf := range ls {
					locs[leaf] = "/" + strings.Join(mapStrings(leaf.InstanceLocation, escapePointer), "/")
				}
				sort.SliceStable(ls, func(i, j int) bool { return locs[ls[i]] < locs[ls[j]] })
				seen := map[string]bool{}
				for _, leaf := range ls {
					loc := locs[leaf]
					if !strings.HasPrefix(loc, "/$defs/") || seen[loc] {
						continue
					}
					seen[loc] = true
					text := leaf.Error()
					if i := strings.LastIndex(text, "': "); i >= 0 {
						text = text[i+3:]
					}
					issues = append(issues, refusal.Issue{Path: "/schemas/" + strings.TrimPrefix(loc, "/$defs/"),
						Message: "Not a valid JSON Schema: " + text + "."})
				}
				if len(issues) > 0 {
					return dedupeIssues(issues)
				}
			}
		}
		issues = append(issues, refusal.Issue{Path: "/schemas/" + escapePointer(name), Message: "Not a valid JSON Schema: " + err.Error()})
	}
	return dedupeIssues(issues)
}

func dedupeIssues(is []refusal.Issue) []refusal.Issue {
	seen := map[string]bool{}
	out := is[:0]
	for _, i := range is {
		k := i.Path + "\x00" + i.Message
		if !seen[k] {
			seen[k] = true
			out = append(out, i)
		}
	}
	return out
}

// schemaRef checks that a node's or the document's schema id names a
// schema of the catalog.
func (in *inspector) schemaRef(ptr string, id string) bool {
	if in.catalog[id] == nil {
		if strings.HasPrefix(id, "#/definitions/") && in.catalog[strings.TrimPrefix(id, "#/definitions/")] != nil {
			in.add(ptr, "A schema id names the catalog's schema directly: %q, not %q.", strings.TrimPrefix(id, "#/definitions/"), id)
			return false
		}
		in.add(ptr, "%q names no schema of the catalog; its schemas are %s.", id, strings.Join(sortedKeys(in.catalog), ", "))
		return false
	}
	return true
}

// resolve follows a schema's #/definitions/ reference in the catalog.
func (in *inspector) resolve(s any) any {
	for i := 0; i < 16; i++ {
		m, ok := s.(map[string]any)
		if !ok {
			return s
		}
		r, ok := m["$ref"].(string)
		if !ok {
			return s
		}
		mm := definitionsRef.FindStringSubmatch(r)
		if mm == nil || in.catalog[mm[1]] == nil {
			return s
		}
		s = in.catalog[mm[1]]
	}
	return s
}

// leaves are the innermost causes of a validation error.
func leaves(ve *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(ve.Causes) == 0 {
		return []*jsonschema.ValidationError{ve}
	}
	var out []*jsonschema.ValidationError
	for _, c := range ve.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

func mapStrings(ss []string, f func(string) string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = f(s)
	}
	return out
}

// schemaBase is the URL the catalog is compiled under: no file, so that a
// relative $ref resolves to nothing on disk. It is the ledger's for an
// output.schema too, so a compiler's words read the same for both.
const schemaBase = "https://quire.invalid/output.schema.json"

// noLoader refuses to load any URL: the only schemas are the document's
// and the library's own meta-schemas.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s is outside output.schema, and quire loads no schema from elsewhere", url)
}
