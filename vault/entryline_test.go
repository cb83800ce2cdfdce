package vault

import (
	"encoding/json"
	"testing"
)

// The lines quire writes are read by ownEntry, every field and every
// omitted one alike, and a line in any other form is left to
// encoding/json.
func TestOwnEntryReadsWhatQuireWrites(t *testing.T) {
	for _, e := range []Entry{
		{UID: "019a4012-7c3e-7d10-9b2a-000000000001", Type: "playbook-run", Path: "playbook-runs/close-019a4012-7c3e-7d10-9b2a-000000000001-2026-11-01", Playbook: "finance", Name: "close", DefType: "workflow", Created: "2026-11-01T07:00:00.000Z"},
		{UID: "p1", Type: "project", Path: "projects/ops.md", Name: "Operations", Created: "2026-11-01T07:00:00Z"},
		{UID: "u", Type: "t", Path: "p"},
		{UID: "u", Type: "t", Path: "p", Created: "c"},
		{UID: "u", Type: "", Path: ""},
	} {
		line, _ := json.Marshal(e)
		got, ok := ownEntry(line)
		if !ok || got != e {
			t.Errorf("%s: %+v %v", line, got, ok)
		}
	}
	for _, line := range []string{
		`{"uid":"a\"b","type":"t","path":"p"}`,          // an escape
		`{"uid":"é","type":"t","path":"p"}`,             // not ASCII
		`{"type":"t","uid":"u","path":"p"}`,             // another order
		`{"UID":"u","type":"t","path":"p"}`,             // another case
		`{"uid":"u", "type":"t","path":"p"}`,            // a space
		`{"uid":"u","type":"t","path":"p","name":""}`,   // an empty optional field
		`{"uid":"u","type":"t","path":"p","extra":"x"}`, // a key of no field
		`{"uid":"u","type":"t"}`,                        // a field missing
		`{"uid":"u","type":"t","path":"p","name":1}`,    // not a string
		`{"uid":"u","type":"t","path":"p"`,
	} {
		if e, ok := ownEntry([]byte(line)); ok {
			t.Errorf("%s read as its own: %+v", line, e)
		}
	}
}

// Whatever ownEntry reads, encoding/json reads the same: the index means
// one thing whichever reader took a line.
func FuzzOwnEntryIsJSONs(f *testing.F) {
	for _, s := range []string{
		`{"uid":"019a4012-7c3e-7d10-9b2a-000000000001","type":"playbook-run","path":"playbook-runs/close-019a4012-7c3e-7d10-9b2a-000000000001-2026-11-01","playbook":"finance","name":"close","definition_type":"workflow","created":"2026-11-01T07:00:00.000Z"}`,
		`{"uid":"p1","type":"project","path":"projects/ops.md","name":"Operations","created":"2026-11-01T07:00:00Z"}`,
		`{"uid":"u","type":"t","path":"p","created":"c"}`,
		`{"uid":"u","type":"t","path":"p","name":""}`,
		`{"uid":"a\"b","type":"t","path":"p"}`,
		`{"UID":"u","type":"t","path":"p"}`,
		`{"uid":"u","type":"","path":""}`,
		`{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, ok := ownEntry(line)
		if !ok {
			return
		}
		var want Entry
		if err := json.Unmarshal(line, &want); err != nil {
			t.Fatalf("%q: read as its own (%+v), but encoding/json refuses it: %v", line, got, err)
		}
		if got != want {
			t.Fatalf("%q: %+v, encoding/json %+v", line, got, want)
		}
	})
}
