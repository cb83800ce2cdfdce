package activity

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"time"

	"quire/ledger/comments"
	"quire/words/event"
	"quire/words/refusal"
)

// DefinitionBroken is the playbook event that says a definition's saved
// document no longer parses or checks; its subject is <type>/<name>.
// Nothing records it yet; the activity reads it when it is there.
const DefinitionBroken = "definition_broken"

// Item is a row of the activity.
type Item struct {
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

// Page is list_activity's answer.
type Page struct {
	Items []*Item `json:"items"`
}

// Run is a run as the activity reads it: its index entry's playbook and
// id, and what its run.state.json says.
type Run struct {
	Playbook, ID string
	// Type, Name and Version are the definition it carries out.
	Type, Name string
	Version    int
	// AuthorizedBy is run_started's actor, Executor run_ended's.
	AuthorizedBy, Executor string
	// Started and Ended are times as the history writes them; Ended is ""
	// while the run goes on.
	Started, Ended string
	Status, Reason string
}

// Source is the vault as the activity reads it; the ledger implements it.
type Source interface {
	// Playbooks are the playbooks whose rows the feed holds: playbook
	// alone (refused, not_found, when there is no such playbook), or
	// every playbook of the index when playbook is "".
	Playbooks(playbook string) ([]string, error)
	// History opens the playbook's history, its events.jsonl: an error
	// that is fs.ErrNotExist when it has none.
	History(playbook string) (io.ReadCloser, error)
	// Runs are the runs of the playbook ("" every playbook's), in the
	// index's order.
	Runs(playbook string) ([]Run, error)
	// Comments are the comments of the playbook ("" the organization's
	// own), in the order they were made.
	Comments(playbook string) ([]*comments.Comment, error)
	// Seen opens the member's seen marks, SeenPath(member): an error that
	// is fs.ErrNotExist when there are none.
	Seen(member string) (io.ReadCloser, error)
}

// Query is what list_activity asks.
type Query struct {
	// Playbook keeps that playbook's rows alone; "" every playbook's and
	// the organization's.
	Playbook string
	// Since, an RFC 3339 time, keeps the rows strictly after it.
	Since string
	// Limit is 1 to 1000 rows, 50 when 0.
	Limit int
	// Member, when set, marks each row seen or not for that member.
	Member string
}

// List is list_activity's answer to q: the rows newest first. It refuses
// a limit, a since and a member that are not one (/limit, /since,
// /member), and a playbook that the source refuses.
func List(src Source, q Query) (*Page, error) {
	limit := q.Limit
	if limit == 0 {
		limit = 50
	}
	if limit < 1 || limit > 1000 {
		return nil, refusal.Invalid("/limit", "limit is 1 to 1000")
	}
	var since time.Time
	if q.Since != "" {
		t, err := time.Parse(time.RFC3339Nano, q.Since)
		if err != nil {
			return nil, refusal.Invalid("/since", "%q is not an RFC 3339 time such as 2026-11-01T09:30:00Z", q.Since)
		}
		since = t
	}
	var marks Marks
	if q.Member != "" {
		if err := CheckMember(q.Member); err != nil {
			return nil, err
		}
		var err error
		if marks, err = readSeen(src, q.Member); err != nil {
			return nil, err
		}
	}
	playbooks, err := src.Playbooks(q.Playbook)
	if err != nil {
		return nil, err
	}
	ac := &rows{}
	for _, p := range playbooks {
		if err := ac.history(src, p); err != nil {
			return nil, err
		}
		if err := ac.comments(src, p); err != nil {
			return nil, err
		}
	}
	if q.Playbook == "" {
		if err := ac.comments(src, ""); err != nil {
			return nil, err
		}
	}
	if err := ac.runs(src, q.Playbook); err != nil {
		return nil, err
	}
	ac.sort()
	out := &Page{Items: []*Item{}}
	for _, it := range ac.items {
		if len(out.Items) == limit {
			break
		}
		if q.Since != "" && !it.at.After(since) {
			break // newest first: the rest are older still
		}
		if marks != nil {
			seen := marks.Seen(it.Address, it.at)
			it.Seen = &seen
		}
		out.Items = append(out.Items, it)
	}
	return out, nil
}

// rows gathers the rows, unsorted.
type rows struct {
	items []*Item
}

func (ac *rows) add(it Item, at string) {
	t, err := event.ParseTime(at)
	if err != nil {
		return // a time written by hand that does not parse names no row
	}
	it.at, it.At, it.ord = t, event.FormatTime(t), len(ac.items)
	ac.items = append(ac.items, &it)
}

// sort puts the rows newest first; rows at the same time, the one added
// last first.
func (ac *rows) sort() {
	sort.SliceStable(ac.items, func(i, j int) bool {
		x, y := ac.items[i], ac.items[j]
		if !x.at.Equal(y.at) {
			return x.at.After(y.at)
		}
		return x.ord > y.ord
	})
}

// saved is the data of definition_saved that names its row.
type saved struct {
	Type    string `json:"type"`
	Name    string `json:"name"`
	Version int    `json:"version"`
}

// history adds the rows of the playbook's history.
func (ac *rows) history(src Source, p string) error {
	f, err := src.History(p)
	if errors.Is(err, fs.ErrNotExist) {
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
		if it, ok := historyRow(p, &ln); ok {
			ac.add(it, ln.Timestamp)
		}
	}
	return sc.Err()
}

// historyRow is the row a line of playbook p's history names, if any.
func historyRow(p string, ln *event.Line) (Item, bool) {
	it := Item{Playbook: p, Actor: ln.Actor}
	switch ln.Event {
	case event.DefinitionSaved:
		var v saved
		if json.Unmarshal(ln.Data, &v) != nil || v.Type == "" {
			return it, false
		}
		it.Kind = "definition_saved"
		it.Address = fmt.Sprintf("%s/definitions/%s/%s/%d", p, v.Type, v.Name, v.Version)
		it.Summary = fmt.Sprintf("Saved %s/%s version %d", v.Type, v.Name, v.Version)
	case DefinitionBroken:
		if ln.Subject == "" {
			return it, false
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
			return it, false
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
		return it, false
	}
	return it, true
}

// runs adds the rows of the runs of playbook ("" every playbook's).
func (ac *rows) runs(src Source, playbook string) error {
	runs, err := src.Runs(playbook)
	if err != nil {
		return err
	}
	for _, r := range runs {
		addr := r.Playbook + "/runs/" + r.ID
		what := fmt.Sprintf("Run of %s/%s version %d", r.Type, r.Name, r.Version)
		ac.add(Item{Address: addr, Kind: "run_started", Playbook: r.Playbook, Actor: r.AuthorizedBy,
			Summary: what + " started"}, r.Started)
		if r.Ended != "" {
			sum := what + " " + r.Status
			if r.Reason != "" {
				sum += ": " + r.Reason
			}
			ac.add(Item{Address: addr, Kind: "run_ended", Playbook: r.Playbook, Actor: r.Executor, Summary: sum}, r.Ended)
		}
	}
	return nil
}

// comments adds the rows of the comments of playbook ("" the
// organization's own).
func (ac *rows) comments(src Source, playbook string) error {
	cs, err := src.Comments(playbook)
	if err != nil {
		return err
	}
	for _, c := range cs {
		ac.add(Item{Address: c.Self, Kind: "comment_made", Playbook: c.Playbook, Actor: c.Author,
			Summary: fmt.Sprintf("Comment on %s: %s", c.Address, clipText(c.Text, 120))}, c.Created)
		if c.Resolved {
			ac.add(Item{Address: c.Self, Kind: "comment_resolved", Playbook: c.Playbook, Actor: c.ResolvedBy,
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
