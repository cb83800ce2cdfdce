package shape

import (
	"encoding/json"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The validator takes several milliseconds over a series of 2,000 points
// (BenchmarkValidatorSeries2000), most of it in allocations for each value
// it visits: more than a whole check may take, with the rest to do. So
// CheckValue first asks a plan, a plain tree read from the compiled schema,
// whether the value is valid; only a value the plan does not accept is
// given to the validator, whose errors become the issues. The plan says
// valid only where the validator would: it knows the keywords the shapes
// use and declines a schema with any other (makePlan gives an error, and
// every value then goes to the validator), and FuzzCheck and the table tests
// check that the two agree.

// A plan is one schema of the shapes, as far as the keywords the shapes use.
type plan struct {
	types    uint8 // the bits tNull…tObject of the types taken; 0 for any
	enum     map[string]bool
	props    []prop // few, so a search beats a map's hashing
	required []string
	closed   bool // additionalProperties: false
	minItems int  // -1 for none
	maxItems int
	items    *plan
	minLen   int // -1 for none
	maxLen   int
}

type prop struct {
	name string
	plan *plan
}

func (p *plan) prop(name string) *plan {
	for i := range p.props {
		if p.props[i].name == name {
			return p.props[i].plan
		}
	}
	return nil
}

const (
	tNull uint8 = 1 << iota
	tBool
	tNumber
	tString
	tArray
	tObject
)

var typeBits = map[string]uint8{
	"null": tNull, "boolean": tBool, "number": tNumber, "string": tString,
	"array": tArray, "object": tObject,
}

// makePlan reads a compiled schema into a plan, or says which keyword it
// does not know.
func makePlan(s *jsonschema.Schema) (*plan, error) {
	switch {
	case s.DraftVersion < 2020:
		return nil, fmt.Errorf("draft %d", s.DraftVersion)
	case s.Bool != nil, s.Ref != nil, s.RecursiveRef != nil, s.DynamicRef != nil, s.Const != nil,
		s.Not != nil, s.AllOf != nil, s.AnyOf != nil, s.OneOf != nil, s.If != nil, s.Then != nil,
		s.Else != nil, s.Format != nil, s.MaxProperties != nil, s.MinProperties != nil,
		s.PropertyNames != nil, len(s.PatternProperties) > 0, len(s.Dependencies) > 0,
		len(s.DependentRequired) > 0, len(s.DependentSchemas) > 0, s.UnevaluatedProperties != nil,
		s.UniqueItems, s.Contains != nil, s.MinContains != nil, s.MaxContains != nil, s.Items != nil,
		s.AdditionalItems != nil, len(s.PrefixItems) > 0, s.UnevaluatedItems != nil, s.Pattern != nil,
		s.ContentEncoding != nil, s.ContentMediaType != nil, s.ContentSchema != nil,
		s.Maximum != nil, s.Minimum != nil, s.ExclusiveMaximum != nil, s.ExclusiveMinimum != nil,
		s.MultipleOf != nil, len(s.Extensions) > 0:
		return nil, fmt.Errorf("%s: a keyword the plan does not know", s.Location)
	}
	p := &plan{minItems: -1, maxItems: -1, minLen: -1, maxLen: -1, required: s.Required}
	if s.Types != nil {
		for _, t := range s.Types.ToStrings() {
			b, ok := typeBits[t]
			if !ok {
				return nil, fmt.Errorf("%s: type %s", s.Location, t)
			}
			p.types |= b
		}
	}
	if s.Enum != nil {
		p.enum = map[string]bool{}
		for _, v := range s.Enum.Values {
			str, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("%s: an enum of %T", s.Location, v)
			}
			p.enum[str] = true
		}
	}
	switch a := s.AdditionalProperties.(type) {
	case nil:
	case bool:
		p.closed = !a
	default:
		return nil, fmt.Errorf("%s: additionalProperties of a schema", s.Location)
	}
	if len(s.Properties) > 0 {
		for name, sub := range s.Properties {
			sp, err := makePlan(sub)
			if err != nil {
				return nil, err
			}
			p.props = append(p.props, prop{name, sp})
		}
	}
	if s.Items2020 != nil {
		ip, err := makePlan(s.Items2020)
		if err != nil {
			return nil, err
		}
		p.items = ip
	}
	if s.MinItems != nil {
		p.minItems = *s.MinItems
	}
	if s.MaxItems != nil {
		p.maxItems = *s.MaxItems
	}
	if s.MinLength != nil {
		p.minLen = *s.MinLength
	}
	if s.MaxLength != nil {
		p.maxLen = *s.MaxLength
	}
	return p, nil
}

// valid says whether the validator would accept v. It is exact: where it
// says false, the validator finds at least one error.
func (p *plan) valid(v any) bool {
	var t uint8
	switch x := v.(type) {
	case nil:
		t = tNull
	case bool:
		t = tBool
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
		t = tNumber
	case float32:
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return false
		}
		t = tNumber
	case json.Number, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		t = tNumber
	case string:
		t = tString
	case []any:
		t = tArray
	case map[string]any, *object:
		t = tObject
	default:
		return false
	}
	if p.types != 0 && p.types&t == 0 {
		return false
	}
	switch x := v.(type) {
	case string:
		if p.enum != nil && !p.enum[x] {
			return false
		}
		// Count the characters only where the bytes leave it open: a
		// character takes 1 to 4 bytes.
		if (p.maxLen >= 0 && len(x) > p.maxLen) || (p.minLen >= 0 && len(x) < 4*p.minLen) {
			n := utf8.RuneCountInString(x)
			if (p.minLen >= 0 && n < p.minLen) || (p.maxLen >= 0 && n > p.maxLen) {
				return false
			}
		}
		return true
	case map[string]any, *object:
		if p.enum != nil {
			return false
		}
		o, _ := asObj(x)
		for _, r := range p.required {
			if _, ok := o.get(r); !ok {
				return false
			}
		}
		return o.each(func(k string, val any) bool {
			sp := p.prop(k)
			if sp == nil {
				return !p.closed
			}
			return sp.valid(val)
		})
	case []any:
		if p.enum != nil {
			return false
		}
		if (p.minItems >= 0 && len(x) < p.minItems) || (p.maxItems >= 0 && len(x) > p.maxItems) {
			return false
		}
		if p.items != nil {
			for _, it := range x {
				if !p.items.valid(it) {
					return false
				}
			}
		}
		return true
	}
	return p.enum == nil
}
