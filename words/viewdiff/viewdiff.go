// Package viewdiff tells what changed between two JSON values, as the
// JSON pointers (RFC 6901) of the values that differ with their old and new
// values: how quire page diff says what changed in a page's views.
//
// Values are as encoding/json decodes into any: maps, slices, strings,
// float64 or json.Number, bools and nil. Objects are compared key by key
// (in sorted order, so the changes come in one order on every run), arrays
// index by index; any other pair that differs is one change at its
// pointer. A key or index only one side has is a change whose other side is
// absent (Old or New nil, with Added or Removed set).
package viewdiff

import (
	"reflect"
	"sort"
	"strconv"

	"quire/words/jsonptr"
)

// Change is one value that differs: at Pointer, Old became New. Added says
// the old value had nothing there, Removed that the new one has nothing.
type Change struct {
	Pointer string `json:"pointer"`
	Old     any    `json:"old"`
	New     any    `json:"new"`
	Added   bool   `json:"added,omitempty"`
	Removed bool   `json:"removed,omitempty"`
}

// Diff lists the changes from old to new, in document order (object keys
// sorted); none when they are equal.
func Diff(old, new any) []Change {
	var out []Change
	diff("", old, new, &out)
	return out
}

func diff(ptr string, old, new any, out *[]Change) {
	switch o := old.(type) {
	case map[string]any:
		if n, ok := new.(map[string]any); ok {
			diffObjects(ptr, o, n, out)
			return
		}
	case []any:
		if n, ok := new.([]any); ok {
			diffArrays(ptr, o, n, out)
			return
		}
	}
	if !reflect.DeepEqual(old, new) {
		*out = append(*out, Change{Pointer: ptr, Old: old, New: new})
	}
}

func diffObjects(ptr string, o, n map[string]any, out *[]Change) {
	keys := make([]string, 0, len(o)+len(n))
	for k := range o {
		keys = append(keys, k)
	}
	for k := range n {
		if _, ok := o[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		ov, inOld := o[k]
		nv, inNew := n[k]
		at := jsonptr.Append(ptr, k)
		switch {
		case !inOld:
			*out = append(*out, Change{Pointer: at, New: nv, Added: true})
		case !inNew:
			*out = append(*out, Change{Pointer: at, Old: ov, Removed: true})
		default:
			diff(at, ov, nv, out)
		}
	}
}

func diffArrays(ptr string, o, n []any, out *[]Change) {
	for i := 0; i < max(len(o), len(n)); i++ {
		at := ptr + "/" + strconv.Itoa(i)
		switch {
		case i >= len(o):
			*out = append(*out, Change{Pointer: at, New: n[i], Added: true})
		case i >= len(n):
			*out = append(*out, Change{Pointer: at, Old: o[i], Removed: true})
		default:
			diff(at, o[i], n[i], out)
		}
	}
}
