package shape

// An object is a JSON object as decode reads it: its members, each name
// once, the last value read for a name kept, as encoding/json keeps it.
// Check's values are read only to be checked, so decode keeps them compact
// (a map for each of 2,000 points is most of the work of reading them); the
// plan and the rules read an object and a map alike through obj, and std
// turns decode's values into encoding/json's for the validator.
type object struct {
	members []member
}

type member struct {
	name  string
	value any
}

// obj reads a JSON object of either form.
type obj struct {
	m map[string]any
	o *object
}

// asObj gives v as an obj, if it is an object of either form.
func asObj(v any) (obj, bool) {
	switch x := v.(type) {
	case map[string]any:
		return obj{m: x}, true
	case *object:
		return obj{o: x}, true
	}
	return obj{}, false
}

// get gives the member of this name.
func (o obj) get(name string) (any, bool) {
	if o.o == nil {
		v, ok := o.m[name]
		return v, ok
	}
	for i := range o.o.members {
		if o.o.members[i].name == name {
			return o.o.members[i].value, true
		}
	}
	return nil, false
}

// str gives the member of this name if it is text.
func (o obj) str(name string) (string, bool) {
	v, _ := o.get(name)
	s, ok := v.(string)
	return s, ok
}

// list gives the member of this name if it is a list.
func (o obj) list(name string) ([]any, bool) {
	v, _ := o.get(name)
	l, ok := v.([]any)
	return l, ok
}

// each calls f with each member until f says false, and says whether it
// went through them all.
func (o obj) each(f func(name string, value any) bool) bool {
	if o.o == nil {
		for k, v := range o.m {
			if !f(k, v) {
				return false
			}
		}
		return true
	}
	for _, m := range o.o.members {
		if !f(m.name, m.value) {
			return false
		}
	}
	return true
}

// std gives v with each *object as a map[string]any, as encoding/json
// gives it; v itself where it holds none.
func std(v any) any {
	switch x := v.(type) {
	case *object:
		m := make(map[string]any, len(x.members))
		for _, mem := range x.members {
			m[mem.name] = std(mem.value)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = std(e)
		}
		return out
	}
	return v
}
