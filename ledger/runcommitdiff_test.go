package ledger

import (
	"encoding/json"
	"testing"
)

// A commit's changes to files a person edited by hand: a thread whose
// earlier text changed says what it no longer holds, from the first line
// that differs; a state file that is no JSON is one change of its text;
// run.jsonl lines dropped are counted.
func TestChangesOfHandEdits(t *testing.T) {
	for _, c := range []struct{ a, b, added, removed string }{
		{"# T\n\none\n", "# T\n\none\ntwo\n", "two\n", ""},
		{"# T\n\none\n", "# T\n\nONE\ntwo\n", "ONE\ntwo\n", "one\n"},
		{"", "hello", "hello", ""},
		{"tail", "", "", "tail"},
	} {
		if added, removed := textAdded(c.a, c.b); added != c.added || removed != c.removed {
			t.Errorf("textAdded(%q, %q) = %q, %q; want %q, %q", c.a, c.b, added, removed, c.added, c.removed)
		}
	}
	got, _ := json.Marshal(stateChanges([]byte(`{"state":"active","events":1,"gone":true}`), []byte(`{"state": "paused", "events": 1, "paused": {"reason": "bank"}}`)))
	if want := `[{"field":"state","before":"active","after":"paused"},{"field":"paused","after":{"reason":"bank"}},{"field":"gone","before":true}]`; string(got) != want {
		t.Errorf("stateChanges: %s, want %s", got, want)
	}
	got, _ = json.Marshal(stateChanges([]byte(`{"state":"active"}`), []byte("not json\n")))
	if want := `[{"field":"","before":{"state":"active"},"after":"not json\n"}]`; string(got) != want {
		t.Errorf("a state file that is no JSON: %s, want %s", got, want)
	}
	a := `{"event":"run_created","timestamp":"2026-11-01T09:30:00.000Z","id":"r_1"}` + "\n" + `{"event":"milestone","timestamp":"2026-11-01T09:31:00.000Z","id":"r_2"}` + "\n"
	b := `{"event":"run_created","timestamp":"2026-11-01T09:30:00.000Z","id":"r_1"}` + "\n" + `{"event":"step_completed","timestamp":"2026-11-01T09:32:00.000Z","step":"do/1","id":"r_2"}` + "\n" + "torn"
	evs, removed := eventsAdded("finance", []byte(a), []byte(b))
	if len(evs) != 1 || evs[0].Type != "step_completed" || removed != 1 {
		t.Errorf("eventsAdded: %+v, %d removed", evs, removed)
	}
}
