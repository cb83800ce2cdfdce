package vault

import (
	"slices"
	"strings"
	"testing"
)

// A hook's answers of protocol version 2, as git reads them: the token,
// then the paths each ended by a NUL (a folder may end in "/"), or "/"
// for a monitor that knows nothing; no token is no answer.
func TestMonitorAnswersReadAsGitReadsThem(t *testing.T) {
	for _, c := range []struct {
		out  string
		ok   bool
		want MonitorAnswer
	}{
		{"c:1:2:3:4\x00", true, MonitorAnswer{Token: "c:1:2:3:4"}},
		{"t\x00a/b\x00c/\x00", true, MonitorAnswer{Token: "t", Paths: []string{"a/b", "c/"}}},
		{"t\x00a/b", true, MonitorAnswer{Token: "t", Paths: []string{"a/b"}}},
		{"t\x00/", true, MonitorAnswer{Token: "t", All: true}},
		{"t\x00/\x00a", true, MonitorAnswer{Token: "t", All: true}},
		{"\x00a", false, MonitorAnswer{}},
		{"no token", false, MonitorAnswer{}},
		{"", false, MonitorAnswer{}},
	} {
		got, ok := parseMonitorAnswer([]byte(c.out))
		if ok != c.ok || got.Token != c.want.Token || got.All != c.want.All || !slices.Equal(got.Paths, c.want.Paths) {
			t.Errorf("%q: %+v %v, want %+v %v", c.out, got, ok, c.want, c.ok)
		}
	}
}

func FuzzParseMonitorAnswer(f *testing.F) {
	for _, s := range []string{"c:1:2:3:4\x00", "t\x00a/b\x00c/\x00", "t\x00/", "\x00", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		a, ok := parseMonitorAnswer(out)
		if !ok {
			return
		}
		if a.Token == "" || strings.Contains(a.Token, "\x00") {
			t.Fatalf("token %q", a.Token)
		}
		for _, p := range a.Paths {
			if p == "" || strings.Contains(p, "\x00") {
				t.Fatalf("path %q", p)
			}
		}
	})
}
