package serve

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"quire/ledger"
)

// The JSON Schemas of an operation's arguments and answer are inferred from
// its Go types by the go-sdk's jsonschema package: a struct is an object
// without other properties, a field without omitempty is required, and a
// field's `jsonschema:"…"` tag is its description. A type with its own
// MarshalJSON or UnmarshalJSON (json.RawMessage, an event line…) writes JSON
// the struct does not show, so it takes the schema that allows any value;
// time.Time is a string.
//
// jsonschema-go reads a pointer *T as T's schema with "null" added to its
// types. For a type that encodes itself the schema has no type, so that
// rule would make "null" its only type ({"type": ["null"]}), false for every
// value but null: page.standing (a *fold.Standing) was declared so. Any
// value already allows null, so schemaOf takes the added "null" away again
// (anyUnderPointer), wherever such a pointer is.

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
	anyUnderPointer(s)
	schemaCache[t] = s
	return s
}

// anyValue is the schema that allows any JSON value, written as an object
// (not true), since some clients take only objects as property schemas.
func anyValue() *jsonschema.Schema {
	return &jsonschema.Schema{Description: "any JSON value"}
}

// anyUnderPointer turns every schema that allows null alone back into the
// schema of any value: jsonschema-go writes a pointer to a type that
// encodes itself so (see the top of this file), and no Go type of quire's
// answers or arguments is null alone.
func anyUnderPointer(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if s.Type == "" && len(s.Types) == 1 && s.Types[0] == "null" {
		s.Types = nil
	}
	for _, p := range s.Properties {
		anyUnderPointer(p)
	}
	for _, d := range s.Defs {
		anyUnderPointer(d)
	}
	for _, list := range [][]*jsonschema.Schema{s.PrefixItems, s.AnyOf, s.AllOf, s.OneOf} {
		for _, c := range list {
			anyUnderPointer(c)
		}
	}
	anyUnderPointer(s.Items)
	anyUnderPointer(s.AdditionalProperties)
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

// inputSchema is the schema of an operation's arguments: always an object.
func inputSchema(op *ledger.Op) *jsonschema.Schema {
	s := schemaOf(op.Args).CloneSchemas()
	if s.Type == "" && len(s.Types) == 0 {
		s.Type = "object"
	}
	return s
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
	return &jsonschema.Schema{Type: "object", AnyOf: []*jsonschema.Schema{s, refusalJSONSchema()}}
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
