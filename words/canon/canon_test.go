package canon

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

func TestCanonicalForms(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"b": 1, "a": [true, null, "x"]}`, `{"a":[true,null,"x"],"b":1}`},
		// By UTF-16 code units U+1F600 (0xD83D 0xDE00) comes before U+FF61;
		// by UTF-8 bytes it would come after.
		{`{"\uff61": 1, "\ud83d\ude00": 2, "a": 3}`, `{"a":3,"😀":2,"｡":1}`},
		{`1.0`, `1`},
		{`-0`, `0`},
		{`1e21`, `1e+21`},
		{`1e20`, `100000000000000000000`},
		{`0.0000001`, `1e-7`},
		{`0.000001`, `0.000001`},
		{`123.456e3`, `123456`},
		{`"a\u0001\"\n/é"`, `"a\u0001\"\n/é"`},
	} {
		got, err := JSON([]byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if string(got) != c.want {
			t.Errorf("%s: got %s, want %s", c.in, got, c.want)
		}
	}
}

func TestRefusesWhatHasNoCanonicalForm(t *testing.T) {
	for _, in := range []string{`1e400`, `{"a":1} 2`, `{`} {
		if _, err := JSON([]byte(in)); err == nil {
			t.Errorf("%s: no refusal", in)
		}
	}
}

// FuzzJSON: whatever JSON it takes, the canonical form is JSON that means
// the same, and is its own canonical form.
func FuzzJSON(f *testing.F) {
	for _, s := range []string{`{"b": 1, "a": [true, null, "x"]}`, `{"\uff61": 1, "\ud83d\ude00": 2}`, `123.456e3`, `"a\u0001\"\n/é"`, `[-0, 1e21, 0.0000001]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := JSON(in)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("%q: the canonical form %q is not JSON", in, out)
		}
		again, err := JSON(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("%q: the canonical form %q is not its own (%q, %v)", in, out, again, err)
		}
		var a, b any
		json.Unmarshal(in, &a)
		json.Unmarshal(out, &b)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%q: the canonical form %q means %v, not %v", in, out, b, a)
		}
	})
}
