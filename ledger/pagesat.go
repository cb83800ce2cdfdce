package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"quire/fold"
	"quire/ledger/history"
	"quire/runfolder"
	"quire/vault"
	"quire/words/event"
	"quire/words/linediff"
	"quire/words/refusal"
	"quire/words/viewdiff"
)

// A page rendered as of a commit (render_page's at, diff_page) reads
// nothing of the work tree: the definition's document, the playbook's
// events.jsonl, the index and the runs' run.jsonl and run.state.json are
// read from the commit's tree (vault.Snapshot); its history is the one a
// rebuild numbers from that commit's event files (history.Replay); its
// views are folded by a keeper of their own; and its now is the commit's
// committer time. So one commit renders the same, byte for byte, on every
// clone and every day.
//
// The views of a commit are kept in .quire/views-at/<commit>/<playbook>/,
// as the live views are kept in .quire/views/<playbook>/: a commit never
// changes, so views kept for it (live, or stalled) are answered as they are,
// without reading its history again. They are derived state, like
// everything under .quire/, deleted at will (docs/vault-format.md).

// viewsAtDir is where the views of commits are kept, under .quire/.
const viewsAtDir = "views-at"

// commitFiles is pageFiles of one commit.
type commitFiles struct {
	l       *Ledger
	arg     string // the argument that named the commit: at, old or new
	snap    *vault.Snapshot
	entries []vault.Entry // the commit's index
	states  map[string]*runfolder.State
	hist    map[string]*commitHistory // by playbook
}

// atCommit opens the commit rev names (a commit's id, whole or
// abbreviated, or a ref), refusing what names none at the argument arg
// that gave it. Close it when done.
func (l *Ledger) atCommit(ctx context.Context, arg, rev string) (*commitFiles, error) {
	id, err := l.v.ResolveCommit(ctx, rev)
	if errors.Is(err, vault.ErrNoCommit) {
		return nil, refusal.At(refusal.NotFound, "/"+arg, "%s: %q names no commit of this vault: give a commit's id, whole or abbreviated, or a ref such as main", arg, rev)
	}
	if err != nil {
		return nil, err
	}
	snap, err := l.v.Snapshot(id)
	if err != nil {
		return nil, err
	}
	entries, err := snap.Entries()
	if err != nil {
		snap.Close()
		return nil, err
	}
	return &commitFiles{l: l, arg: arg, snap: snap, entries: entries, states: map[string]*runfolder.State{}, hist: map[string]*commitHistory{}}, nil
}

func (c *commitFiles) close() { c.snap.Close() }

// refuse refuses what the commit lacks, at the argument that named it.
func (c *commitFiles) refuse(code refusal.Code, format string, args ...any) error {
	return refusal.At(code, "/"+c.arg, "%s: commit %s %s", c.arg, c.snap.Commit.String()[:12], fmt.Sprintf(format, args...))
}

// subject finds a definition's subject as the commit holds it, and the
// definition of its version then; a definition the commit lacks is
// refused at /at.
func (c *commitFiles) subject(playbook, typ, name string) (*subject, *Definition, error) {
	data, ok, err := c.snap.ReadFile(path.Join(playbookDir(playbook), "events.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	defs := map[string]*defInfo{}
	if ok {
		if defs, err = definitionsIn(bytes.NewReader(data)); err != nil {
			return nil, nil, err
		}
	}
	d := defs[typ+"/"+name]
	if d == nil {
		return nil, nil, c.refuse(refusal.NotFound, "holds no %s %q in playbook %s", typ, name, playbook)
	}
	var es []vault.Entry
	for _, e := range c.entries {
		if e.Type == "definition" && e.Playbook == playbook {
			es = append(es, e)
		}
	}
	for _, s := range c.l.definedSubjects(playbook, defs, es) {
		if s.Type != typ || s.Name != name {
			continue
		}
		v := d.latest()
		out := definitionOf(playbook, d, v)
		src, err := c.l.v.ReadBlob(v.Blob)
		if err != nil {
			return nil, nil, fmt.Errorf("reading version %d of %s/%s: %w", v.Version, typ, name, err)
		}
		out.Source = string(src)
		c.l.withShape(out)
		return s, out, nil
	}
	return nil, nil, c.refuse(refusal.NotFound, "holds no document of %s %q that reads", typ, name)
}

func (c *commitFiles) now() time.Time { return c.snap.Meta.Committed }

func (c *commitFiles) runs(s *subject) ([]vault.Entry, error) {
	var out []vault.Entry
	for i := range c.entries {
		if ranOf(&c.entries[i], s) {
			out = append(out, c.entries[i])
		}
	}
	return out, nil
}

// state reads a run's run.state.json as the commit holds it (every
// boundary writes it and commits it); a run folder without one has a state
// of nothing.
func (c *commitFiles) state(e vault.Entry) (*runfolder.State, error) {
	if st, ok := c.states[e.Path]; ok {
		return st, nil
	}
	st := &runfolder.State{}
	data, ok, err := c.snap.ReadFile(path.Join(e.Path, runfolder.StateFile))
	if err != nil {
		return nil, err
	}
	if ok {
		if err := json.Unmarshal(data, st); err != nil {
			return nil, fmt.Errorf("%s at commit %s: %w", path.Join(e.Path, runfolder.StateFile), c.snap.Commit, err)
		}
	}
	c.states[e.Path] = st
	return st, nil
}

// views answers the subject's views as of the commit: those kept for it,
// or else folded from the commit's history into the keeper's folder of the
// commit.
func (c *commitFiles) views(ctx context.Context, s *subject) (json.RawMessage, fold.Standing, error) {
	l := c.l
	prog, err := l.program(s.Page, s.DataHash)
	if err != nil {
		return nil, fold.Standing{}, err
	}
	pool, err := l.foldPool()
	if err != nil {
		return nil, fold.Standing{}, err
	}
	l.views.mu.Lock()
	pageSize := l.views.pageSize
	l.views.mu.Unlock()
	h := c.hist[s.Playbook]
	if h == nil {
		h = &commitHistory{playbook: s.Playbook, load: func() ([]Record, error) { return c.history(s.Playbook) }}
		c.hist[s.Playbook] = h
	}
	k, err := fold.NewKeeper(fold.KeeperOptions{
		Dir:     l.v.Abs(path.Join(vault.QuireDir, viewsAtDir, c.snap.Commit.String(), s.Playbook)),
		History: h, Pool: pool, PageSize: pageSize, Log: l.v.Logger(),
	})
	if err != nil {
		return nil, fold.Standing{}, err
	}
	if err := k.Register(foldPage(s, prog)); err != nil {
		return nil, fold.Standing{}, err
	}
	views, st, err := k.Views(s.ID)
	if err == nil && st.State != fold.StateLive && st.State != fold.StateStalled {
		if _, err = k.CatchUp(ctx, s.ID); err == nil {
			views, st, err = k.Views(s.ID)
		}
	}
	st.Commit = c.snap.Commit.String()
	return views, st, err
}

// history is the playbook's history as a rebuild numbers it from the
// commit's event files: its events.jsonl, then its runs' run.jsonl in the
// order of the commit's index.
func (c *commitFiles) history(playbook string) ([]Record, error) {
	var files []history.File
	add := func(f history.File) error {
		data, ok, err := c.snap.ReadFile(f.Name)
		if ok {
			f.Data = data
			files = append(files, f)
		}
		return err
	}
	for _, e := range c.entries {
		if e.Type == "playbook" && e.Playbook == playbook {
			if err := add(history.File{Name: path.Join(playbookDir(playbook), "events.jsonl"), Owner: e.UID}); err != nil {
				return nil, err
			}
		}
	}
	for _, e := range c.entries {
		if e.Type != "playbook-run" || e.Playbook != playbook {
			continue
		}
		f := history.File{Name: path.Join(e.Path, runfolder.LogFile)}
		f.Owner, f.Run = historySource{c.l}.Owner(f.Name)
		st, err := c.state(e)
		if err != nil {
			return nil, err
		}
		if st.Type != "" {
			f.Subject, f.Version = st.Type+"/"+st.Name, st.Version
		}
		if err := add(f); err != nil {
			return nil, err
		}
	}
	return history.Replay(files)
}

// commitHistory is a commit's history as a keeper reads it, read from the
// commit's files the first time a keeper asks (views kept for the commit
// never ask).
type commitHistory struct {
	playbook string
	load     func() ([]Record, error)
	once     sync.Once
	recs     []Record
	err      error
}

func (h *commitHistory) Page(ctx context.Context, after int64, limit int) (fold.HistoryPage, error) {
	h.once.Do(func() { h.recs, h.err = h.load() })
	if h.err != nil {
		return fold.HistoryPage{}, h.err
	}
	n := int64(len(h.recs))
	var newestAt time.Time
	if n > 0 {
		newestAt, _ = event.ParseTime(h.recs[n-1].Line.Timestamp)
	}
	from, to := min(max(after, 0), n), min(max(after, 0)+int64(limit), n)
	return historyPage(h.playbook, h.recs[from:to], after, limit, n, newestAt)
}

// renderPageAt is render_page with at: the page as it stood at a commit.
func (l *Ledger) renderPageAt(ctx context.Context, a *RenderPageArgs) (*Definition, error) {
	if a.RunID != "" || len(a.SampleOutput) > 0 {
		return nil, refusal.Invalid("/at", "at does not go with run_id or sample_output: a page as of a commit renders over what the commit holds")
	}
	if err := checkDefinitionArgs(a.Playbook, a.Type, a.Name); err != nil {
		return nil, err
	}
	c, err := l.atCommit(ctx, "at", a.At)
	if err != nil {
		return nil, err
	}
	defer c.close()
	return l.pageAt(ctx, c, a.Playbook, a.Type, a.Name, a.Format)
}

// pageAt renders a definition's page as the commit c holds it.
func (l *Ledger) pageAt(ctx context.Context, c *commitFiles, playbook, typ, name, format string) (*Definition, error) {
	s, d, err := c.subject(playbook, typ, name)
	if err != nil {
		return nil, err
	}
	if s.Page == nil {
		return nil, c.refuse(refusal.NotFound, "holds the %s %q without a page", typ, name)
	}
	if s.Retired {
		return nil, c.refuse(refusal.Conflict, "holds the %s %q retired: its page rendered nowhere", typ, name)
	}
	d.Page, err = l.definitionPage(ctx, c, s, true, nil, format)
	return d, err
}

// DiffPageArgs are diff_page's arguments.
type DiffPageArgs struct {
	Playbook string `json:"playbook"`
	Type     string `json:"type" enum:"@definition_types"`
	Name     string `json:"name"`
	Old      string `json:"old" jsonschema:"a commit (id or ref)"`
	New      string `json:"new,omitempty" jsonschema:"a commit; default: now"`
}

// PageDiff is what changed between two renders of a page: its Markdown
// line by line, and the values of its views that changed.
type PageDiff struct {
	Old      string          `json:"old" jsonschema:"the old commit's id"`
	New      string          `json:"new,omitempty" jsonschema:"the new commit's id; none for the vault as it stands"`
	Markdown []linediff.Line `json:"markdown" jsonschema:"the page's Markdown (# result, # runs), line by line: op ' ', '-' or '+'"`
	Views    []ViewDiff      `json:"views" jsonschema:"the views that changed"`
}

// ViewDiff is one view's values that changed, by JSON pointers within
// the view.
type ViewDiff struct {
	View    string            `json:"view"`
	Changes []viewdiff.Change `json:"changes"`
}

// diffPage is the operation diff_page (ops.go).
func (l *Ledger) diffPage(ctx context.Context, a *DiffPageArgs) (*PageDiff, error) {
	if a.Old == "" {
		return nil, refusal.Invalid("/old", "old is a commit to render the page as of: its id, whole or abbreviated, or a ref")
	}
	oldPage, oldID, err := l.pageOfCommit(ctx, a, "old", a.Old)
	if err != nil {
		return nil, err
	}
	var newPage *PageView
	newID := ""
	if a.New != "" {
		newPage, newID, err = l.pageOfCommit(ctx, a, "new", a.New)
	} else {
		var d *Definition
		if d, err = l.renderPage(ctx, &RenderPageArgs{Playbook: a.Playbook, Type: a.Type, Name: a.Name}); err == nil {
			newPage = d.Page
		}
	}
	if err != nil {
		return nil, err
	}
	views, err := diffViews(oldPage.Views, newPage.Views)
	if err != nil {
		return nil, err
	}
	return &PageDiff{Old: oldID, New: newID, Markdown: linediff.Diff(oldPage.Markdown(), newPage.Markdown()), Views: views}, nil
}

// pageOfCommit renders the page of a's definition as of the commit rev,
// which the argument arg (old or new) gave.
func (l *Ledger) pageOfCommit(ctx context.Context, a *DiffPageArgs, arg, rev string) (*PageView, string, error) {
	if err := checkDefinitionArgs(a.Playbook, a.Type, a.Name); err != nil {
		return nil, "", err
	}
	c, err := l.atCommit(ctx, arg, rev)
	if err != nil {
		return nil, "", err
	}
	defer c.close()
	d, err := l.pageAt(ctx, c, a.Playbook, a.Type, a.Name, "")
	if err != nil {
		return nil, "", err
	}
	return d.Page, c.snap.Commit.String(), nil
}

// Markdown is the page's Markdown as quire page render prints it: its
// result and its runs, each under its heading.
func (p *PageView) Markdown() string {
	var b strings.Builder
	if p.Result != "" {
		fmt.Fprintf(&b, "# result\n\n%s\n\n", p.Result)
	}
	if p.Runs != "" {
		fmt.Fprintf(&b, "# runs\n\n%s\n", p.Runs)
	}
	return b.String()
}

// diffViews lists, view by view in the order of their names, the values
// that changed between two pages' views (objects of views by name). A view
// only one side has is one change at its root, the other side left out.
func diffViews(old, new json.RawMessage) ([]ViewDiff, error) {
	o, err := viewsByName(old)
	if err != nil {
		return nil, err
	}
	n, err := viewsByName(new)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(o)+len(n))
	for name := range o {
		names = append(names, name)
	}
	for name := range n {
		if _, ok := o[name]; !ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	out := []ViewDiff{}
	for _, name := range names {
		ov, inOld := o[name]
		nv, inNew := n[name]
		var changes []viewdiff.Change
		if inOld && inNew {
			var a, b any
			if err := json.Unmarshal(ov, &a); err != nil {
				return nil, fmt.Errorf("reading the view %s: %w", name, err)
			}
			if err := json.Unmarshal(nv, &b); err != nil {
				return nil, fmt.Errorf("reading the view %s: %w", name, err)
			}
			changes = viewdiff.Diff(a, b)
		} else {
			changes = []viewdiff.Change{{Old: ov, New: nv}}
		}
		if len(changes) > 0 {
			out = append(out, ViewDiff{View: name, Changes: changes})
		}
	}
	return out, nil
}

// viewsByName reads a page's views, an object of views by name; none for
// a page without views.
func viewsByName(raw json.RawMessage) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if len(raw) == 0 {
		return m, nil
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("reading a page's views: %w", err)
	}
	return m, nil
}

// SavedCommit answers the commit that saved a version of a definition:
// the commit that put that version's document at its path (the nearest to
// HEAD that did), "" when none within reach did. The browser diffs a page
// between two versions as it stood at the commits that saved them.
func (l *Ledger) SavedCommit(playbook, typ, name string, version int) (string, error) {
	d, err := l.definition(playbook, typ, name)
	if err != nil {
		return "", err
	}
	if version < 1 || version > len(d.Versions) {
		return "", refusal.At(refusal.NotFound, "/version", "%s/%s has no version %d; its versions are 1 to %d", typ, name, version, len(d.Versions))
	}
	v := d.Versions[version-1]
	blob, err := vault.ParseHash(v.Blob)
	if err != nil {
		return "", err
	}
	id, err := l.v.SavedIn(v.Path, blob)
	if err != nil || id.IsZero() {
		return "", err
	}
	return id.String(), nil
}
