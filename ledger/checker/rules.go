package checker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"quire/vault"
	"quire/words/event"
)

// lineRules are the capsule's rules of one run.jsonl line that parsed:
// the minimum fields (event and timestamp are the parser's; step, which may
// be null, and detail must be there too) and nothing after archived (rule
// 5). archivedAt is the line of the run's archived event, 0 before it.
func lineRules(raw []byte, ln *event.Line, lineNo int, archivedAt *int) []string {
	var msgs []string
	var fields struct {
		Step, Detail json.RawMessage
	}
	json.Unmarshal(raw, &fields)
	var missing []string
	if fields.Step == nil {
		missing = append(missing, `"step"`)
	}
	if fields.Detail == nil {
		missing = append(missing, `"detail"`)
	}
	if len(missing) > 0 {
		msgs = append(msgs, fmt.Sprintf("no %s field: every line holds the capsule's minimum fields event, timestamp, step (null where there is none) and detail", joinAnd(missing)))
	}
	if *archivedAt > 0 {
		msgs = append(msgs, fmt.Sprintf("rule 5: a %s line after the run was archived at line %d; archived runs are read-only", ln.Event, *archivedAt))
	} else if ln.Event == event.Archived {
		*archivedAt = lineNo
	}
	return msgs
}

func joinAnd(s []string) string {
	if len(s) == 2 {
		return s[0] + " or " + s[1]
	}
	return s[0]
}

// KeepWords says what a file the write guard claims keeps of its commit,
// as the refusal of a write over a hand edit and quire check both say it.
func KeepWords(k vault.Keep) string {
	if k == vault.Whole {
		return "it is written once and never changed"
	}
	return "its committed lines never change (append a correction instead)"
}

// handEditProblem is what quire check says of a hand edit.
func handEditProblem(he *vault.HandEdit) string {
	return "line " + strconv.Itoa(he.Line) + " differs from the commit (HEAD): " + KeepWords(he.Keep) + "; quire's next write to it is refused until quire janitor restores the committed part from HEAD"
}

// EventLines counts the whole lines of data (a log, an events.jsonl) that
// parse as events: what a playbook's history holds a record of.
func EventLines(data []byte) int64 {
	var n int64
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		if _, err := event.Parse(data[:i]); err == nil {
			n++
		}
		data = data[i+1:]
	}
	return n
}
