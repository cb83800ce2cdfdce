package ledger

// The organization's activity (addresses.md): list_activity names each row
// by its address, newest first; mark_activity_seen keeps what a member has
// seen.
//
// The rows and where they come from:
//
//	kind               address                                        from
//	run_started        <playbook>/runs/<run_id>                       the index and run.state.json's started
//	run_ended          <playbook>/runs/<run_id>                       run.state.json's ended
//	definition_saved   <playbook>/definitions/<type>/<name>/<version> definition_saved in events.jsonl
//	definition_broken  <playbook>/<type>/<name>                       definition_broken in events.jsonl
//	playbook_created   playbooks/<playbook>/<at ms>                   playbook_created in events.jsonl
//	playbook_updated   playbooks/<playbook>/<at ms>                   playbook_updated, playbook_page_saved
//	comment_made       <playbook>/comments/<id>, org/comments/<id>    the comment's file: created, author
//	comment_resolved   the same                                       the comment's file: resolved_at, resolved_by
//
// Decisions where the spec is silent:
//
//   - The actor of run_started is the run's authorized_by (the actor of its
//     run_created); of run_ended, its executor, since run.state.json does
//     not say who ended it and reading every run's log for one actor is not
//     cheap.
//   - A definition is broken when its saved document no longer parses or
//     checks. Nothing records that yet: a later check (of a page against a
//     changed module, say) is to append definition_broken with the
//     definition's type/name as its subject, and the activity reads it.
//     Re-checking every document on every list would not be cheap.
//   - A definition retired is not a row: the activity's forms name none.
//   - since keeps the rows strictly after it, so the at of the newest row
//     seen passes back as since for what is new. limit is 1 to 1,000, 50
//     when left out. Rows at the same millisecond keep the order they
//     happened in, reversed.
//   - Without playbook the rows are every playbook's and the organization's
//     own comments; with playbook, that playbook's alone.
//   - A seen mark is one line of org/members/<member>/seen.jsonl, {"at":
//     time of the mark, "items": [address…]}, appended in one write and
//     committed as the member. A row is seen when a mark of its address is
//     at or after the row's at: a run seen when it started is not seen
//     once it ends, nor a comment once resolved. Addresses compare without
//     regard to case, as the ids of comments may be written either way.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"quire/runfolder"
	"quire/vault"
	"quire/words/address"
	"quire/words/event"
	"quire/words/refusal"
)

// DefinitionBroken is the playbook event that says a definition's saved
// document no longer parses or checks; its subject is <type>/<name>.
// Nothing records it yet; the activity reads it when it is there.
const DefinitionBroken = "definition_broken"

type ListActivityArgs struct {
	Playbook string `json:"playbook,omitempty" jsonschema:"only this playbook's rows; every playbook's and the organization's when left out"`
	Since    string `json:"since,omitempty" jsonschema:"RFC 3339 time: only rows after it"`
	Limit    int    `json:"limit,omitempty" range:"1,1000" jsonschema:"at most this many rows, 1 to 1000 (default 50)"`
	Member   string `json:"member,omitempty" jsonschema:"a member's id: mark each row with whether this member has seen it"`
}

type ActivityItem struct {
	Address  string `json:"address"`
	Kind     string `json:"kind"`
	Playbook string `json:"playbook,omitempty"`
	At       string `json:"at"`
	Actor    string `json:"actor"`
	Summary  string `json:"summary"`
	// Seen is set when list_activity was given a member.
	Seen *bool `json:"seen,omitempty"`

	at  time.Time
	ord int
}

type ActivityPage struct {
	Items []*ActivityItem `json:"items"`
}

type MarkSeenArgs struct {
	Member    string   `json:"member" jsonschema:"the member's id: 1 to 64 ASCII letters, digits, underscores and hyphens"`
	Items     []string `json:"items" jsonschema:"the addresses of the rows seen, as list_activity gives them"`
	RequestID string   `json:"request_id,omitempty" jsonschema:"makes a retry safe: a call repeating an id answers the first call's answer and writes nothing (HTTP: the Idempotency-Key header)"`
}

type SeenMarks struct {
	Member string   `json:"member"`
	At     string   `json:"at"`
	Items  []string `json:"items"`
}

type seenLine struct {
	At    string   `json:"at"`
	Items []string `json:"items"`
}

func seenPath(member string) string { return path.Join("org", "members", member, "seen.jsonl") }

// activity gathers the rows, unsorted.
type activity struct {
	items []*ActivityItem
}

func (ac *activity) add(it ActivityItem, at string) {
	t, err := event.ParseTime(at)
	if err != nil {
		return // a time written by hand that does not parse names no row
	}
	it.at, it.At, it.ord = t, event.FormatTime(t), len(ac.items)
	ac.items = append(ac.items, &it)
}

func (l *Ledger) playbookActivity(ac *activity, p string) error {
	f, err := os.Open(l.v.Abs(path.Join(playbookDir(p), "events.jsonl")))
	if isNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), event.MaxLine+1)
	for sc.Scan() {
		ln, err := event.Parse(sc.Bytes())
		if err != nil {
			continue
		}
		it := ActivityItem{Playbook: p, Actor: ln.Actor}
		switch ln.Event {
		case event.DefinitionSaved:
			var v defVersion
			if json.Unmarshal(ln.Data, &v) != nil || v.Type == "" {
				continue
			}
			it.Kind = "definition_saved"
			it.Address = fmt.Sprintf("%s/definitions/%s/%s/%d", p, v.Type, v.Name, v.Version)
			it.Summary = fmt.Sprintf("Saved %s/%s version %d", v.Type, v.Name, v.Version)
		case DefinitionBroken:
			if ln.Subject == "" {
				continue
			}
			it.Kind = "definition_broken"
			it.Address = p + "/" + ln.Subject
			it.Summary = fmt.Sprintf("%s is broken", ln.Subject)
			if ln.Detail != "" {
				it.Summary += ": " + ln.Detail
			}
		case event.PlaybookCreated, event.PlaybookUpdated, event.PlaybookPageSaved:
			t, err := event.ParseTime(ln.Timestamp)
			if err != nil {
				continue
			}
			it.Kind = "playbook_updated"
			if ln.Event == event.PlaybookCreated {
				it.Kind = "playbook_created"
			}
			it.Address = fmt.Sprintf("playbooks/%s/%d", p, t.UnixMilli())
			it.Summary = ln.Detail
			if it.Summary == "" {
				it.Summary = strings.ReplaceAll(ln.Event, "_", " ")
			}
		default:
			continue
		}
		ac.add(it, ln.Timestamp)
	}
	return sc.Err()
}

func (l *Ledger) runActivity(ac *activity, playbook string) error {
	runs, err := l.v.Find(func(e *vault.Entry) bool {
		return e.Type == "playbook-run" && (playbook == "" || e.Playbook == playbook)
	})
	if err != nil {
		return err
	}
	for _, e := range runs {
		st, err := runfolder.Folder{V: l.v, Rel: e.Path}.LoadState()
		if err != nil {
			return fmt.Errorf("the activity of run %s: %w", e.UID, err)
		}
		addr := e.Playbook + "/runs/" + e.UID
		what := fmt.Sprintf("Run of %s/%s version %d", st.Type, st.Name, st.Version)
		ac.add(ActivityItem{Address: addr, Kind: "run_started", Playbook: e.Playbook, Actor: st.AuthorizedBy,
			Summary: what + " started"}, st.Started)
		if st.Ended != "" {
			sum := what + " " + st.Status
			if st.Reason != "" {
				sum += ": " + st.Reason
			}
			ac.add(ActivityItem{Address: addr, Kind: "run_ended", Playbook: e.Playbook, Actor: st.Executor, Summary: sum}, st.Ended)
		}
	}
	return nil
}

func (l *Ledger) commentActivity(ac *activity, playbook string) error {
	cs, err := l.comments(playbook)
	if err != nil {
		return err
	}
	for _, c := range cs {
		ac.add(ActivityItem{Address: c.Self, Kind: "comment_made", Playbook: c.Playbook, Actor: c.Author,
			Summary: fmt.Sprintf("Comment on %s: %s", c.Address, clipText(c.Text, 120))}, c.Created)
		if c.Resolved {
			ac.add(ActivityItem{Address: c.Self, Kind: "comment_resolved", Playbook: c.Playbook, Actor: c.ResolvedBy,
				Summary: fmt.Sprintf("Resolved (%s) the comment on %s", c.How, c.Address)}, c.ResolvedAt)
		}
	}
	return nil
}

// clipText is the first line of s, cut to n characters with an ellipsis.
func clipText(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i]) + " …"
	}
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// seenMarks reads a member's marks: each address (in lowercase) and the
// latest time it was marked.
func (l *Ledger) seenMarks(member string) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	f, err := os.Open(l.v.Abs(seenPath(member)))
	if isNotExist(err) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var ln seenLine
		if json.Unmarshal(sc.Bytes(), &ln) != nil {
			continue // a torn last line is repaired by the next mark
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

func checkMember(member string) error {
	if !address.ValidMember(member) {
		return refusal.Invalid("/member", "%q is not a member's id: 1 to 64 ASCII letters, digits, underscores and hyphens", member)
	}
	return nil
}

func (l *Ledger) listActivity(_ context.Context, a *ListActivityArgs) (*ActivityPage, error) {
	limit := a.Limit
	if limit == 0 {
		limit = 50
	}
	if limit < 1 || limit > 1000 {
		return nil, refusal.Invalid("/limit", "limit is 1 to 1000")
	}
	var since time.Time
	if a.Since != "" {
		t, err := time.Parse(time.RFC3339Nano, a.Since)
		if err != nil {
			return nil, refusal.Invalid("/since", "%q is not an RFC 3339 time such as 2026-11-01T09:30:00Z", a.Since)
		}
		since = t
	}
	var marks map[string]time.Time
	if a.Member != "" {
		if err := checkMember(a.Member); err != nil {
			return nil, err
		}
		var err error
		if marks, err = l.seenMarks(a.Member); err != nil {
			return nil, err
		}
	}
	var playbooks []string
	if a.Playbook != "" {
		if _, err := l.readPlaybook(a.Playbook); err != nil {
			return nil, err
		}
		playbooks = []string{a.Playbook}
	} else {
		es, err := l.v.FindType("playbook", func(*vault.Entry) bool { return true })
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			playbooks = append(playbooks, e.Playbook)
		}
	}
	ac := &activity{}
	for _, p := range playbooks {
		if err := l.playbookActivity(ac, p); err != nil {
			return nil, err
		}
		if err := l.commentActivity(ac, p); err != nil {
			return nil, err
		}
	}
	if a.Playbook == "" {
		if err := l.commentActivity(ac, ""); err != nil {
			return nil, err
		}
	}
	if err := l.runActivity(ac, a.Playbook); err != nil {
		return nil, err
	}
	sort.SliceStable(ac.items, func(i, j int) bool {
		x, y := ac.items[i], ac.items[j]
		if !x.at.Equal(y.at) {
			return x.at.After(y.at)
		}
		return x.ord > y.ord
	})
	out := &ActivityPage{Items: []*ActivityItem{}}
	for _, it := range ac.items {
		if len(out.Items) == limit {
			break
		}
		if a.Since != "" && !it.at.After(since) {
			break // newest first: the rest are older still
		}
		if marks != nil {
			seen := false
			if t, ok := marks[strings.ToLower(it.Address)]; ok && !t.Before(it.at) {
				seen = true
			}
			it.Seen = &seen
		}
		out.Items = append(out.Items, it)
	}
	return out, nil
}

func (l *Ledger) markActivitySeen(_ context.Context, a *MarkSeenArgs) (*SeenMarks, error) {
	if err := checkMember(a.Member); err != nil {
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
	err := l.write(writeArgs{}, func(t *tx) error {
		now := l.Now()
		out.At = event.FormatTime(now)
		rel := seenPath(a.Member)
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
		line, err := json.Marshal(seenLine{At: out.At, Items: items})
		if err != nil {
			return err
		}
		if _, err := vault.AppendLine(abs, append(line, '\n')); err != nil {
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
