package ledger

import (
	"bufio"
	"context"
	"os"
	"path"
	"strconv"
	"strings"

	"quire/runfolder"
	"quire/words/address"
	"quire/words/event"
	"quire/words/refusal"
)

// Event is an event as reads present it: CloudEvents form.
type Event = event.Cloud

func eventOf(playbook string, ln *event.Line) Event { return ln.ToCloud(playbook) }

type ListEventsArgs struct {
	Playbook string `json:"playbook"`
	RunID    string `json:"run_id,omitempty" jsonschema:"only this run's events"`
	After    int64  `json:"after,omitempty" jsonschema:"the seq to read after; 0 reads from the start"`
	Limit    int    `json:"limit,omitempty" range:"1,1000" jsonschema:"at most this many, 1 to 1000 (default 100)"`
}

type EventPage struct {
	Events []Event `json:"events"`
	// Next is the after to pass for the next page; 0 when there is none.
	Next int64 `json:"next,omitempty"`
}

type GetEventArgs struct {
	Playbook string `json:"playbook"`
	EventID  string `json:"event_id"`
}

// listPlaybookEvents is the operation list_playbook_events (ops.go).
func (l *Ledger) listPlaybookEvents(ctx context.Context, a *ListEventsArgs) (*EventPage, error) {
	if _, err := l.readPlaybook(a.Playbook); err != nil {
		return nil, err
	}
	limit := a.Limit
	if limit == 0 {
		limit = 100
	}
	if limit < 1 || limit > 1000 {
		return nil, refusal.Invalid("/limit", "limit is 1 to 1000")
	}
	if a.After < 0 {
		return nil, refusal.Invalid("/after", "after is a seq, 0 or more")
	}
	out := &EventPage{Events: []Event{}}
	if a.RunID != "" {
		_, f, err := l.runFolder(a.Playbook, a.RunID)
		if err != nil {
			return nil, err
		}
		file := path.Join(f.Rel, runfolder.LogFile)
		if err := l.adoptLinesOf(a.Playbook, file); err != nil {
			return nil, err
		}
		err = l.hist.EachEvent(a.Playbook, file, func(ln *event.Line) error {
			if ln.Seq == 0 {
				return nil // written by hand, not numbered yet: quire reindex places it
			}
			if ln.Seq <= a.After {
				return nil
			}
			if len(out.Events) == limit {
				out.Next = out.Events[len(out.Events)-1].Seq
				return errStop
			}
			out.Events = append(out.Events, eventOf(a.Playbook, ln))
			return nil
		})
		if err != nil && err != errStop {
			return nil, err
		}
		return out, nil
	}
	if err := l.adoptAllOf(a.Playbook); err != nil {
		return nil, err
	}
	recs, err := l.History(a.Playbook, a.After, limit+1)
	if err != nil {
		return nil, err
	}
	for i := range recs {
		if i == limit {
			out.Next = recs[i-1].Seq
			break
		}
		out.Events = append(out.Events, eventOf(a.Playbook, &recs[i].Line))
	}
	return out, nil
}

// getEvent is the operation get_event (ops.go).
func (l *Ledger) getEvent(ctx context.Context, a *GetEventArgs) (*Event, error) {
	if !address.ValidEventID(a.EventID) {
		return nil, refusal.Invalid("/event_id", "%q is not an event id: a UUID, or a UUID, an underscore and a number from 1", a.EventID)
	}
	if runID, n, ok := strings.Cut(a.EventID, "_"); ok {
		// <run_id>_<n>: the nth event of the run's run.jsonl;
		// <playbook uid>_<n>: the nth of the playbook's events.jsonl.
		want, _ := strconv.Atoi(n)
		file := ""
		_, f, err := l.runFolder(a.Playbook, strings.ToLower(runID))
		if err == nil {
			file = path.Join(f.Rel, runfolder.LogFile)
		} else if r, ok := refusal.As(err); !ok || r.Code != refusal.NotFound {
			return nil, err
		} else if p, perr := l.readPlaybook(a.Playbook); perr == nil && p.UID == strings.ToLower(runID) {
			file = path.Join(playbookDir(a.Playbook), "events.jsonl")
		}
		if file != "" {
			found, err := l.nthEvent(a.Playbook, file, want)
			if err != nil || found != nil {
				return found, err
			}
		}
		return nil, refusal.At(refusal.NotFound, "/event_id", "playbook %s has no event %s", a.Playbook, a.EventID)
	}
	if _, err := l.readPlaybook(a.Playbook); err != nil {
		return nil, err
	}
	fh, err := os.Open(l.v.Abs(path.Join(playbookDir(a.Playbook), "events.jsonl")))
	if err == nil {
		defer fh.Close()
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 64<<10), event.MaxLine+1)
		for sc.Scan() {
			ln, err := event.Parse(sc.Bytes())
			if err == nil && ln.ID == a.EventID {
				ev := eventOf(a.Playbook, &ln)
				return &ev, nil
			}
		}
	}
	return nil, refusal.At(refusal.NotFound, "/event_id", "playbook %s has no event %s", a.Playbook, a.EventID)
}

type stopErr struct{}

func (stopErr) Error() string { return "stop" }

var errStop error = stopErr{}
