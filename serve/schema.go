package serve

import (
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"quire/ledger"
)

// The JSON Schemas of an operation's arguments and answer are inferred from
// its Go types by the go-sdk's jsonschema package: a struct is an object
// without other properties, a field without omitempty is required, and a
// field's `jsonschema:"…"` tag is its description; time.Time is a string.
//
// A type with its own MarshalJSON or UnmarshalJSON (json.RawMessage, an
// event line, fold.Standing…) writes JSON its fields do not show. Such a
// type may say what its JSON takes by the Go types it writes (JSONForms);
// its schema is then anyOf the schemas of those types, which stays true as
// long as its MarshalJSON writes them. Any other such type is any value.
//
// jsonschema-go reads a pointer *T as T's schema with "null" added to its
// types, and a schema of its TypeSchemas is taken as it is. For a type that
// encodes itself that rule is false: any value has no type to add "null"
// to, and gets null alone ({"type": ["null"]}, as page.standing, a
// *fold.Standing, was declared), and anyOf forms would refuse the null the
// pointer allows. So each such type is inferred as a placeholder, and
// resolve puts its schema in its place, adding null as a form of its own
// where jsonschema-go saw a pointer.

// jsonForms is a type that encodes itself and says how: JSONForms answers
// a value of each Go type its MarshalJSON writes.
type jsonForms interface{ JSONForms() []any }

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

// placeholder marks where a type that encodes itself was inferred.
const placeholder = "quire:self-encoding:"

// schemaOf is the schema of t, cached; callers must not change it (Clone
// first).
func schemaOf(t reflect.Type) *jsonschema.Schema {
	schemaMu.Lock()
	defer schemaMu.Unlock()
	return inferLocked(t, 0)
}

func inferLocked(t reflect.Type, depth int) *jsonschema.Schema {
	if s, ok := schemaCache[t]; ok {
		return s
	}
	var selfs []reflect.Type
	custom := map[reflect.Type]*jsonschema.Schema{reflect.TypeFor[any](): anyValue()}
	collectCustom(t, custom, &selfs, map[reflect.Type]bool{})
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{IgnoreInvalidTypes: true, TypeSchemas: custom})
	if err != nil {
		// A cycle or a type JSON cannot carry: any value, rather than no tool.
		s = anyValue()
	}
	own := make([]*jsonschema.Schema, len(selfs))
	for i, st := range selfs {
		own[i] = selfSchema(st, depth)
	}
	resolve(s, own)
	schemaCache[t] = s
	return s
}

// selfSchema is the schema of a type that encodes itself: anyOf its forms,
// or any value.
func selfSchema(t reflect.Type, depth int) *jsonschema.Schema {
	f, ok := reflect.Zero(t).Interface().(jsonForms)
	if !ok {
		if pf, pok := reflect.New(t).Interface().(jsonForms); pok {
			f, ok = pf, true
		}
	}
	if !ok || depth > 8 {
		return anyValue()
	}
	s := &jsonschema.Schema{}
	for _, form := range f.JSONForms() {
		s.AnyOf = append(s.AnyOf, inferLocked(reflect.TypeOf(form), depth+1).CloneSchemas())
	}
	if len(s.AnyOf) == 1 {
		s = s.AnyOf[0]
	}
	return s
}

// resolve puts the schema of each type that encodes itself where its
// placeholder is; where jsonschema-go added null (a pointer), null is a form
// of its own, unless the schema is any value, which allows null already.
func resolve(s *jsonschema.Schema, own []*jsonschema.Schema) {
	if s == nil {
		return
	}
	if n, ok := strings.CutPrefix(s.Comment, placeholder); ok {
		i, _ := strconv.Atoi(n)
		r := own[i].CloneSchemas()
		if slices.Contains(s.Types, "null") && (r.Type != "" || len(r.Types) > 0 || len(r.AnyOf) > 0) {
			if len(r.AnyOf) > 0 {
				r.AnyOf = append([]*jsonschema.Schema{{Type: "null"}}, r.AnyOf...)
			} else {
				r = &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "null"}, r}}
			}
		}
		if s.Description != "" {
			r.Description = s.Description // the field's own words
		}
		*s = *r
		return
	}
	for _, p := range s.Properties {
		resolve(p, own)
	}
	for _, d := range s.Defs {
		resolve(d, own)
	}
	for _, list := range [][]*jsonschema.Schema{s.PrefixItems, s.AnyOf, s.AllOf, s.OneOf} {
		for _, c := range list {
			resolve(c, own)
		}
	}
	resolve(s.Items, own)
	resolve(s.AdditionalProperties, own)
}

// anyValue is the schema that allows any JSON value, written as an object
// (not true), since some clients take only objects as property schemas.
func anyValue() *jsonschema.Schema {
	return &jsonschema.Schema{Description: "any JSON value"}
}

// collectCustom finds the types under t that encode themselves, each with
// its placeholder, in selfs' order.
func collectCustom(t reflect.Type, out map[reflect.Type]*jsonschema.Schema, selfs *[]reflect.Type, seen map[reflect.Type]bool) {
	if seen[t] {
		return
	}
	seen[t] = true
	if t != timeT && t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface {
		pt := reflect.PointerTo(t)
		if t.Implements(marshalerT) || pt.Implements(marshalerT) || pt.Implements(unmarshalerT) ||
			(t.Kind() != reflect.String && (t.Implements(textMarshalerT) || pt.Implements(textMarshalerT))) {
			out[t] = &jsonschema.Schema{Comment: placeholder + strconv.Itoa(len(*selfs))}
			*selfs = append(*selfs, t)
			return
		}
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		collectCustom(t.Elem(), out, selfs, seen)
	case reflect.Map:
		collectCustom(t.Elem(), out, selfs, seen)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if f := t.Field(i); f.IsExported() {
				collectCustom(f.Type, out, selfs, seen)
			}
		}
	}
}

// inputSchema is the schema of an operation's arguments: always an object,
// for an agent to call from it alone. Every property is described (the
// field's own words, or argWords for the arguments many operations share),
// a closed set is an enum (the field's enum tag, as the ledger read it
// into Op.Enums), a range tag is minimum and maximum, and no argument is
// typed nullable: an argument left out is omitted, and the operations
// take null for none of them but update_playbook's page, whose schema
// allows any value.
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
		if w, ok := argBrief[f.Name]; ok {
			p.Description = w
		} else if p.Description == "" {
			p.Description = argWords[f.Name]
		}
		if set := op.Enums[f.Name]; set != nil {
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

// argBrief are shorter words for arguments whose own are long and repeated
// in many tools.
var argBrief = map[string]string{
	"request_id": "makes a retry safe: a repeated id answers the first answer and writes nothing",
}

// argWords describe the arguments many operations share.
var argWords = map[string]string{
	"playbook":    "the playbook's id",
	"run_id":      "the run's id, a UUID in lowercase (list_runs)",
	"event_id":    "the event's id, as list_playbook_events answers it",
	"type":        "the definition's type",
	"name":        "the definition's name: lowercase letters, digits and hyphens",
	"actor":       "who acts: with a token, its principal",
	"time":        "RFC 3339 time, for a backfill; now when left out",
	"detail":      "a line that says what happened",
	"kind":        "the kind of the rejection, such as unworkable",
	"text":        "Markdown text to append",
	"content":     "the artifact's content, as encoding says",
	"description": "the playbook's description",
	"format":      "markdown (default), or text: every chart block printed as its data's table",
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
	compactAnswer(s, 0)
	return &jsonschema.Schema{Type: "object", AnyOf: []*jsonschema.Schema{s, refusalBrief}}
}

// refusalBrief is the refusal object as the tools' output schemas give it:
// its shape without its words, which the server's instructions and
// /v1/openapi.json say once rather than once a tool.
var refusalBrief = &jsonschema.Schema{Type: "object", Required: []string{"error"},
	Properties: map[string]*jsonschema.Schema{"error": {Type: "object", Required: []string{"code", "message", "issues"}}}}

// compactAnswer is an answer's schema as a tool shows it (a clone, changed
// in place): tools/list is what every agent pays for in tokens at start-up,
// so it holds the answer's fields and their types, without their words and
// without the inside of a field's field (page.standing, page.blocks…),
// which is an object or a list of any form. /v1/openapi.json holds the
// whole answer with its words. Objects are not closed: a client reading
// one ignores what it does not know, and a newer quire may answer more.
func compactAnswer(s *jsonschema.Schema, depth int) {
	if s == nil {
		return
	}
	// Left empty, a schema would marshal as true, which some clients refuse.
	d := s.Description
	s.Description = ""
	s.AdditionalProperties = nil
	if depth >= 2 && (s.Properties != nil || s.Items != nil || s.AnyOf != nil) {
		types := s.Types
		if s.Type != "" {
			types = []string{s.Type}
		}
		for _, x := range s.AnyOf {
			if x.Type != "" {
				types = append(types, x.Type)
			}
			types = append(types, x.Types...)
		}
		slices.Sort(types)
		types = slices.Compact(types)
		*s = jsonschema.Schema{}
		if len(types) == 1 {
			s.Type = types[0]
		} else {
			s.Types = types
		}
	}
	if reflect.DeepEqual(*s, jsonschema.Schema{}) {
		s.Description = d
	}
	for _, p := range s.Properties {
		compactAnswer(p, depth+1)
	}
	compactAnswer(s.Items, depth+1)
	for _, x := range s.AnyOf {
		compactAnswer(x, depth)
	}
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
