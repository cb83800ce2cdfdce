package checker

import (
	"strings"
	"testing"

	"quire/words/event"
)

// The proof of one run.jsonl against its parent's version: rule 3's four
// messages, a torn last line in the parent never a committed line, and
// the seq order of the lines a commit adds, after the last seq before them.
func TestLogAgainstItsParent(t *testing.T) {
	const a, b, c = `{"seq":1}` + "\n", `{"seq":2}` + "\n", `{"seq":3}` + "\n"
	const file = "playbook-runs/r/run.jsonl"
	for _, tc := range []struct {
		name, old, cur string
		removed        bool
		want           string
	}{
		{"grown", a + b, a + b + c, false, ""},
		{"torn tail replaced", a + `{"step_com`, a + b, false, ""},
		{"changed", a + b, a + `{"seq":2,"x":1}` + "\n" + c, false, ":2: rule 3: committed line 2 of run.jsonl was changed; run.jsonl is append-only (append a correction instead)"},
		{"last line removed", a + b, a, false, ":2: rule 3: committed line 2 of run.jsonl was removed; run.jsonl is append-only"},
		{"lines removed", a + b + c, a, false, ":2: rule 3: committed lines 2 to 3 of run.jsonl were removed; run.jsonl is append-only"},
		{"file removed", a + b, "", true, ":1: rule 3: run.jsonl was removed, and with it its 2 committed lines"},
		{"out of order", a + c, a + c + b, false, ":3: seq 2 comes after seq 3 (line 2); a run's lines are in seq order"},
		{"hand-written lines skipped", a + b + "{}\n", a + b + "{}\n" + c, false, ""},
		{"after hand-written lines", a + c + "{}\n", a + c + "{}\n" + b, false, ":4: seq 2 comes after seq 3 (line 2); a run's lines are in seq order"},
	} {
		w := &historyWalk{problems: []Problem{}}
		w.log(file, []byte(tc.old), []byte(tc.cur), tc.removed)
		var got []string
		for _, p := range w.problems {
			got = append(got, p.String())
		}
		want := ""
		if tc.want != "" {
			want = file + tc.want
		}
		if strings.Join(got, "\n") != want {
			t.Errorf("%s: %q, want %q", tc.name, got, want)
		}
	}
}

// The capsule's rules of a line that parsed: its minimum fields, and
// nothing after archived.
func TestLineRules(t *testing.T) {
	archivedAt := 0
	for i, tc := range []struct{ raw, event, want string }{
		{`{"step":null,"detail":""}`, "step_completed", ""},
		{`{"detail":""}`, "step_completed", `no "step" field: every line holds the capsule's minimum fields event, timestamp, step (null where there is none) and detail`},
		{`{}`, "step_completed", `no "step" or "detail" field: every line holds the capsule's minimum fields event, timestamp, step (null where there is none) and detail`},
		{`{"step":null,"detail":""}`, "archived", ""},
		{`{"step":null,"detail":""}`, "step_completed", "rule 5: a step_completed line after the run was archived at line 4; archived runs are read-only"},
	} {
		ln := event.Line{Event: tc.event}
		got := strings.Join(lineRules([]byte(tc.raw), &ln, i+1, &archivedAt), "\n")
		if got != tc.want {
			t.Errorf("line %d: %q, want %q", i+1, got, tc.want)
		}
	}
}
