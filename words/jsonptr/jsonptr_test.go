package jsonptr

import (
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"":      "",
		"name":  "name",
		"a/b":   "a~1b",
		"m~n":   "m~0n",
		"~1":    "~01", // a token's ~1 stays two characters, not a slash
		"/~/":   "~1~0~1",
		"é/ü~":  "é~1ü~0",
		"a b%c": "a b%c",
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Append("/data/t", "a/b"); got != "/data/t/a~1b" {
		t.Errorf("Append = %q", got)
	}
}

// unescape reads a token back as RFC 6901 section 4 says: ~1 to /, then ~0
// to ~.
func unescape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "a/b", "~", "~1", "~0/~1", "//~~"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := Escape(s)
		if strings.Contains(e, "/") {
			t.Fatalf("Escape(%q) = %q holds a slash", s, e)
		}
		if u := unescape(e); u != s {
			t.Fatalf("Escape(%q) = %q reads back as %q", s, e, u)
		}
	})
}
