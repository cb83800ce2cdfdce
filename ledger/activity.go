package ledger

// The activity operations (addresses.md): list_activity names each row by
// its address, newest first; mark_activity_seen keeps what a member has
// seen. The rows, their order, what is new for a member and the seen
// marks' file are package activity's (its doc says the decisions); here
// the handlers check their arguments and write a mark through the
// ledger's one transaction.

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"

	"quire/ledger/activity"
	"quire/ledger/comments"
	"quire/runfolder"
	"quire/vault"
	"quire/words/address"
	"quire/words/event"
	"quire/words/refusal"
)

type ListActivityArgs struct {
	Playbook string `json:"playbook,omitempty" jsonschema:"only this playbook's rows; every playbook's and the organization's when left out"`
	Since    string `json:"since,omitempty" jsonschema:"RFC 3339 time: only rows after it"`
	Limit    int    `json:"limit,omitempty" range:"1,1000" jsonschema:"at most this many rows, 1 to 1000 (default 50)"`
	Member   string `json:"member,omitempty" jsonschema:"a member's id: mark each row with whether this member has seen it"`
}

// ActivityItem is a row of the activity.
type ActivityItem = activity.Item

// ActivityPage is list_activity's answer.
type ActivityPage = activity.Page

type MarkSeenArgs struct {
	Member    string   `json:"member" jsonschema:"the member's id: 1 to 64 ASCII letters, digits, underscores and hyphens"`
	Items     []string `json:"items" jsonschema:"the addresses of the rows seen, as list_activity gives them"`
	RequestID string   `json:"request_id,omitempty" jsonschema:"makes a retry safe: a call repeating an id answers the first call's answer and writes nothing (HTTP: the Idempotency-Key header)"`
}

// SeenMarks is mark_activity_seen's answer.
type SeenMarks = activity.SeenMarks

// activitySource is the vault as package activity reads it.
type activitySource struct{ l *Ledger }

func (s activitySource) Playbooks(playbook string) ([]string, error) {
	if playbook != "" {
		if _, err := s.l.readPlaybook(playbook); err != nil {
			return nil, err
		}
		return []string{playbook}, nil
	}
	es, err := s.l.v.FindType("playbook", func(*vault.Entry) bool { return true })
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Playbook)
	}
	return out, nil
}

func (s activitySource) History(playbook string) (io.ReadCloser, error) {
	return os.Open(s.l.v.Abs(path.Join(playbookDir(playbook), "events.jsonl")))
}

func (s activitySource) Runs(playbook string) ([]activity.Run, error) {
	es, err := s.l.v.Find(func(e *vault.Entry) bool {
		return e.Type == "playbook-run" && (playbook == "" || e.Playbook == playbook)
	})
	if err != nil {
		return nil, err
	}
	out := make([]activity.Run, 0, len(es))
	for _, e := range es {
		st, err := runfolder.Folder{V: s.l.v, Rel: e.Path}.LoadState()
		if err != nil {
			return nil, fmt.Errorf("the activity of run %s: %w", e.UID, err)
		}
		out = append(out, activity.Run{Playbook: e.Playbook, ID: e.UID, Type: st.Type, Name: st.Name, Version: st.Version,
			AuthorizedBy: st.AuthorizedBy, Executor: st.Executor, Started: st.Started, Ended: st.Ended, Status: st.Status, Reason: st.Reason})
	}
	return out, nil
}

func (s activitySource) Comments(playbook string) ([]*comments.Comment, error) {
	return comments.List(commentStore{s.l.v}, playbook)
}

func (s activitySource) Seen(member string) (io.ReadCloser, error) {
	return os.Open(s.l.v.Abs(activity.SeenPath(member)))
}

func (l *Ledger) listActivity(_ context.Context, a *ListActivityArgs) (*ActivityPage, error) {
	return activity.List(activitySource{l}, activity.Query{Playbook: a.Playbook, Since: a.Since, Limit: a.Limit, Member: a.Member})
}

func (l *Ledger) markActivitySeen(ctx context.Context, a *MarkSeenArgs) (*SeenMarks, error) {
	if err := activity.CheckMember(a.Member); err != nil {
		return nil, err
	}
	if len(a.Items) == 0 {
		return nil, refusal.Invalid("/items", "items names at least one address of the activity")
	}
	items := make([]string, len(a.Items))
	for i, s := range a.Items {
		ad, err := address.ForActivity(s)
		if err != nil {
			return nil, atPath(err, fmt.Sprintf("/items/%d", i))
		}
		items[i] = ad.String()
	}
	out := &SeenMarks{Member: a.Member, Items: items}
	err := l.write(writeArgs{Request: requestIn(ctx)}, func(t *tx) error {
		t.answerWith(func() (any, error) { return out, nil })
		now := l.Now()
		out.At = event.FormatTime(now)
		rel := activity.SeenPath(a.Member)
		abs, err := l.v.Join(rel)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(path.Dir(abs), 0o755); err != nil {
			return err
		}
		if _, err := vault.RepairTail(abs); err != nil && !isNotExist(err) {
			return err
		}
		line, err := activity.Line(out.At, items)
		if err != nil {
			return err
		}
		if err := t.touch(rel, true); err != nil {
			return err
		}
		if _, err := vault.AppendLine(abs, line); err != nil {
			return err
		}
		t.commit([]string{rel}, vault.Signature{Name: a.Member, When: now}, vault.Message{Subject: fmt.Sprintf("org: %s saw %d of the activity", a.Member, len(items))})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
