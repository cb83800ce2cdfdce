package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"quire/fold"
	"quire/fold/module"
	"quire/words/page"
	"quire/words/refusal"
	"quire/words/viewdiff"
)

// A page's dry run (issue 26): a definition's page as a new document
// would make it, seen before the document is saved. The document is
// checked as update_definition checks it, its module folds the whole
// history as a replay as of a run does (same fold, same limits, same
// reach), and its templates render over those views; the views are kept
// in memory alone, and nothing is written to the vault or its .quire/.

type TryPageArgs struct {
	Playbook string `json:"playbook"`
	Type     string `json:"type" enum:"@run_types"`
	Name     string `json:"name"`
	Source   string `json:"source" jsonschema:"the whole new document"`
}

// TriedPage is what try_page answers: the page as the new document would
// render it, its views, and how they differ from today's.
type TriedPage struct {
	// Version is the version the document would be saved as.
	Version int             `json:"version"`
	Page    TriedRender     `json:"page"`
	Views   json.RawMessage `json:"views,omitempty"`
	// Today is the state of today's views the changes are from: live, or
	// still being built (the changes are then from what they hold).
	Today   string        `json:"today,omitempty"`
	Changes []ViewChanges `json:"changes,omitempty"`
}

// TriedRender is the tried page rendered as render_page renders one:
// result over the latest run, runs over the tried views, and the
// standing of their fold (out_of_reach past the replay's reach, with no
// views, runs or changes).
type TriedRender struct {
	Result   string         `json:"result,omitempty"`
	Runs     string         `json:"runs,omitempty"`
	Standing *fold.Standing `json:"standing,omitempty"`
}

// ViewChanges are one view's changes from today's to the tried: JSON
// pointers inside the view ("" for the whole view, added or gone), none
// when it is the same.
type ViewChanges struct {
	View    string            `json:"view"`
	Changes []viewdiff.Change `json:"changes"`
}

// tryPage is the operation try_page (ops.go).
func (l *Ledger) tryPage(ctx context.Context, a *TryPageArgs) (*TriedPage, error) {
	d, err := l.definition(a.Playbook, a.Type, a.Name)
	if err != nil {
		return nil, err
	}
	if d.Retired {
		return nil, refusal.At(refusal.Conflict, "/name", "the %s %q is retired: its page renders nowhere", a.Type, a.Name)
	}
	if err := parseDocument(a.Type, a.Source); err != nil {
		return nil, err
	}
	info, err := l.inspect(ctx, a.Type, a.Source, true)
	if err != nil {
		return nil, err
	}
	if info.Page == nil {
		return nil, refusal.Invalid("/source", "the document has no page to try: give it a page key")
	}
	today, err := l.subjectOf(a.Playbook, a.Type, a.Name)
	if err != nil {
		return nil, err
	}
	// The page as it would stand once saved: the next version, with the
	// document's description and page.
	tried := *today
	tried.Version, tried.Description = d.latest().Version+1, description(a.Type, a.Source)
	tried.Page, tried.DataHash = info.Page, info.DataHash
	out := &TriedPage{Version: tried.Version}
	if info.Page.Data != nil {
		if err := l.tryViews(ctx, today, &tried, out); err != nil {
			return nil, err
		}
	}
	if info.Page.Result != nil {
		latest, err := latestRun(workTree{l}, today)
		if err != nil {
			return nil, err
		}
		if latest != nil {
			out.Page.Result = l.resultOf(&tried, latest, l.Now(), "")
		}
	}
	return out, nil
}

// tryViews folds the tried page's module over the whole history, renders
// its runs over what it gave, and tells the changes from today's views.
func (l *Ledger) tryViews(ctx context.Context, today, tried *subject, out *TriedPage) error {
	p := tried.Page
	js, lines, err := module.TranspileMapped(p.Data.Module)
	if err != nil {
		return fmt.Errorf("transpiling the module: %w", err)
	}
	ko, err := l.keeper(tried.Playbook)
	if err != nil {
		return err
	}
	newest, _, err := l.historyEnd(tried.Playbook)
	if err != nil {
		return err
	}
	views, st, err := ko.k.Replay(ctx, fold.Page{ID: tried.ID, Version: tried.Version, DataHash: tried.DataHash,
		Program: fold.NewProgram(js, lines, p.Data.ModuleLine, p.ViewMap()), Filters: pageFilters(p)}, newest)
	if err != nil {
		return err
	}
	out.Page.Standing = &st
	if st.State == fold.StateOutOfReach {
		return nil // no views, nor runs over them
	}
	out.Views = views
	if p.Runs != nil {
		out.Page.Runs = l.runsText(tried, views, st, l.Now(), "")
	}
	old := json.RawMessage(`{}`)
	if today.Page != nil && today.Page.Data != nil && !today.Retired {
		v, tst, err := l.viewsOf(ctx, today)
		if err != nil {
			return err
		}
		old, out.Today = v, tst.State
	}
	out.Changes, err = changesByView(old, views, tried.Page, today.Page)
	return err
}

// changesByView tells each view's changes, in the order the tried page
// declares its views, then those of today's page it no longer has.
func changesByView(old, new json.RawMessage, tried, today *page.Page) ([]ViewChanges, error) {
	var o, n any
	if err := json.Unmarshal(old, &o); err != nil {
		return nil, fmt.Errorf("today's views: %w", err)
	}
	if err := json.Unmarshal(new, &n); err != nil {
		return nil, fmt.Errorf("the tried views: %w", err)
	}
	byView := map[string][]viewdiff.Change{}
	for _, c := range viewdiff.Diff(o, n) {
		// Both sides are objects of views, so every pointer begins with
		// a view's name: a word of letters, digits and underscores, which
		// its token writes as it is. The rest is the place in the view.
		name, rest, inside := strings.Cut(strings.TrimPrefix(c.Pointer, "/"), "/")
		c.Pointer = ""
		if inside {
			c.Pointer = "/" + rest
		}
		byView[name] = append(byView[name], c)
	}
	var out []ViewChanges
	seen := map[string]bool{}
	add := func(p *page.Page) {
		if p == nil || p.Data == nil {
			return
		}
		for _, v := range p.Data.Views {
			if !seen[v.Name] {
				seen[v.Name] = true
				out = append(out, ViewChanges{View: v.Name, Changes: append([]viewdiff.Change{}, byView[v.Name]...)})
			}
		}
	}
	add(tried)
	add(today)
	return out, nil
}
