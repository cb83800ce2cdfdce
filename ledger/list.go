package ledger

import (
	"context"
	"sort"
	"strings"
	"time"

	"quire/runfolder"
	"quire/vault"
	"quire/words/event"
	"quire/words/refusal"
)

type ListRunsArgs struct {
	Playbook string `json:"playbook"`
	Type     string `json:"type,omitempty" enum:"@run_types"`
	Name     string `json:"name,omitempty"`
	Status   string `json:"status,omitempty" enum:"started,succeeded,failed,rejected" jsonschema:"the runs' status"`
	State    string `json:"state,omitempty" enum:"active,paused,complete,failed,archived" jsonschema:"the runs' state"`
	Executor string `json:"executor,omitempty" jsonschema:"the runs' executor"`
	Since    string `json:"since,omitempty" jsonschema:"started at or after: a date (YYYY-MM-DD, from its start, UTC) or an RFC 3339 time"`
	Until    string `json:"until,omitempty" jsonschema:"started at or before: a date (to its end, UTC) or an RFC 3339 time"`
	Search   string `json:"search,omitempty" jsonschema:"words the headline holds, in any case"`
	Limit    int    `json:"limit,omitempty" range:"1,1000" jsonschema:"1 to 1000 (default 50)"`
	Cursor   string `json:"cursor,omitempty" jsonschema:"the next of the page before"`
}

type RunPage struct {
	Runs []*Run `json:"runs"`
	Next string `json:"next,omitempty"`
	// Remaining is how many runs of the type, name and dates asked lie
	// past this page, when there is a next: status, state, executor and
	// the headline are read from each run as its page is made, so with
	// them it is the most there can be.
	Remaining int `json:"remaining,omitempty"`
}

// listRuns is the operation list_runs (ops.go).
func (l *Ledger) listRuns(ctx context.Context, a *ListRunsArgs) (*RunPage, error) {
	if _, err := l.readPlaybook(a.Playbook); err != nil {
		return nil, err
	}
	limit := a.Limit
	if limit == 0 {
		limit = 50
	}
	if limit < 1 || limit > 1000 {
		return nil, refusal.Invalid("/limit", "limit is 1 to 1000")
	}
	switch a.Status {
	case "", "started", "succeeded", "failed", "rejected":
	default:
		return nil, refusal.Invalid("/status", "%q is not started, succeeded, failed or rejected", a.Status)
	}
	switch a.State {
	case "", runfolder.Active, runfolder.Paused, runfolder.Complete, runfolder.Failed, runfolder.Archived:
	default:
		return nil, refusal.Invalid("/state", "%q is not active, paused, complete, failed or archived", a.State)
	}
	from, to, err := startedWithin(a.Since, a.Until)
	if err != nil {
		return nil, err
	}
	words := strings.Fields(strings.ToLower(a.Search))
	// Every line of the index, as the vault holds them (not copied: at
	// 100,000 runs the copy was most of a list), in the order of when
	// things were made (vault.Less): a range of dates is a range of them.
	all, err := l.v.Shared()
	if err != nil {
		return nil, err
	}
	listed := func(e *vault.Entry) bool {
		return e.Type == "playbook-run" && e.Playbook == a.Playbook &&
			(a.Type == "" || e.DefType == a.Type) && (a.Name == "" || e.Name == a.Name)
	}
	lo, hi := 0, len(all)
	if to != "" {
		hi = sort.Search(len(all), func(i int) bool { return all[i].Created > to })
	}
	if from != "" {
		lo = sort.Search(hi, func(i int) bool { return all[i].Created >= from })
	}
	start := hi - 1
	if a.Cursor != "" {
		// A cursor is the uid of the run the next page starts with, so a
		// page follows the one before it even when runs came between
		// them (a merge brings older runs into the middle of the list).
		at, ok, err := l.v.Lookup(a.Cursor)
		if err != nil {
			return nil, err
		}
		if !ok || at.Type != "playbook-run" || at.Playbook != a.Playbook {
			return nil, refusal.Invalid("/cursor", "%q is not a cursor this list gave", a.Cursor)
		}
		start = min(start, sort.Search(len(all), func(i int) bool { return vault.Less(&at, &all[i]) })-1)
	}
	out := &RunPage{Runs: []*Run{}}
	heads := l.headlines()
	var look *runLookup
	var aligned alignment
	if a.Status != "" || a.State != "" || a.Executor != "" || len(words) > 0 {
		if look = l.runFactsOf(); look != nil {
			aligned = look.align(all)
		}
	}
	var rendered []byte // headlines rendered here, to keep (runindex.go)
	for i := start; i >= lo; i-- {
		e := &all[i]
		if !listed(e) {
			continue
		}
		if len(out.Runs) == limit {
			out.Next = e.UID
			for j := lo; j <= i; j++ {
				if listed(&all[j]) {
					out.Remaining++
				}
			}
			break
		}
		var f runView
		if look != nil {
			// A run the facts say is not asked for is not read; one they
			// do not know is (runindex.go).
			if f = look.at(aligned, i, e.UID, len(words) > 0); f.known && !((a.Status == "" || f.Status == a.Status) &&
				(a.State == "" || f.State == a.State) && (a.Executor == "" || f.Executor == a.Executor)) {
				continue
			}
		}
		key := ""
		if len(words) > 0 && f.known {
			// Nor is one whose headline, kept for its state and page,
			// does not hold the words.
			if key = heads.key(e); key != "" && f.page == key {
				if !holdsLower(f.lower, words) {
					continue
				}
				key = "" // kept already
			}
		}
		st, err := runfolder.Folder{V: l.v, Rel: e.Path}.LoadState()
		if err != nil {
			return nil, err
		}
		r := runOf(*e, st)
		if !((a.Status == "" || r.Status == a.Status) && (a.State == "" || r.State == a.State) &&
			(a.Executor == "" || r.Executor == a.Executor)) {
			continue
		}
		if len(words) > 0 {
			h := heads.of(r)
			if key != "" && r.Type == e.DefType && r.Name == e.Name {
				rendered = append(rendered, factsOf(factsLine{UID: e.UID, Sum: stateSum(st), Page: key, Headline: h})...)
			}
			if !holdsWords(h, words) {
				continue
			}
		}
		out.Runs = append(out.Runs, r)
	}
	if len(rendered) > 0 && l.v.WritesRefused() == nil {
		if err := l.write(writeArgs{derived: true}, func(*tx) error {
			return appendDerived(l.runsPath("facts.jsonl"), rendered)
		}); err != nil {
			l.v.Logf("%s: %v; the headlines are rendered again", runsIndexDir, err)
		}
	}
	return out, nil
}

// startedWithin reads list_runs' since and until as bounds on the times runs
// started, in the form the index holds them (event.FormatTime): a date is
// its whole day, UTC.
func startedWithin(since, until string) (lo, hi string, err error) {
	bound := func(v, field string, end bool) (string, error) {
		if v == "" {
			return "", nil
		}
		if d, err := time.Parse("2006-01-02", v); err == nil {
			if end {
				d = d.Add(24*time.Hour - time.Millisecond)
			}
			return event.FormatTime(d), nil
		}
		t, err := event.ParseTime(v)
		if err != nil {
			return "", refusal.Invalid(field, "%q is not a date (YYYY-MM-DD) or an RFC 3339 time", v)
		}
		return event.FormatTime(t), nil
	}
	if lo, err = bound(since, "/since", false); err != nil {
		return "", "", err
	}
	if hi, err = bound(until, "/until", true); err != nil {
		return "", "", err
	}
	if lo != "" && hi != "" && lo > hi {
		return "", "", refusal.Invalid("/until", "%s is before since, %s", until, since)
	}
	return lo, hi, nil
}

// holdsWords says whether a headline holds every word (in lowercase).
func holdsWords(headline string, words []string) bool {
	return holdsLower(strings.ToLower(headline), words)
}

// holdsLower is holdsWords of a headline in lowercase.
func holdsLower(h string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(h, w) {
			return false
		}
	}
	return true
}
