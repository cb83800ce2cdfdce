package shape

import (
	"math"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"quire/words/jsonptr"
)

// translate turns the validator's errors into issues in the shapes' own
// words: each error that has no causes becomes one issue at its instance
// location, and the errors that only group others are passed through.
func (c *collector) translate(shape string, e *jsonschema.ValidationError) {
	if len(e.Causes) > 0 {
		for _, cause := range e.Causes {
			c.translate(shape, cause)
		}
		return
	}
	loc := e.InstanceLocation
	path := pointer(loc)
	last := ""
	if len(loc) > 0 {
		last = loc[len(loc)-1]
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Type:
		c.add(path, typeMessage(k.Want))
	case *kind.InvalidJsonValue:
		if f, ok := k.Value.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			c.add(path, msgDouble)
		} else if f, ok := k.Value.(float32); ok && (math.IsNaN(float64(f)) || math.IsInf(float64(f), 0)) {
			c.add(path, msgDouble)
		} else {
			c.add(path, msgNotJSON)
		}
	case *kind.Required:
		for _, m := range k.Missing {
			c.add(path, msgRequired(m))
		}
	case *kind.AdditionalProperties:
		what := fields[shape][place(loc)]
		for _, p := range k.Properties {
			member := jsonptr.Append(path, p)
			if what == "" {
				c.add(member, "Expected no such field.")
			} else {
				c.add(member, msgNoField(what))
			}
		}
	case *kind.MinItems:
		c.add(path, msgAtLeast(k.Want, noun(last)))
	case *kind.MaxItems:
		c.add(path, msgAtMost(k.Want, noun(last)))
	case *kind.MinLength, *kind.MaxLength:
		if last == "text" && len(loc) == 1 {
			c.add(path, msgTextLen)
		} else {
			c.add(path, msgLength(last))
		}
	case *kind.Enum:
		if last == "period" {
			c.add(path, msgPeriod)
		} else {
			c.add(path, fallback(shape))
		}
	default:
		// The shapes' schemas use no other keyword; should one be added
		// without its words here, the issue still names its place.
		c.add(path, fallback(shape))
	}
}

func fallback(shape string) string { return "Expected a value of the shape " + shape + " here." }

// typeMessage words the types a place wants.
func typeMessage(want []string) string {
	if len(want) == 1 {
		switch want[0] {
		case "object":
			return msgObject
		case "array":
			return msgList
		case "string":
			return msgText
		case "number", "integer":
			return msgNumber
		}
	}
	w := slices.Clone(want)
	slices.Sort(w)
	if slices.Equal(w, []string{"boolean", "null", "number", "string"}) {
		return msgCell
	}
	return "Expected " + strings.Join(want, " or ") + "."
}

// place writes a path with each index as "*", as fields keys it.
func place(loc []string) string {
	var b strings.Builder
	for _, t := range loc {
		b.WriteByte('/')
		if isIndex(t) {
			b.WriteByte('*')
		} else {
			b.WriteString(jsonptr.Escape(t))
		}
	}
	return b.String()
}

func isIndex(t string) bool {
	if t == "" {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return false
		}
	}
	return true
}

// noun gives the singular of a list's name.
func noun(list string) string {
	if n, ok := nouns[list]; ok {
		return n
	}
	return "item"
}
