package event

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestLineKeepsTheCapsuleFieldsFirst(t *testing.T) {
	step := "do/1/review"
	l := Line{Event: StepCompleted, Timestamp: "2026-11-01T09:30:12.345Z", Step: &step, Detail: "Reviewed 14 entries",
		ID: "019a4012-7c41-7e22-8a10-1b2c3d4e5f60_3", Seq: 1042, Subject: "workflow/close-the-month", Actor: "agent-7", Data: json.RawMessage(`{}`)}
	raw, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"event":"step_completed","timestamp":"2026-11-01T09:30:12.345Z","step":"do/1/review","detail":"Reviewed 14 entries","id":"019a4012-7c41-7e22-8a10-1b2c3d4e5f60_3","seq":1042,"subject":"workflow/close-the-month","actor":"agent-7","data":{}}` + "\n"
	if string(raw) != want {
		t.Fatalf("got  %s\nwant %s", raw, want)
	}
}

func TestParseTakesTheCapsuleMinimalForm(t *testing.T) {
	l, err := Parse([]byte(`{"event": "run_created", "timestamp": "2026-04-14T09:30", "step": null, "playbook": "99341618", "authorized_by": "argus", "detail": "Run initialized"}`))
	if err != nil {
		t.Fatal(err)
	}
	if l.Event != RunCreated || l.Step != nil || l.Seq != 0 || l.AuthorizedBy != "argus" {
		t.Fatalf("%+v", l)
	}
	for _, bad := range []string{``, `[]`, `{"timestamp":"2026-01-01T00:00Z"}`, `{"event":"x"}`, `{"event":"x","timestamp":"yesterday"}`,
		`{"event":"x","timestamp":"2026-01-01T00:00:00Z","data":[1]}`, `{"event":"x","timestamp":"2026-01-01T00:00:00Z"} {}`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%s) accepted", bad)
		}
	}
}

func TestCloudForm(t *testing.T) {
	step := "do/0/draft"
	l := Line{Event: RunSucceeded, Timestamp: "2026-11-01T09:30", Step: &step, Detail: "done", ID: "r_4", Seq: 7,
		Subject: "workflow/x", Version: 3, Actor: "agent-7", Run: "r", Data: json.RawMessage(`{"output":{"a":1}}`)}
	c := l.ToCloud("finance")
	raw, _ := json.Marshal(c)
	want := `{"specversion":"1.0","id":"r_4","type":"run_succeeded","source":"playbooks/finance","subject":"workflow/x","time":"2026-11-01T09:30:00.000Z","datacontenttype":"application/json","correlationid":"r","caller":"agent-7","definitionversion":3,"seq":7,"data":{"output":{"a":1},"step":"do/0/draft","detail":"done"}}`
	if string(raw) != want {
		t.Fatalf("got  %s\nwant %s", raw, want)
	}
}

// FuzzLine: Parse never panics; a line it accepts marshals to one line that
// parses back to the same event.
func FuzzLine(f *testing.F) {
	for _, s := range []string{
		`{"event":"run_created","timestamp":"2026-04-14T09:30","step":null,"playbook":"p","authorized_by":"a","detail":"Run initialized"}`,
		`{"event":"step_completed","timestamp":"2026-11-01T09:30:12.345Z","step":"do/1/review","detail":"x","id":"u_3","seq":1042,"data":{}}`,
		`{"event":"archived","timestamp":"2026-11-01T09:30:12Z","reason":"done","step":null,"detail":""}`,
		`{"event":"x","timestamp":"2026-11-01T09:30:12+02:00","data":{"output":{"posts":[1,2]}}}`,
		`{"event":"x"`, `null`, `{"event":"","timestamp":""}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := Parse([]byte(s))
		if err != nil {
			return
		}
		raw, err := l.Marshal()
		if err != nil {
			return // data that is not valid JSON inside a RawMessage
		}
		if strings.Count(string(raw), "\n") != 1 {
			t.Fatalf("marshalled to more than one line: %q", raw)
		}
		back, err := Parse(raw[:len(raw)-1])
		if err != nil {
			t.Fatalf("%q does not parse back: %v", raw, err)
		}
		if back.Event != l.Event || back.Timestamp != l.Timestamp || back.Seq != l.Seq || back.ID != l.ID {
			t.Fatalf("round trip changed %+v into %+v", l, back)
		}
	})
}

func TestDepth(t *testing.T) {
	for raw, want := range map[string]int{`1`: 0, `"[{"`: 0, `[]`: 1, `{"a":[1,{"b":"]]]"}]}`: 3, `["\"[", [[]]]`: 3} {
		if got := Depth([]byte(raw)); got != want {
			t.Errorf("Depth(%s) = %d, want %d", raw, got, want)
		}
	}
}

func TestIsPrincipal(t *testing.T) {
	for s, want := range map[string]bool{
		"agent-7":                     true,
		"Ana María <ana@example.org>": true,
		strings.Repeat("a", 200):      true,
		strings.Repeat("a", 201):      false,
		strings.Repeat("é", 100):      true, // 200 bytes
		strings.Repeat("é", 101):      false,
		"":                            false,
		" \t ":                        false,
		"ana\nbo":                     false,
		"ana\r":                       false,
	} {
		if got := IsPrincipal(s); got != want {
			t.Errorf("IsPrincipal(%q) = %v, want %v", s, got, want)
		}
	}
}

// Recordable is every type of a run but those that create, archive and
// end it, in the capsule's order.
func TestRecordable(t *testing.T) {
	got := strings.Join(Recordable(), " ")
	want := "step_started step_completed step_failed step_retrying step_dead_letter step_in_doubt step_skipped pause_started pause_resumed " +
		"milestone_fired call_record verification_receipt compensation_started compensation_step_completed compensation_step_failed"
	if got != want {
		t.Errorf("Recordable() = %s\nwant           %s", got, want)
	}
}
