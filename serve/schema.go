package serve

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"quire/ledger"
	"quire/ledger/address"
	"quire/ledger/event"
)

// The JSON Schemas of an operation's arguments and answer are inferred from
// its Go types by the go-sdk's jsonschema package: a struct is an object
// without other properties, a field without omitempty is required, and a
// field's `jsonschema:"…"` tag is its description. A type with its own
// MarshalJSON or UnmarshalJSON (json.RawMessage, an event line…) writes JSON
// the struct does not show, so it takes the schema that allows any value;
// time.Time is a string.

var (
	schemaMu    sync.Mutex
	schemaCache = map[reflect.Type]*jsonschema.Schema{}
)

var (
	marshalerT     = reflect.TypeFor[json.Marshaler]()
	unmarshalerT   = reflect.TypeFor[json.Unmarshaler]()
	textMarshalerT = reflect.TypeFor[encoding.TextMarshaler]()
	timeT          = reflect.TypeFor[time.Time]()
)

// schemaOf is the schema of t, cached; callers must not change it (Clone
// first).
func schemaOf(t reflect.Type) *jsonschema.Schema {
	schemaMu.Lock()
	defer schemaMu.Unlock()
	if s, ok := schemaCache[t]; ok {
		return s
	}
	custom := map[reflect.Type]*jsonschema.Schema{reflect.TypeFor[any](): anyValue()}
	collectCustom(t, custom, map[reflect.Type]bool{})
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{IgnoreInvalidTypes: true, TypeSchemas: custom})
	if err != nil {
		// A cycle or a type JSON cannot carry: any value, rather than no tool.
		s = anyValue()
	}
	schemaCache[t] = s
	return s
}

// anyValue is the schema that allows any JSON value, written as an object
// (not true), since some clients take only objects as property schemas.
func anyValue() *jsonschema.Schema {
	return &jsonschema.Schema{Description: "any JSON value"}
}

// collectCustom finds the types under t that encode themselves.
func collectCustom(t reflect.Type, out map[reflect.Type]*jsonschema.Schema, seen map[reflect.Type]bool) {
	if seen[t] {
		return
	}
	seen[t] = true
	if t != timeT && t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface {
		pt := reflect.PointerTo(t)
		if t.Implements(marshalerT) || pt.Implements(marshalerT) || pt.Implements(unmarshalerT) ||
			(t.Kind() != reflect.String && (t.Implements(textMarshalerT) || pt.Implements(textMarshalerT))) {
			out[t] = anyValue()
			return
		}
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		collectCustom(t.Elem(), out, seen)
	case reflect.Map:
		collectCustom(t.Elem(), out, seen)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if f := t.Field(i); f.IsExported() {
				collectCustom(f.Type, out, seen)
			}
		}
	}
}

// inputSchema is the schema of an operation's arguments: always an object,
// for an agent to call from it alone. Every property is described (the
// field's own words, or argWords for the arguments many operations share),
// a closed set is an enum (closedSet), a range tag is minimum and maximum,
// and no argument is typed nullable: an argument left out is omitted, and
// the operations take null for none of them but update_playbook's page,
// whose schema allows any value.
func inputSchema(op *ledger.Op) *jsonschema.Schema {
	s := schemaOf(op.Args).CloneSchemas()
	if s.Type == "" && len(s.Types) == 0 {
		s.Type = "object"
	}
	for _, f := range argFields(op.Args) {
		p := s.Properties[f.Name]
		if p == nil {
			continue
		}
		if len(p.Types) > 0 {
			var types []string
			for _, t := range p.Types {
				if t != "null" {
					types = append(types, t)
				}
			}
			p.Types = nil
			if len(types) == 1 {
				p.Type = types[0]
			} else {
				p.Types = types
			}
		}
		if p.Description == "" {
			p.Description = argWords[f.Name]
		}
		if set := closedSet(op.Name, f.Name); set != nil {
			p.Enum = nil
			for _, v := range set {
				p.Enum = append(p.Enum, v)
			}
		}
		if lo, hi, ok := strings.Cut(op.Args.Field(f.Index).Tag.Get("range"), ","); ok {
			l, err1 := strconv.ParseFloat(lo, 64)
			h, err2 := strconv.ParseFloat(hi, 64)
			if err1 == nil && err2 == nil {
				p.Minimum, p.Maximum = &l, &h
			}
		}
	}
	return s
}

// argWords describe the arguments many operations share.
var argWords = map[string]string{
	"playbook":    "the playbook's id (list_playbooks)",
	"run_id":      "the run's id, a UUID in lowercase (list_runs)",
	"event_id":    "the event's id, as list_playbook_events answers it",
	"type":        "the definition's type",
	"name":        "the definition's name: lowercase letters, digits and hyphens",
	"actor":       "who acts: with a token, the token's principal (or left out)",
	"time":        "RFC 3339 time of the act, for a backfill; now when left out",
	"detail":      "a line that says what happened",
	"kind":        "the kind of the rejection, such as unworkable",
	"text":        "Markdown text to append",
	"content":     "the artifact's content, as encoding says",
	"description": "the playbook's description",
	"format":      "markdown (default), or text: every chart block printed as its data's table",
}

// closedSet is the closed set of values an argument takes, where it is
// one: the values the operation checks, from the lists the ledger keeps
// where it keeps one.
func closedSet(op, arg string) []string {
	switch arg {
	case "type":
		if op == "list_activity" {
			return nil
		}
		types := address.Types()
		if op != "run_definition" && op != "list_runs" {
			types = append(types, ledger.TypePage)
		}
		return types
	case "format":
		return []string{"markdown", "text"}
	case "encoding":
		return []string{"utf-8", "base64"}
	case "how":
		return ledger.CommentHows
	case "to":
		return []string{"paused", "active", "archived"}
	case "status":
		if op == "end_run" {
			return []string{"succeeded", "rejected", "failed"}
		}
		return []string{"started", "succeeded", "failed", "rejected"}
	case "state":
		return []string{"active", "paused", "complete", "failed", "archived"}
	case "event":
		// What record_event takes: the capsule's types but the ones that
		// create, archive or end a run, which have their own operations.
		var out []string
		for _, t := range event.RunTypes {
			switch t {
			case event.RunCreated, event.Archived, event.RunSucceeded, event.RunRejected, event.RunFailed:
			default:
				out = append(out, t)
			}
		}
		return out
	}
	return nil
}

// answerIsObject says whether the operation answers a JSON object (a struct
// or a map, or a pointer to one). Other answers (lists) travel as MCP
// structured content wrapped as {"items": …}, since a client reads
// structured content as an object.
func answerIsObject(op *ledger.Op) bool {
	t := op.Result
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return (t.Kind() == reflect.Struct && !isCustom(t)) || (t.Kind() == reflect.Map && t.Key().Kind() == reflect.String)
}

func isCustom(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(marshalerT) || pt.Implements(marshalerT)
}

// outputSchema is the MCP output schema of an operation: its answer's
// schema, or {"items": …} for an answer that is not an object.
//
// A refused call's structured content is the refusal object, and clients
// (the TypeScript SDK's among them) check structured content against the
// output schema even for a tool error, so the schema is either one:
// {"type": "object", "anyOf": [answer, refusal]}.
func outputSchema(op *ledger.Op) *jsonschema.Schema {
	s := schemaOf(op.Result).CloneSchemas()
	if answerIsObject(op) {
		// A pointer answer may be null in Go's eyes; a tool answers an object.
		if len(s.Types) > 0 {
			s.Types = nil
			s.Type = "object"
		}
	} else {
		s = &jsonschema.Schema{Type: "object", Required: []string{"items"},
			Properties: map[string]*jsonschema.Schema{"items": s}}
	}
	stripDescriptions(s)
	return &jsonschema.Schema{Type: "object", AnyOf: []*jsonschema.Schema{s, refusalBrief}}
}

// refusalBrief is the refusal object as the tools' output schemas give it:
// its shape without its words, which the server's instructions and
// /v1/openapi.json say once rather than once a tool.
var refusalBrief = &jsonschema.Schema{Type: "object", Required: []string{"error"},
	Properties: map[string]*jsonschema.Schema{"error": {Type: "object", Required: []string{"code", "message", "issues"}}}}

// stripDescriptions takes the descriptions and additionalProperties out
// of an answer's schema (a clone): tools/list is what every agent pays for in tokens at start-up, and
// the answer's fields are described in /v1/openapi.json.
func stripDescriptions(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	// Left empty, a schema would marshal as true, which some clients refuse.
	d := s.Description
	s.Description = ""
	if reflect.DeepEqual(*s, jsonschema.Schema{}) {
		s.Description = d
	}
	// An answer's objects are not closed: a client reading one ignores what
	// it does not know, and a newer quire may answer more.
	s.AdditionalProperties = nil
	for _, p := range s.Properties {
		stripDescriptions(p)
	}
	for _, d := range s.Defs {
		stripDescriptions(d)
	}
	for _, d := range s.Definitions {
		stripDescriptions(d)
	}
	stripDescriptions(s.Items)
	for _, x := range s.AnyOf {
		stripDescriptions(x)
	}
	for _, x := range s.OneOf {
		stripDescriptions(x)
	}
	for _, x := range s.PrefixItems {
		stripDescriptions(x)
	}
}

// refusalJSONSchema is refusalSchema as a *jsonschema.Schema.
func refusalJSONSchema() *jsonschema.Schema {
	b, _ := json.Marshal(refusalSchema)
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		panic("serve: the refusal's schema: " + err.Error())
	}
	return &s
}

// argField is one argument of an operation: its JSON name, Go type and
// whether it is required (no omitempty).
type argField struct {
	Name     string
	Type     reflect.Type
	Required bool
	Index    int
}

// argFields lists the JSON arguments of an operation's Args struct.
func argFields(t reflect.Type) []argField {
	var out []argField
	if t.Kind() != reflect.Struct {
		return nil
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, argField{Name: name, Type: f.Type, Index: i,
			Required: !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero")})
	}
	return out
}

func findArg(op *ledger.Op, name string) (argField, bool) {
	for _, f := range argFields(op.Args) {
		if f.Name == name {
			return f, true
		}
	}
	return argField{}, false
}
