package ledger

import (
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Each thing a schema expects is worded as the shapes word theirs, at the
// value's pointer; no keyword of the library, no URL.
func TestSchemaIssuesInTheShapesWords(t *testing.T) {
	for _, c := range []struct{ schema, value, want string }{
		{`{"type":"string"}`, `5`, `/input: Expected text.`},
		{`{"type":["integer","null"]}`, `"x"`, `/input: Expected a whole number or null.`},
		{`{"type":"object","required":["a","b"]}`, `{}`, `/input: Expected the field "a". | /input: Expected the field "b".`},
		{`{"type":"object","properties":{"a":{}},"additionalProperties":false}`, `{"a":1,"z":2}`, `/input/z: Expected no such field.`},
		{`{"enum":["low","high"]}`, `"mid"`, `/input: Expected one of "low", "high".`},
		{`{"const":2}`, `3`, `/input: Expected 2.`},
		{`{"minimum":0.5}`, `0`, `/input: Expected a number of at least 0.5.`},
		{`{"exclusiveMaximum":10}`, `10`, `/input: Expected a number below 10.`},
		{`{"minLength":3}`, `"ab"`, `/input: Expected text of at least 3 characters.`},
		{`{"pattern":"^[a-z]+$"}`, `"A1"`, `/input: Expected text matching the pattern ^[a-z]+$.`},
		{`{"type":"array","items":{"type":"number"},"maxItems":1}`, `[1,"x"]`, `/input: Expected at most 1 item. | /input/1: Expected a number.`},
		{`{"anyOf":[{"type":"string"},{"type":"object","required":["id"]}]}`, `{}`, `/input: Expected one of: text; or the field "id".`},
		{`{"$defs":{"R":{"type":"object","properties":{"n":{"type":"number"}}}},"properties":{"r":{"$ref":"#/$defs/R"}}}`, `{"r":{"n":"1"}}`, `/input/r/n: Expected a number.`},
	} {
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(c.schema))
		if err != nil {
			t.Fatal(err)
		}
		sch, err := compileSchema(doc)
		if err != nil {
			t.Fatalf("%s: %v", c.schema, err)
		}
		v, _ := jsonschema.UnmarshalJSON(strings.NewReader(c.value))
		var got []string
		for _, is := range schemaIssues(sch, v, "/input") {
			got = append(got, is.Path+": "+is.Message)
		}
		if g := strings.Join(got, " | "); g != c.want {
			t.Errorf("%s over %s:\n got %s\nwant %s", c.value, c.schema, g, c.want)
		}
	}
}
