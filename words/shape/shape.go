package shape

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"quire/words/refusal"
)

//go:embed schemas/*.json
var schemaFiles embed.FS

// The shapes' names, in the order the spec lists them.
var names = []string{"series", "categories", "table", "text"}

// IDPrefix begins every shape's $id: the $id of series is IDPrefix+"series".
const IDPrefix = "https://on.auto/shapes/"

// Names gives the names of the four shapes: series, categories, table, text.
func Names() []string { return append([]string(nil), names...) }

// Known says whether name is the name of a shape.
func Known(name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// Schema gives the shape's JSON Schema (draft 2020-12) as a document, with
// the $id IDPrefix+name and the title name; nil for a name that is no
// shape. The caller gets its own copy.
func Schema(name string) []byte {
	if !Known(name) {
		return nil
	}
	b, err := schemaFiles.ReadFile("schemas/" + name + ".json")
	if err != nil {
		panic("shape: schema of " + name + " is not embedded: " + err.Error())
	}
	return b
}

// A checker is one shape's compiled schema, with its plan (fast.go), nil
// where the schema has a keyword the plan does not know.
type checker struct {
	schema *jsonschema.Schema
	plan   *plan
}

// compiled holds the four schemas, compiled once on first use.
var compiled = sync.OnceValue(func() map[string]checker {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	out := make(map[string]checker, len(names))
	for _, n := range names {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema(n)))
		if err != nil {
			panic("shape: schema of " + n + " is not JSON: " + err.Error())
		}
		if err := c.AddResource(IDPrefix+n, doc); err != nil {
			panic("shape: schema of " + n + ": " + err.Error())
		}
	}
	for _, n := range names {
		s, err := c.Compile(IDPrefix + n)
		if err != nil {
			panic("shape: schema of " + n + " does not compile: " + err.Error())
		}
		p, _ := makePlan(s) // without a plan, every value goes to the validator
		out[n] = checker{schema: s, plan: p}
	}
	return out
})

// Check parses doc as JSON and checks it against the shape name, as
// CheckValue does. A doc that is not JSON in UTF-8 gives one issue at "".
func Check(name string, doc []byte) []refusal.Issue {
	if !Known(name) {
		return []refusal.Issue{unknownShape()}
	}
	v, issue, ok := parse(doc)
	if !ok {
		return []refusal.Issue{issue}
	}
	return check(name, v, true)
}

// CheckValue checks v, a value as encoding/json decodes into any
// (map[string]any, []any, float64 or json.Number, string, bool, nil),
// against the shape name: its schema and the rules a schema cannot state.
// It gives every issue found, sorted by path (byte order) then message,
// each once; none when v matches. A name that is no shape gives one issue
// at "". Safe for concurrent use.
func CheckValue(name string, v any) []refusal.Issue {
	if !Known(name) {
		return []refusal.Issue{unknownShape()}
	}
	return check(name, v, false)
}

// check checks v against the known shape name; decoded says v is decode's,
// with *object for objects.
func check(name string, v any, decoded bool) []refusal.Issue {
	var c collector
	ch := compiled()[name]
	if ch.plan != nil && ch.plan.valid(v) {
		// The validator would find nothing (fast.go).
	} else if err := ch.schema.Validate(stdIf(v, decoded)); err != nil {
		var verr *jsonschema.ValidationError
		if errors.As(err, &verr) {
			c.translate(name, verr)
		} else {
			c.add("", msgNotJSON)
		}
	}
	rules[name](&c, v)
	return c.done()
}

// Format writes an issue as one line: its path, a colon and its message,
// such as "/lines/0/points/2/at: Expected a time later than the point
// before it."; an issue at "" (the whole value) is its message alone.
func Format(issue refusal.Issue) string {
	s := issue.Path
	if issue.Line > 0 {
		s += fmt.Sprintf(" (line %d)", issue.Line)
	}
	if s == "" {
		return issue.Message
	}
	return s + ": " + issue.Message
}

func stdIf(v any, decoded bool) any {
	if decoded {
		return std(v)
	}
	return v
}

func unknownShape() refusal.Issue {
	return refusal.Issue{Path: "", Message: msgUnknownShape}
}

// parse decodes doc as one JSON value, numbers kept as json.Number so that
// none is rounded before it is checked.
func parse(doc []byte) (any, refusal.Issue, bool) {
	if !utf8.Valid(doc) {
		return nil, refusal.Issue{Message: msgNotUTF8}, false
	}
	v, msg := decode(doc)
	if msg != "" {
		return nil, refusal.Issue{Message: msg}, false
	}
	return v, refusal.Issue{}, true
}
