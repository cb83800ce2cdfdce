package activity

import (
	"strings"
	"testing"
	"time"

	"quire/words/refusal"
)

func TestSeenFile(t *testing.T) {
	if p := SeenPath("user_2kLm7Qx"); p != "org/members/user_2kLm7Qx/seen.jsonl" {
		t.Errorf("SeenPath: %s", p)
	}
	// The line mark_activity_seen wrote.
	const written = `{"at":"2026-12-01T17:20:38.736Z","items":["finance/comments/01a2329f-69e5-795d-b5eb-6369c74e783c","org/comments/01a2329f-6bae-7cce-b677-af18c9292d99"]}` + "\n"
	line, err := Line("2026-12-01T17:20:38.736Z", []string{"finance/comments/01a2329f-69e5-795d-b5eb-6369c74e783c", "org/comments/01a2329f-6bae-7cce-b677-af18c9292d99"})
	if err != nil || string(line) != written {
		t.Fatalf("Line: %s %v\nwant %s", line, err, written)
	}
	later, _ := Line("2026-12-01T18:00:00.000Z", []string{"ORG/COMMENTS/01A2329F-6BAE-7CCE-B677-AF18C9292D99", "org"})
	earlier, _ := Line("2026-12-01T08:00:00.000Z", []string{"org/comments/01a2329f-6bae-7cce-b677-af18c9292d99"})
	m, err := ReadMarks(strings.NewReader(written + string(later) + string(earlier) + `{"at":`))
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	// The latest mark of an address counts, whatever its case.
	if len(m) != 3 || !m["org/comments/01a2329f-6bae-7cce-b677-af18c9292d99"].Equal(at("2026-12-01T18:00:00Z")) {
		t.Fatalf("marks: %v", m)
	}
	for _, tc := range []struct {
		address, at string
		want        bool
	}{
		{"org/comments/01A2329F-6BAE-7CCE-B677-AF18C9292D99", "2026-12-01T18:00:00Z", true},
		{"org/comments/01a2329f-6bae-7cce-b677-af18c9292d99", "2026-12-01T18:00:00.001Z", false},
		{"finance/comments/01a2329f-69e5-795d-b5eb-6369c74e783c", "2026-12-01T17:00:00Z", true},
		{"org", "2026-12-01T17:00:00Z", true},
		{"org/settings/billing", "2026-12-01T00:00:00Z", false},
	} {
		if got := m.Seen(tc.address, at(tc.at)); got != tc.want {
			t.Errorf("Seen(%s, %s) = %v, want %v", tc.address, tc.at, got, tc.want)
		}
	}
	// A line longer than 16 MiB stops the reading.
	if _, err := ReadMarks(strings.NewReader(strings.Repeat("x", 16<<20+1))); err == nil {
		t.Error("a line of 16 MiB and more is read")
	}
}

func TestCheckMember(t *testing.T) {
	for _, ok := range []string{"ada", "user_2kLm7Qx", "a-b", strings.Repeat("a", 64)} {
		if err := CheckMember(ok); err != nil {
			t.Errorf("CheckMember(%s): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "ada lovelace", "a/b", strings.Repeat("a", 65), "é"} {
		r, ok := refusal.As(CheckMember(bad))
		if !ok || r.Code != refusal.InvalidInput || r.Issues[0].Path != "/member" {
			t.Errorf("CheckMember(%q): %v", bad, r)
		}
	}
}

// FuzzReadMarks: ReadMarks never panics, and every address of a line
// Line writes is seen at its at, whatever lines came before it.
func FuzzReadMarks(f *testing.F) {
	f.Add(`{"at":"2026-12-01T17:20:38.736Z","items":["finance/comments/01a2329f-69e5-795d-b5eb-6369c74e783c"]}`+"\n", "org/comments/01A2329F")
	f.Add(`{"at":"2026-12-01T17:20:38.7`, "org")
	f.Add("", "playbooks/finance/1793523601000")
	f.Fuzz(func(t *testing.T, before, address string) {
		at := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
		line, err := Line("2100-01-01T00:00:00.000Z", []string{address})
		if err != nil {
			t.Fatal(err)
		}
		m, err := ReadMarks(strings.NewReader(before + "\n" + string(line)))
		if err != nil {
			return // a line over 16 MiB
		}
		if !m.Seen(address, at) {
			t.Fatalf("after %q, %q is not seen at its mark", before, address)
		}
	})
}
