// Package viewdiff tells how two views differ: each place where they
// differ, named by its JSON Pointer (RFC 6901), with the value on each
// side. A page's dry run (try_page) shows it against today's views, and
// `quire page diff` between two versions.
//
// The views are compared as encoding/json decodes them into any: objects
// member by member, arrays index by index (an array that grew or shrank
// differs at each index one side lacks), anything else as a whole. The
// walk is a pure function of its two values.
package viewdiff

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strconv"

	"quire/words/jsonptr"
)

// Change is one place where the views differ. Old and New are the JSON
// there on each side; a side without the member or the index at all
// leaves its side out (nil), which a JSON null does not (null).
type Change struct {
	Pointer string          `json:"pointer"`
	Old     json.RawMessage `json:"old,omitempty"`
	New     json.RawMessage `json:"new,omitempty"`
}

// Diff lists where old and new differ, in document order (an object's
// members by name, an array's items by index); none when they are equal.
func Diff(old, new any) []Change {
	var out []Change
	walk("", old, new, &out)
	return out
}

func walk(ptr string, a, b any, out *[]Change) {
	switch av := a.(type) {
	case map[string]any:
		if bv, ok := b.(map[string]any); ok {
			walkObjects(ptr, av, bv, out)
			return
		}
	case []any:
		if bv, ok := b.([]any); ok {
			walkArrays(ptr, av, bv, out)
			return
		}
	}
	if !reflect.DeepEqual(a, b) {
		*out = append(*out, Change{Pointer: ptr, Old: encode(a), New: encode(b)})
	}
}

func walkObjects(ptr string, a, b map[string]any, out *[]Change) {
	names := make([]string, 0, len(a)+len(b))
	for n := range a {
		names = append(names, n)
	}
	for n := range b {
		if _, both := a[n]; !both {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		at := jsonptr.Append(ptr, n)
		av, inA := a[n]
		bv, inB := b[n]
		switch {
		case !inA:
			*out = append(*out, Change{Pointer: at, New: encode(bv)})
		case !inB:
			*out = append(*out, Change{Pointer: at, Old: encode(av)})
		default:
			walk(at, av, bv, out)
		}
	}
}

func walkArrays(ptr string, a, b []any, out *[]Change) {
	for i := 0; i < max(len(a), len(b)); i++ {
		at := ptr + "/" + strconv.Itoa(i)
		switch {
		case i >= len(a):
			*out = append(*out, Change{Pointer: at, New: encode(b[i])})
		case i >= len(b):
			*out = append(*out, Change{Pointer: at, Old: encode(a[i])})
		default:
			walk(at, a[i], b[i], out)
		}
	}
}

// encode writes a side's value as JSON, as a person reads it: < > and &
// as themselves, not escaped for HTML. The values are JSON's own, as
// decoded, so they always encode; one that does not reads as null.
func encode(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return json.RawMessage("null")
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
