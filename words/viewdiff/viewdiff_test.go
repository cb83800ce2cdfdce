package viewdiff

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func decode(t testing.TB, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

func TestDiffNamesEachPlace(t *testing.T) {
	old := decode(t, `{"totals":{"rows":[["Web",132.25],["Marketplace",24]]},"a/b":1,"gone":true,"same":[1,2]}`)
	new := decode(t, `{"totals":{"rows":[["Web",140],["Marketplace",24],["Shop",3]]},"a/b":null,"m~n":"<new>","same":[1,2]}`)
	var got []string
	for _, c := range Diff(old, new) {
		got = append(got, c.Pointer+" "+string(c.Old)+" -> "+string(c.New))
	}
	want := []string{
		"/a~1b 1 -> null",
		"/gone true -> ",
		"/m~0n  -> \"<new>\"",
		"/totals/rows/0/1 132.25 -> 140",
		"/totals/rows/2  -> [\"Shop\",3]",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Diff:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d := Diff(old, old); d != nil {
		t.Errorf("Diff of a value with itself = %v, want none", d)
	}
	if d := Diff(decode(t, `{"v":[1]}`), decode(t, `{"v":{"0":1}}`)); len(d) != 1 || d[0].Pointer != "/v" {
		t.Errorf("an array become an object = %v, want one change at /v", d)
	}
}

// randomJSON makes a JSON value as encoding/json decodes it, from a small
// alphabet so that two of them often share members and items.
func randomJSON(r *rand.Rand, depth int) any {
	k := r.IntN(7)
	if depth <= 0 {
		k = r.IntN(4)
	}
	switch k {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return float64(r.IntN(5)) / 2
	case 3:
		return []string{"", "a", "~", "/", "a/b~c"}[r.IntN(5)]
	case 4, 5:
		m := map[string]any{}
		for i := r.IntN(4); i > 0; i-- {
			m[[]string{"x", "y", "a/b", "m~n", "~1", ""}[r.IntN(6)]] = randomJSON(r, depth-1)
		}
		return m
	}
	a := make([]any, r.IntN(4))
	for i := range a {
		a[i] = randomJSON(r, depth-1)
	}
	return a
}

// apply makes old into new by the changes, reading each pointer back as
// RFC 6901 says, so it proves the pointers as well as the values.
func apply(t testing.TB, v any, changes []Change) any {
	t.Helper()
	// An array's removed items are its last ones: took away from the end
	// back, each leaves the indices before it as they were.
	for i := len(changes) - 1; i >= 0; i-- {
		if c := changes[i]; c.New == nil {
			v = set(t, v, tokens(c.Pointer), nil, false)
		}
	}
	for _, c := range changes {
		if c.New != nil {
			var nv any
			if err := json.Unmarshal(c.New, &nv); err != nil {
				t.Fatalf("%s: new is not JSON: %s", c.Pointer, c.New)
			}
			v = set(t, v, tokens(c.Pointer), nv, true)
		}
	}
	return v
}

func tokens(ptr string) []string {
	if ptr == "" {
		return nil
	}
	ts := strings.Split(ptr[1:], "/")
	for i, s := range ts {
		ts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return ts
}

func set(t testing.TB, v any, at []string, nv any, put bool) any {
	if len(at) == 0 {
		return nv
	}
	switch c := v.(type) {
	case map[string]any:
		if len(at) == 1 && !put {
			delete(c, at[0])
			return c
		}
		c[at[0]] = set(t, c[at[0]], at[1:], nv, put)
		return c
	case []any:
		i, err := strconv.Atoi(at[0])
		if err != nil || i > len(c) {
			t.Fatalf("no index %q in an array of %d", at[0], len(c))
		}
		if len(at) == 1 && !put {
			return c[:i]
		}
		if i == len(c) {
			return append(c, set(t, nil, at[1:], nv, put))
		}
		c[i] = set(t, c[i], at[1:], nv, put)
		return c
	}
	t.Fatalf("the pointer goes into a %T", v)
	return nil
}

// clone copies a value so that apply may change it in place.
func clone(v any) any {
	b, _ := json.Marshal(v)
	var out any
	json.Unmarshal(b, &out)
	return out
}

// check holds Diff to what a reader of its changes relies on: applied to
// old they give new, none between equal values, and the other way round
// they are the same places with the sides swapped.
func check(t testing.TB, old, new any) {
	t.Helper()
	d := Diff(old, new)
	if got := apply(t, clone(old), d); !reflect.DeepEqual(got, new) {
		t.Fatalf("Diff(%v, %v) = %v applied gives %v", old, new, d, got)
	}
	if (len(d) == 0) != reflect.DeepEqual(old, new) {
		t.Fatalf("Diff(%v, %v) = %v", old, new, d)
	}
	back := Diff(new, old)
	if len(back) != len(d) {
		t.Fatalf("Diff one way has %d changes, the other %d", len(d), len(back))
	}
	for i := range d {
		if back[i].Pointer != d[i].Pointer || string(back[i].Old) != string(d[i].New) || string(back[i].New) != string(d[i].Old) {
			t.Fatalf("change %d: %+v one way, %+v the other", i, d[i], back[i])
		}
	}
}

func TestDiffProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 29))
	for i := 0; i < 3000; i++ {
		check(t, randomJSON(r, 4), randomJSON(r, 4))
	}
}

func FuzzDiff(f *testing.F) {
	f.Add(`{"a":[1,2,3]}`, `{"a":[1,3]}`)
	f.Add(`{"a/b":{"m~n":null}}`, `{"a/b":{}}`)
	f.Add(`[]`, `{}`)
	f.Fuzz(func(t *testing.T, a, b string) {
		var old, new any
		if json.Unmarshal([]byte(a), &old) != nil || json.Unmarshal([]byte(b), &new) != nil {
			return
		}
		check(t, old, new)
	})
}
