// Package event is one line of a run's run.jsonl or a playbook's
// events.jsonl, and its CloudEvents form. It imports nothing of quire but
// the refusal object, so fold and render may use it.
//
// A line keeps the capsule's fields first, so `jq -r .event` works:
//
//	{"event":"step_completed","timestamp":"2026-11-01T09:30:12.345Z","step":"do/1/review","detail":"Reviewed 14 entries","id":"…_3","seq":1042,"subject":"workflow/close-the-month","actor":"agent-7","data":{}}
package event

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Line is one event line. Step is always written, as null where there is
// none, as the capsule's minimum requires.
type Line struct {
	Event        string  `json:"event"`
	Timestamp    string  `json:"timestamp"`
	Step         *string `json:"step"`
	Detail       string  `json:"detail"`
	Playbook     string  `json:"playbook,omitempty"`      // run_created: the definition's uid
	AuthorizedBy string  `json:"authorized_by,omitempty"` // run_created
	Reason       string  `json:"reason,omitempty"`        // archived
	ID           string  `json:"id,omitempty"`
	Seq          int64   `json:"seq,omitempty"`
	Subject      string  `json:"subject,omitempty"` // <type>/<name> of the definition
	Version      int     `json:"version,omitempty"` // the definition's version the run pinned
	Actor        string  `json:"actor,omitempty"`
	Run          string  `json:"run,omitempty"` // the run's id, on a run's events
	// RequestID is the request_id of the call that wrote the line, kept so
	// that a retry answers the first answer across processes and restarts.
	RequestID string          `json:"request_id,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
}

// MaxLine is the most one event line may hold, its newline included.
const MaxLine = 256 << 10

// MaxAhead is how far ahead of the server's clock an event's time may be:
// clocks of agents and servers differ by seconds, and a time further ahead
// would make every later event of its run, timed by the clock, go back. A
// line written by hand that is dated further ahead does not bind the
// events after it (they are timed by the clock), and quire check reports
// it.
const MaxAhead = 5 * time.Minute

// Marshal encodes the line as one JSON text ending in a newline.
func (l *Line) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(l); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Parse reads one line. It accepts the capsule's minimal form (timestamp to
// the minute, no seq or id).
func Parse(b []byte) (Line, error) {
	var l Line
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&l); err != nil {
		return l, fmt.Errorf("not a JSON object: %v", err)
	}
	if dec.More() {
		return l, fmt.Errorf("more than one JSON value on the line")
	}
	if l.Event == "" {
		return l, fmt.Errorf(`no "event" field`)
	}
	if l.Timestamp == "" {
		return l, fmt.Errorf(`no "timestamp" field`)
	}
	if _, err := ParseTime(l.Timestamp); err != nil {
		return l, fmt.Errorf(`"timestamp" %q is not a time: %v`, l.Timestamp, err)
	}
	if len(l.Data) > 0 && l.Data[0] != '{' {
		return l, fmt.Errorf(`"data" is not an object`)
	}
	return l, nil
}

// ParseTime reads RFC 3339 times, and the capsule's minute form
// YYYY-MM-DDTHH:MM (taken as UTC).
func ParseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02T15:04", s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("expected an RFC 3339 time such as 2026-11-01T09:30:12Z")
}

// FormatTime is the form quire writes: UTC, milliseconds.
func FormatTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// Cloud is an event in CloudEvents form, as reads present it and as a
// page's fold receives it.
type Cloud struct {
	SpecVersion       string          `json:"specversion"`
	ID                string          `json:"id"`
	Type              string          `json:"type"`
	Source            string          `json:"source"`
	Subject           string          `json:"subject,omitempty"`
	Time              string          `json:"time,omitempty"`
	DataContentType   string          `json:"datacontenttype,omitempty"`
	CorrelationID     string          `json:"correlationid,omitempty"`
	Caller            string          `json:"caller,omitempty"`
	DefinitionVersion int             `json:"definitionversion,omitempty"`
	Seq               int64           `json:"seq"`
	Data              json.RawMessage `json:"data,omitempty"`
	// Committed is set on the answer of a write at a boundary: false when
	// the event is recorded but its commit is left to the next writer.
	Committed *bool `json:"committed,omitempty"`
}

// ToCloud presents a line in CloudEvents form: type is the event, time its
// timestamp, source the playbook's address, correlationid the run's id,
// caller the actor. data is the line's data with the line's own step and
// detail set in it where the line has them: they are the event's, and win
// over keys of the same name the caller put in data; every other key of
// data stays as the caller wrote it, in its order.
func (l *Line) ToCloud(playbook string) Cloud {
	c := Cloud{
		SpecVersion: "1.0", ID: l.ID, Type: l.Event, Source: "playbooks/" + playbook,
		Subject: l.Subject, Time: l.Timestamp, CorrelationID: l.Run, Caller: l.Actor,
		DefinitionVersion: l.Version, Seq: l.Seq,
	}
	if t, err := ParseTime(l.Timestamp); err == nil {
		c.Time = FormatTime(t)
	}
	var own []member
	if l.Step != nil {
		s, _ := json.Marshal(*l.Step)
		own = append(own, member{"step", s})
	}
	if l.Detail != "" {
		s, _ := json.Marshal(l.Detail)
		own = append(own, member{"detail", s})
	}
	data := l.Data
	if len(own) > 0 {
		data = withMembers(data, own)
	}
	if len(data) > 0 {
		c.Data = data
		c.DataContentType = "application/json"
	}
	return c
}

type member struct {
	key string
	val json.RawMessage
}

// withMembers sets each of set in the JSON object obj: in its place where
// obj has the key, at the end where it does not. obj's other members keep
// their text and order.
func withMembers(obj json.RawMessage, set []member) json.RawMessage {
	var members []member
	if inner := bytes.TrimSpace(obj); len(inner) > 0 {
		dec := json.NewDecoder(bytes.NewReader(inner))
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return obj // Parse admits only objects; leave anything else be
		}
		for dec.More() {
			t, err := dec.Token()
			if err != nil {
				return obj
			}
			key, _ := t.(string)
			var val json.RawMessage
			if err := dec.Decode(&val); err != nil {
				return obj
			}
			members = append(members, member{key, val})
		}
	}
	for _, s := range set {
		found := false
		for i := range members {
			if members[i].key == s.key {
				members[i].val, found = s.val, true
			}
		}
		if !found {
			members = append(members, s)
		}
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(m.val)
	}
	buf.WriteByte('}')
	return buf.Bytes()
}
