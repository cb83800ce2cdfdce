package near

import (
	"fmt"
	"testing"
)

func TestClosest(t *testing.T) {
	kinds := []string{"line", "bars", "stacked", "share", "table", "text"}
	for _, c := range []struct{ s, want string }{
		{"bar", "bars"},    // begun
		{"lien", "line"},   // two swapped
		{"tabel", "table"}, // two swapped
		{"shar", "share"},  // begun
		{"donut", ""},      // nothing near
		{"b", ""},          // too short to be begun, and too far
		{"pie", ""},        // two edits in three letters are too many
		{"stakced", "stacked"},
	} {
		if got := Closest(c.s, kinds); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.s, got, c.want)
		}
	}
	if got := Closest("limt", []string{"playbook", "limit", "cursor"}); got != "limit" {
		t.Errorf("Closest(limt) = %q", got)
	}
}

func TestList(t *testing.T) {
	var many []string
	for i := range 23 {
		many = append(many, fmt.Sprint("p", i))
	}
	for _, c := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"series"}, "series"},
		{[]string{"series", "text"}, "series and text"},
		{[]string{"series", "categories", "table", "text"}, "series, categories, table and text"},
		{many, "p0, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18, p19 and 3 more"},
	} {
		if got := List(c.in); got != c.want {
			t.Errorf("List(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	pbs := []string{"finance", "ops"}
	for _, c := range []struct {
		name    string
		choices []string
		want    string
	}{
		{"finence", pbs, `; did you mean "finance"? The playbooks are finance and ops`},
		{"zzzzzz", pbs, `; the playbooks are finance and ops`},
		{"finance", nil, ``},
	} {
		if got := Suggest(c.name, c.choices, "the playbooks"); got != c.want {
			t.Errorf("Suggest(%q, %q) = %q, want %q", c.name, c.choices, got, c.want)
		}
	}
}
