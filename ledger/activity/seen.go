package activity

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"

	"quire/words/address"
	"quire/words/event"
	"quire/words/refusal"
)

// SeenMarks is mark_activity_seen's answer: the mark written.
type SeenMarks struct {
	Member string   `json:"member"`
	At     string   `json:"at"`
	Items  []string `json:"items"`
}

// seenLine is a line of seen.jsonl.
type seenLine struct {
	At    string   `json:"at"`
	Items []string `json:"items"`
}

// SeenPath is where a member's seen marks live, from the vault's root.
func SeenPath(member string) string { return path.Join("org", "members", member, "seen.jsonl") }

// CheckMember refuses, at /member, what is not a member's id.
func CheckMember(member string) error {
	if !address.ValidMember(member) {
		return refusal.Invalid("/member", "%q is not a member's id: 1 to 64 ASCII letters, digits, underscores and hyphens", member)
	}
	return nil
}

// Line is the line of seen.jsonl that marks items seen at at (a time as
// the history writes it), with its newline.
func Line(at string, items []string) ([]byte, error) {
	b, err := json.Marshal(seenLine{At: at, Items: items})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Marks are a member's marks: each address, in lowercase, and the latest
// time it was marked.
type Marks map[string]time.Time

// Seen says whether the row of address at at is seen: marked at or after
// at.
func (m Marks) Seen(address string, at time.Time) bool {
	t, ok := m[strings.ToLower(address)]
	return ok && !t.Before(at)
}

// ReadMarks reads a member's seen.jsonl. A line that does not decode (a
// torn last line is repaired by the next mark) or whose at does not parse
// is passed over; a line longer than 16 MiB stops it.
func ReadMarks(r io.Reader) (Marks, error) {
	out := Marks{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var ln seenLine
		if json.Unmarshal(sc.Bytes(), &ln) != nil {
			continue
		}
		t, err := event.ParseTime(ln.At)
		if err != nil {
			continue
		}
		for _, a := range ln.Items {
			k := strings.ToLower(a)
			if t.After(out[k]) {
				out[k] = t
			}
		}
	}
	return out, sc.Err()
}

// readSeen reads the member's marks from the source: none when there is
// no file.
func readSeen(src Source, member string) (Marks, error) {
	f, err := src.Seen(member)
	if errors.Is(err, fs.ErrNotExist) {
		return Marks{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadMarks(f)
}
