package shape

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The plan knows the keywords of the validator's Schema as this version
// has them. A version with another keyword fails here, so that the plan is
// taught it, or taught to decline it.
func TestPlanKnowsEveryKeyword(t *testing.T) {
	var fields []string
	ty := reflect.TypeOf(jsonschema.Schema{})
	for i := 0; i < ty.NumField(); i++ {
		if ty.Field(i).IsExported() {
			fields = append(fields, ty.Field(i).Name)
		}
	}
	want := strings.Fields(`DraftVersion Location Bool ID Ref Anchor RecursiveRef RecursiveAnchor
		DynamicRef DynamicAnchor Types Enum Const Not AllOf AnyOf OneOf If Then Else Format
		MaxProperties MinProperties Required PropertyNames Properties PatternProperties
		AdditionalProperties Dependencies DependentRequired DependentSchemas UnevaluatedProperties
		MinItems MaxItems UniqueItems Contains MinContains MaxContains Items AdditionalItems
		PrefixItems Items2020 UnevaluatedItems MinLength MaxLength Pattern ContentEncoding
		ContentMediaType ContentSchema Maximum Minimum ExclusiveMaximum ExclusiveMinimum MultipleOf
		Extensions Title Description Default Comment ReadOnly WriteOnly Examples Deprecated`)
	if !slices.Equal(fields, want) {
		t.Fatalf("jsonschema.Schema has the fields\n%v\nthe plan knows\n%v", fields, want)
	}
}

// A schema with a keyword the plan does not know has no plan, and its
// values go to the validator.
func TestPlanDeclines(t *testing.T) {
	for _, doc := range []string{
		`{"type": "string", "pattern": "^a"}`,
		`{"type": "object", "properties": {"a": {"minimum": 1}}}`,
		`{"type": "array", "items": {"$ref": "#/$defs/x"}, "$defs": {"x": {}}}`,
		`{"type": "object", "additionalProperties": {"type": "string"}}`,
		`{"enum": [1, 2]}`,
		`{"type": "integer"}`,
		`{"anyOf": [{"type": "string"}]}`,
		`{"uniqueItems": true}`,
	} {
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddResource("https://example.test/s", v); err != nil {
			t.Fatal(err)
		}
		s, err := c.Compile("https://example.test/s")
		if err != nil {
			t.Fatal(err)
		}
		if p, err := makePlan(s); err == nil {
			t.Errorf("%s: a plan %+v", doc, p)
		}
	}
}
