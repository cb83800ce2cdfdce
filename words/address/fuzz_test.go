package address

import (
	"encoding/json"
	"testing"

	"quire/words/refusal"
)

// FuzzParse: Parse never panics; it accepts or refuses at /address; every
// accepted address formats back to its text and parses again to the same
// Address, holds itself and explains.
func FuzzParse(f *testing.F) {
	for _, ex := range examples {
		f.Add(ex.s)
	}
	for _, r := range refusals {
		f.Add(r.s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := Parse(s)
		if err != nil {
			rf, ok := refusal.As(err)
			if !ok || rf.Code != refusal.InvalidInput || len(rf.Issues) != 1 || rf.Issues[0].Path != Path {
				t.Fatalf("Parse(%q): %v is not invalid_input at /address", s, err)
			}
			return
		}
		back := a.String()
		if back != s {
			t.Fatalf("Parse(%q).String() = %q", s, back)
		}
		b, err := Parse(back)
		if err != nil || b != a {
			t.Fatalf("Parse(%q) = %+v, %v; want %+v", back, b, err, a)
		}
		if !Contains(a, a) {
			t.Fatalf("%q does not hold itself", s)
		}
		if a.Kind == KindPart && !Contains(a.Thing(), a) {
			t.Fatalf("the thing of %q does not hold it", s)
		}
		if _, err := json.Marshal(a.Explain()); err != nil {
			t.Fatalf("Explain(%q): %v", s, err)
		}
	})
}

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(step1); err != nil {
			b.Fatal(err)
		}
	}
}
