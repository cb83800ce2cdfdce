package ledger

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"quire/words/jsonptr"
	"quire/words/refusal"
)

// A value that breaks a JSON Schema (an output.schema, an AgentRun
// document's input.schemaId or output.schemaId) is refused with one issue
// for each thing expected, at the value's JSON pointer under base, in the
// words the four shapes use ("Expected text.", "Expected the field
// \"claim\"."): the schema library's own words name its keywords and the
// URL a schema is compiled under, which mean nothing to the author of the
// value. The library's groups (the schema, a $ref, allOf) hold the
// expectations and say none themselves; anyOf and oneOf are one issue that
// names each choice's expectation.

// schemaIssues checks v against sch and answers its issues, or none.
func schemaIssues(sch *jsonschema.Schema, v any, base string) []refusal.Issue {
	err := sch.Validate(v)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []refusal.Issue{{Path: base, Message: "Expected a JSON value."}}
	}
	issues := expectations(ve, base)
	if len(issues) == 0 {
		issues = append(issues, refusal.Issue{Path: base, Message: "Expected a value of the schema."})
	}
	return issues
}

// expectations are the issues of one error and the errors it holds.
func expectations(e *jsonschema.ValidationError, base string) []refusal.Issue {
	var issues []refusal.Issue
	switch k := e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
		for _, c := range e.Causes {
			issues = append(issues, expectations(c, base)...)
		}
	case *kind.Required:
		for _, f := range k.Missing {
			issues = append(issues, refusal.Issue{Path: at(base, e), Message: fmt.Sprintf("Expected the field %q.", f)})
		}
	case *kind.AdditionalProperties:
		for _, f := range k.Properties {
			issues = append(issues, refusal.Issue{Path: jsonptr.Append(at(base, e), f), Message: "Expected no such field."})
		}
	default:
		issues = append(issues, refusal.Issue{Path: at(base, e), Message: "Expected " + expected(e) + "."})
	}
	return issues
}

// at is an error's JSON pointer under base.
func at(base string, e *jsonschema.ValidationError) string {
	p := base
	for _, seg := range e.InstanceLocation {
		p = jsonptr.Append(p, seg)
	}
	return p
}

// typeWords are the JSON Schema types in the shapes' words.
var typeWords = map[string]string{"object": "an object", "array": "a list", "string": "text", "number": "a number",
	"integer": "a whole number", "boolean": "true or false", "null": "null"}

// expected words what one error expected, without "Expected" and the
// full stop.
func expected(e *jsonschema.ValidationError) string {
	switch k := e.ErrorKind.(type) {
	case *kind.Type:
		var w []string
		for _, t := range k.Want {
			if t != "null" {
				w = append(w, typeWords[t])
			}
		}
		if slices.Contains(k.Want, "null") {
			w = append(w, "null")
		}
		return strings.Join(w, " or ")
	case *kind.Enum:
		w := make([]string, len(k.Want))
		for i, v := range k.Want {
			w[i] = jsonWords(v)
		}
		return "one of " + strings.Join(w, ", ")
	case *kind.Const:
		return jsonWords(k.Want)
	case *kind.MinLength:
		return "text of at least " + count(k.Want, "character")
	case *kind.MaxLength:
		return "text of at most " + count(k.Want, "character")
	case *kind.Pattern:
		return fmt.Sprintf("text matching the pattern %s", k.Want)
	case *kind.Format:
		return "text in the format " + k.Want
	case *kind.Minimum:
		return "a number of at least " + ratWords(k.Want)
	case *kind.Maximum:
		return "a number of at most " + ratWords(k.Want)
	case *kind.ExclusiveMinimum:
		return "a number above " + ratWords(k.Want)
	case *kind.ExclusiveMaximum:
		return "a number below " + ratWords(k.Want)
	case *kind.MultipleOf:
		return "a multiple of " + ratWords(k.Want)
	case *kind.MinItems:
		return "at least " + count(k.Want, "item")
	case *kind.MaxItems:
		return "at most " + count(k.Want, "item")
	case *kind.UniqueItems:
		return fmt.Sprintf("no item twice: items %d and %d are the same", k.Duplicates[0], k.Duplicates[1])
	case *kind.MinProperties:
		return "at least " + count(k.Want, "field")
	case *kind.MaxProperties:
		return "at most " + count(k.Want, "field")
	case *kind.DependentRequired:
		return fmt.Sprintf("the fields %s beside %q", strings.Join(k.Missing, ", "), k.Prop)
	case *kind.Dependency:
		return fmt.Sprintf("the fields %s beside %q", strings.Join(k.Missing, ", "), k.Prop)
	case *kind.FalseSchema:
		return "no value here"
	case *kind.AnyOf:
		return "one of: " + choices(e)
	case *kind.OneOf:
		if len(k.Subschemas) > 1 {
			return "exactly one of the choices to match; more than one does"
		}
		return "one of: " + choices(e)
	case *kind.Not:
		return "a value that does not match the schema under not"
	case *kind.Contains, *kind.MinContains, *kind.MaxContains:
		return "items that match the schema under contains"
	case *kind.PropertyNames:
		return fmt.Sprintf("no field named %q", k.Property)
	}
	return "a value of the schema at " + "/" + strings.Join(e.ErrorKind.KeywordPath(), "/")
}

// choices words what each choice of an anyOf or oneOf expected, each
// expectation at its pointer from the choice's value.
func choices(e *jsonschema.ValidationError) string {
	var w []string
	for _, c := range e.Causes {
		var each []string
		for _, is := range expectations(c, "") {
			x := strings.TrimSuffix(strings.TrimPrefix(is.Message, "Expected "), ".")
			if p := strings.TrimPrefix(is.Path, at("", e)); p != "" {
				x += " at " + p
			}
			each = append(each, x)
		}
		w = append(w, strings.Join(each, " and "))
	}
	return strings.Join(w, "; or ")
}

// count is n of a thing, in the singular for one.
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// jsonWords is a value as JSON text.
func jsonWords(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// ratWords is a schema's number as it would be written: 5, 0.5.
func ratWords(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return fmt.Sprint(f)
}
