package web

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"quire/ledger"
	"quire/render"
	"quire/runfolder"
	"quire/words/address"
	"quire/words/linediff"
	"quire/words/refusal"
)

// view is what a page handler answers: the template to fill and its data.
type view struct {
	Title    string
	Crumbs   []crumb
	Playbook string // the playbook whose changes the page follows ("" every one)
	Template string
	Data     any
	Status   int

	C       *reqCtx
	Path    string // the page's own path and query, where a form sends the person back
	Threads map[string][]*ledger.Comment
	// onVersion is the version of each comment made on an older version
	// of the definition the page shows, by the comment's id (olderVersions).
	onVersion map[string]int
}

type crumb struct{ Name, Href string }

// Thread is the comments on one address, as the templates show them.
type Thread struct {
	Address  string
	Comments []*ledger.Comment
	v        *view
	open     bool   // shown open (the comments page)
	playbook string // the comments' playbook, when the page follows none (home)
}

// Older is the version a comment of the thread was made on, when that is
// not the version the page shows; 0 otherwise.
func (t Thread) Older(cm *ledger.Comment) int {
	if t.v == nil {
		return 0
	}
	return t.v.onVersion[cm.ID]
}

// thread answers the comments on an address among those the page read.
func (v *view) Thread(addr string) Thread {
	return Thread{Address: addr, Comments: v.Threads[addr], v: v}
}

// page wraps a page handler: who the request is (a request without the
// token a server with tokens needs is sent to the login page), then the
// page, or a page that says why not with the refusal's status.
func (w *Web) page(fn func(*http.Request, *reqCtx) (*view, error)) http.HandlerFunc {
	return func(rw http.ResponseWriter, r *http.Request) {
		c, err := w.who(rw, r)
		if re, ok := refusal.As(err); ok && re.Code == refusal.Unauthenticated && r.URL.Path == "/login" {
			c, err = &reqCtx{CSRF: w.csrfValue(rw, r)}, nil
		}
		var v *view
		if err == nil {
			v, err = fn(r, c)
		}
		if err != nil {
			if re, ok := refusal.As(err); ok && re.Code == refusal.Unauthenticated && r.URL.Path != "/login" {
				http.Redirect(rw, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			v = &view{Title: "Not shown", Template: "error", Data: err.Error(), Status: statusOf(err)}
			if _, ok := refusal.As(err); !ok {
				w.log.Error("a page failed", "path", r.URL.Path, "err", err)
				v.Data = "This page could not be shown: " + err.Error()
			}
		}
		v.C, v.Path = c, r.URL.RequestURI()
		if v.C == nil {
			v.C = &reqCtx{}
		}
		w.write(rw, v)
	}
}

func (w *Web) write(rw http.ResponseWriter, v *view) {
	var b bytes.Buffer
	if err := pages().ExecuteTemplate(&b, "layout", v); err != nil {
		w.log.Error("a page's template failed", "template", v.Template, "err", err)
		http.Error(rw, "quire could not write this page; the fault is in the server's log", http.StatusInternalServerError)
		return
	}
	h := rw.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	if v.Status != 0 {
		rw.WriteHeader(v.Status)
	}
	rw.Write(b.Bytes())
}

// post wraps a form's handler: who, the CSRF value, then the handler,
// which answers where to send the person next.
func (w *Web) post(fn func(http.ResponseWriter, *http.Request, *reqCtx) (string, error)) http.HandlerFunc {
	return func(rw http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(rw, r.Body, 64<<10)
		err := r.ParseForm()
		if err != nil {
			err = refusal.Invalid("", "the form could not be read: %v", err)
		}
		var c *reqCtx
		if err == nil {
			err = w.checkCSRF(r)
		}
		if err == nil && r.URL.Path != "/login" {
			c, err = w.who(rw, r)
		}
		if err == nil && r.URL.Path == "/login" {
			c = &reqCtx{}
		}
		next := ""
		if err == nil {
			next, err = fn(rw, r, c)
		}
		if err != nil {
			v := &view{Title: "Not done", Template: "error", Data: err.Error(), Status: statusOf(err), C: c, Path: r.URL.RequestURI()}
			if v.C == nil {
				v.C = &reqCtx{CSRF: w.csrfValue(rw, r)}
			}
			w.write(rw, v)
			return
		}
		http.Redirect(rw, r, next, http.StatusSeeOther)
	}
}

// localPath keeps a "next" or "back" path on this server.
func localPath(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") || strings.ContainsAny(p, "\r\n") {
		return "/"
	}
	return p
}

// ---- addresses ------------------------------------------------------------

func defAddr(pb, typ, name string, version int) string {
	return fmt.Sprintf("%s/definitions/%s/%s/%d", pb, typ, name, version)
}

// block is one top-level block of rendered Markdown, as HTML, with its
// address and its cells'.
type block struct {
	N       int
	Kind    string
	Address string
	HTML    template.HTML
	Cells   []cell
	text    string // its Markdown
}

type cell struct {
	Address string
	HTML    template.HTML
}

// blocks renders Markdown block by block, as render.Blocks counts them
// (so the addresses are the ones get_run's blocks give): blockAddr names
// block n, cellAddr cell m of block n.
func blocks(md string, st *mdState, blockAddr func(n int) string, cellAddr func(n, m int) string) []block {
	var out []block
	for _, b := range render.Blocks(md) {
		hb := block{N: b.N, Kind: b.Kind, Address: blockAddr(b.N), text: b.Text}
		if b.Kind == "row" {
			for m, text := range b.CellText {
				st.addr, st.cells = cellAddr(b.N, m+1), nil
				hb.Cells = append(hb.Cells, cell{Address: st.addr, HTML: st.toHTML(text)})
			}
		} else {
			st.addr, st.cells = hb.Address, nil
			for m := 1; m <= b.Cells; m++ {
				st.cells = append(st.cells, cellAddr(b.N, m))
			}
			hb.HTML = st.toHTML(b.Text)
		}
		out = append(out, hb)
	}
	return out
}

// comments reads the comments on and under an address into v.Threads.
func (w *Web) comments(r *http.Request, c *reqCtx, v *view, pb, under string) {
	w.commentsOf(r, c, v, map[string]any{"playbook": pb, "under": under}, nil)
}

// commentsOf reads the comments list_comments answers for args (those
// keep takes, all when it is nil) into v.Threads, and answers them all.
func (w *Web) commentsOf(r *http.Request, c *reqCtx, v *view, args map[string]any, keep func(addr string) bool) []*ledger.Comment {
	list, err := callAs[[]*ledger.Comment](w, r, c, "list_comments", args)
	if err != nil {
		return nil // a page without its comments is still the page
	}
	if v.Threads == nil {
		v.Threads = map[string][]*ledger.Comment{}
	}
	for _, cm := range list {
		if keep == nil || keep(cm.Address) {
			v.Threads[cm.Address] = append(v.Threads[cm.Address], cm)
		}
	}
	return list
}

// openOn counts the comments of list not resolved, on the address at or
// under it.
func openOn(list []*ledger.Comment, at string) int {
	n := 0
	for _, cm := range list {
		if !cm.Resolved && (at == "" || cm.Address == at || strings.HasPrefix(cm.Address, at+"/")) {
			n++
		}
	}
	return n
}

// rowThreads gives each run of rows the thread of its row (the address
// <playbook>/runs/<run_id>/parts/row), drawn on that row alone.
func (w *Web) rowThreads(r *http.Request, c *reqCtx, v *view, pb string, rows []runRow) {
	all := w.commentsOf(r, c, v, map[string]any{"playbook": pb}, func(addr string) bool { return strings.HasSuffix(addr, "/parts/row") })
	for i := range rows {
		rows[i].Row = v.Thread(rows[i].R.Address + "/parts/row")
		rows[i].Open = openOn(all, rows[i].R.Address)
	}
}

// olderVersions draws the comments made on other versions of the
// definition at def (its address without a version) at the same address
// of the version the page shows: a comment on a block of version 1 stays
// on that block of version 2, marked with its version (Thread.Older). An
// address's blocks and cells are numbered in the document, not by the
// version, so the same address is the same place while the page keeps
// its shape.
func (v *view) olderVersions(def string, version int) {
	prefix := def + "/"
	moved := map[string][]*ledger.Comment{}
	for addr, list := range v.Threads {
		rest, ok := strings.CutPrefix(addr, prefix)
		if !ok {
			continue
		}
		n, tail, _ := strings.Cut(rest, "/")
		ver, err := strconv.Atoi(n)
		if err != nil || ver == version || ver < 1 {
			continue
		}
		at := prefix + strconv.Itoa(version)
		if tail != "" {
			at += "/" + tail
		}
		if v.onVersion == nil {
			v.onVersion = map[string]int{}
		}
		for _, cm := range list {
			v.onVersion[cm.ID] = ver
		}
		moved[at] = append(moved[at], list...)
	}
	for at, list := range moved {
		all := append(v.Threads[at], list...)
		sort.SliceStable(all, func(i, j int) bool { return all[i].Created < all[j].Created })
		v.Threads[at] = all
	}
}

// ---- the pages --------------------------------------------------------------

type card struct {
	P       *ledger.Playbook
	Glances []glance
	// MoreWorkflows are the workflows past cardGlances, whose glances the
	// card leaves to their pages.
	MoreWorkflows int
	Latest        []runRow
	Card          Thread // the comments on the card
	Open          int    // the playbook's comments not resolved yet
}

type glance struct {
	Definition string
	Href       string
	Items      []glanceItem
}

type glanceItem struct {
	Key   string
	Value template.HTML
}

type runRow struct {
	R        *ledger.Run
	Headline string
	Href     string
	Row      Thread // the comments on the run's row, where a page draws them
	Open     int    // the comments on the run not resolved yet
}

// cardGlances is how many workflows a playbook's card shows the glance
// of: the first ones in the playbook's order. A card is read at a glance,
// and the home page answers in one call per card, not one per definition
// (a playbook of 1,000 workflows took 15 s); each definition's page shows
// its own glance.
const cardGlances = 6

// home lists the playbooks as cards.
func (w *Web) home(r *http.Request, c *reqCtx) (*view, error) {
	pbs, err := callAs[[]*ledger.Playbook](w, r, c, "list_playbooks", map[string]any{})
	if err != nil {
		return nil, err
	}
	var cards []card
	for _, p := range pbs {
		cd := card{P: p}
		if defs, err := callAs[[]*ledger.Definition](w, r, c, "list_definitions", map[string]any{"playbook": p.Playbook}); err == nil {
			asked := 0
			for _, d := range defs {
				if d.Type != "workflow" || d.Retired {
					continue
				}
				if asked++; asked > cardGlances {
					cd.MoreWorkflows++
					continue
				}
				full, err := callAs[*ledger.Definition](w, r, c, "get_definition", map[string]any{"playbook": p.Playbook, "type": d.Type, "name": d.Name})
				if err != nil || full.Page == nil || len(full.Page.Glance) == 0 {
					continue
				}
				cd.Glances = append(cd.Glances, glance{Definition: d.Name, Href: defHref(p.Playbook, d.Type, d.Name), Items: glanceItems(json.RawMessage(full.Page.Glance))})
			}
		}
		cd.Latest, _ = w.runRows(r, c, p.Playbook, map[string]any{"playbook": p.Playbook, "limit": 5}, nil) // a card without its runs is still the card
		cards = append(cards, cd)
	}
	v := &view{Title: "Playbooks", Template: "home", Data: cards}
	for i := range cards {
		// A comment on a playbook's card is drawn on its card.
		addr := "playbooks/" + cards[i].P.Playbook + "/parts/card"
		all := w.commentsOf(r, c, v, map[string]any{"playbook": cards[i].P.Playbook}, func(a string) bool { return a == addr })
		cards[i].Card, cards[i].Open = v.Thread(addr), openOn(all, "")
		cards[i].Card.playbook = cards[i].P.Playbook
	}
	return v, nil
}

// glanceItems lays a glance out as its keys and values, a value that is a
// mapping or a list written as its items.
func glanceItems(raw json.RawMessage) []glanceItem {
	var out []glanceItem
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return out
		}
		var v any
		if dec.Decode(&v) != nil {
			return out
		}
		out = append(out, glanceItem{Key: fmt.Sprint(k), Value: glanceValue(v)})
	}
	return out
}

func glanceValue(v any) template.HTML {
	switch x := v.(type) {
	case string:
		st := &mdState{}
		return st.toHTML(x)
	case []any:
		var b strings.Builder
		b.WriteString("<ul>")
		for _, it := range x {
			b.WriteString("<li>" + string(glanceValue(it)) + "</li>")
		}
		b.WriteString("</ul>")
		return template.HTML(b.String())
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		b.WriteString("<dl>")
		for _, k := range keys {
			b.WriteString("<dt>" + template.HTMLEscapeString(k) + "</dt><dd>" + string(glanceValue(x[k])) + "</dd>")
		}
		b.WriteString("</dl>")
		return template.HTML(b.String())
	case nil:
		return ""
	}
	return template.HTML(template.HTMLEscapeString(fmt.Sprint(v)))
}

func defHref(pb, typ, name string) string {
	return "/p/" + url.PathEscape(pb) + "/" + url.PathEscape(typ) + "/" + url.PathEscape(name)
}
func runHref(pb, id string) string { return "/p/" + url.PathEscape(pb) + "/runs/" + url.PathEscape(id) }

// runRows lists runs with their headlines (each run's result, rendered).
func (w *Web) runRows(r *http.Request, c *reqCtx, pb string, args map[string]any, next *string) ([]runRow, error) {
	page, err := callAs[*ledger.RunPage](w, r, c, "list_runs", args)
	if err != nil {
		return nil, err
	}
	if next != nil {
		*next = page.Next
	}
	heads := w.l.Headlines(page.Runs)
	rows := make([]runRow, 0, len(page.Runs))
	for i, run := range page.Runs {
		rows = append(rows, runRow{R: run, Href: runHref(pb, run.RunID), Headline: heads[i]})
	}
	return rows, nil
}

type playbookPage struct {
	P        *ledger.Playbook
	Page     *ledger.PageView
	Standing standingData
	Blocks   []block
	Defs     []*ledger.Definition
}

// playbook is a playbook's page and its definitions.
func (w *Web) playbook(r *http.Request, c *reqCtx) (*view, error) {
	pb := r.PathValue("playbook")
	p, err := callAs[*ledger.Playbook](w, r, c, "get_playbook", map[string]any{"playbook": pb})
	if err != nil {
		return nil, err
	}
	d := &playbookPage{P: p}
	v := &view{Title: p.Name, Playbook: pb, Template: "playbook", Data: d, Crumbs: []crumb{{"Playbooks", "/"}}}
	if rp, err := callAs[*ledger.RenderedPlaybook](w, r, c, "render_playbook_page", map[string]any{"playbook": pb}); err == nil && rp.Page != nil {
		d.Page = rp.Page
		d.Standing = w.standing(pb, rp.Page)
		st := &mdState{}
		d.Blocks = blocks(rp.Page.Runs, st,
			func(n int) string { return fmt.Sprintf("playbooks/%s/parts/runs-%d", pb, n) },
			func(n, m int) string { return fmt.Sprintf("playbooks/%s/parts/runs-%d-%d", pb, n, m) })
	}
	if d.Defs, err = callAs[[]*ledger.Definition](w, r, c, "list_definitions", map[string]any{"playbook": pb}); err != nil {
		return nil, err
	}
	w.comments(r, c, v, pb, p.Address)
	return v, nil
}

type definitionPage struct {
	D        *ledger.Definition
	Standing standingData
	Address  string
	Blocks   []block
	Glance   []glanceItem
	Versions []*ledger.Definition
	Runs     []runRow
	Next     string
	Href     string
	// Filter is what the runs are found by, held in the page's URL so
	// that a filtered list can be shared; RunsRefused says why list_runs
	// refused it (a date that is not one).
	Filter      runFilter
	RunsRefused string
	// Diff is the changes of the document between two of its versions,
	// asked by the page's query (?from=N&to=M); DiffRefused says why not.
	Diff        *versionDiff
	DiffRefused string
}

// versionDiff is a definition's document from one version to another,
// and its page as it stood at the commits that saved them (Page, or
// PageRefused saying why not).
type versionDiff struct {
	From, To    int
	Lines       []linediff.Line
	Page        *ledger.PageDiff
	PageRefused string
}

// versionDiffOf reads the two versions the query names (from, and to, the
// version the page shows when left out) and diffs their documents, and
// withPage their page.
func (w *Web) versionDiffOf(r *http.Request, c *reqCtx, pb, typ, name string, latest int, withPage bool) (*versionDiff, error) {
	q := r.URL.Query()
	to := latest
	from, err := strconv.Atoi(q.Get("from"))
	if err != nil || from < 1 || from > latest {
		return nil, refusal.Invalid("/from", "%q is not a version of the document: 1 to %d", q.Get("from"), latest)
	}
	if t := q.Get("to"); t != "" {
		if to, err = strconv.Atoi(t); err != nil || to < 1 || to > latest {
			return nil, refusal.Invalid("/to", "%q is not a version of the document: 1 to %d", t, latest)
		}
	}
	source := func(ver int) (string, error) {
		d, err := callAs[*ledger.Definition](w, r, c, "get_definition", map[string]any{"playbook": pb, "type": typ, "name": name, "version": ver})
		if err != nil {
			return "", err
		}
		return d.Source, nil
	}
	a, err := source(from)
	if err != nil {
		return nil, err
	}
	b, err := source(to)
	if err != nil {
		return nil, err
	}
	vd := &versionDiff{From: from, To: to, Lines: linediff.Diff(a, b)}
	if withPage {
		vd.Page, err = w.pageDiffOf(r, c, pb, typ, name, from, to)
		if err != nil {
			vd.PageRefused = refusal.Of(err).Message
		}
	}
	return vd, nil
}

// pageDiffOf diffs the page as it stood at the commits that saved the
// versions from and to (diff_page).
func (w *Web) pageDiffOf(r *http.Request, c *reqCtx, pb, typ, name string, from, to int) (*ledger.PageDiff, error) {
	var commits [2]string
	for i, ver := range []int{from, to} {
		id, err := w.l.SavedCommit(pb, typ, name, ver)
		if err != nil {
			return nil, err
		}
		if id == "" {
			return nil, refusal.New(refusal.NotFound, "the commit that saved version %d is out of reach: the page cannot be rendered as it stood then", ver)
		}
		commits[i] = id
	}
	return callAs[*ledger.PageDiff](w, r, c, "diff_page", map[string]any{"playbook": pb, "type": typ, "name": name, "old": commits[0], "new": commits[1]})
}

// runFilter is the runs list's filter, as the page's query holds it: the
// arguments of list_runs of the same names, and runs, the cursor.
type runFilter struct {
	Status, Executor, Since, Until, Search, Cursor string
}

func runFilterOf(q url.Values) runFilter {
	return runFilter{Status: q.Get("status"), Executor: q.Get("executor"), Since: q.Get("since"),
		Until: q.Get("until"), Search: q.Get("search"), Cursor: q.Get("runs")}
}

// Any says whether the filter finds some runs rather than all.
func (f runFilter) Any() bool { return len(f.fields()) > 0 }

// fields are the filter's values by list_runs' names, those given.
func (f runFilter) fields() map[string]string {
	out := map[string]string{}
	for k, v := range map[string]string{"status": f.Status, "executor": f.Executor, "since": f.Since, "until": f.Until, "search": f.Search} {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// args adds the filter and its cursor to list_runs' arguments.
func (f runFilter) args(args map[string]any) {
	for k, v := range f.fields() {
		args[k] = v
	}
	if f.Cursor != "" {
		args["cursor"] = f.Cursor
	}
}

// Href is the page at base with the filter and the cursor (none: the
// newest runs).
func (f runFilter) Href(base, cursor string) string {
	q := url.Values{}
	for k, v := range f.fields() {
		q.Set(k, v)
	}
	if cursor != "" {
		q.Set("runs", cursor)
	}
	if len(q) == 0 {
		return base
	}
	return base + "?" + q.Encode()
}

// definition is a definition's page: runs over its views, with their
// standing, its versions, then its runs.
func (w *Web) definition(r *http.Request, c *reqCtx) (*view, error) {
	pb, typ, name := r.PathValue("playbook"), r.PathValue("type"), r.PathValue("name")
	d, err := callAs[*ledger.Definition](w, r, c, "get_definition", map[string]any{"playbook": pb, "type": typ, "name": name})
	if err != nil {
		return nil, err
	}
	dp := &definitionPage{D: d, Address: defAddr(pb, typ, name, d.Version), Href: defHref(pb, typ, name)}
	v := &view{Title: name, Playbook: pb, Template: "definition", Data: dp,
		Crumbs: []crumb{{"Playbooks", "/"}, {pb, "/p/" + url.PathEscape(pb)}}}
	if d.Page != nil {
		dp.Standing = w.standing(pb, d.Page)
		st := &mdState{}
		dp.Blocks = blocks(d.Page.Runs, st,
			func(n int) string { return fmt.Sprintf("%s/parts/runs-%d", dp.Address, n) },
			func(n, m int) string { return fmt.Sprintf("%s/parts/runs-%d-%d", dp.Address, n, m) })
		dp.Glance = glanceItems(json.RawMessage(d.Page.Glance))
	}
	// The versions, newest first: the latest twenty.
	dp.Versions = append(dp.Versions, d)
	for ver := d.Latest - 1; ver >= 1 && ver > d.Latest-20; ver-- {
		old, err := callAs[*ledger.Definition](w, r, c, "get_definition", map[string]any{"playbook": pb, "type": typ, "name": name, "version": ver})
		if err != nil {
			break
		}
		dp.Versions = append(dp.Versions, old)
	}
	if r.URL.Query().Has("from") {
		if dp.Diff, err = w.versionDiffOf(r, c, pb, typ, name, d.Latest, d.Page != nil); err != nil {
			dp.DiffRefused = refusal.Of(err).Message
		}
	}
	args := map[string]any{"playbook": pb, "type": typ, "name": name, "limit": 50}
	dp.Filter = runFilterOf(r.URL.Query())
	dp.Filter.args(args)
	if dp.Runs, err = w.runRows(r, c, pb, args, &dp.Next); err != nil {
		dp.RunsRefused = refusal.Of(err).Message
	}
	w.rowThreads(r, c, v, pb, dp.Runs)
	def := fmt.Sprintf("%s/definitions/%s/%s", pb, typ, name)
	w.comments(r, c, v, pb, def)
	v.olderVersions(def, d.Version)
	return v, nil
}

// standing is a page's standing with how far its views have read, and
// its receipt.
func (w *Web) standing(pb string, p *ledger.PageView) standingData {
	s := p.Standing
	d := standingData{S: s, Receipt: p.Receipt}
	if s == nil {
		return d
	}
	if r := p.Receipt; r != nil {
		d.Verify = "quire page verify --playbook " + pb
		if typ, name, ok := strings.Cut(r.Subject, "/"); ok {
			d.Verify += " --type " + typ + " --name " + name
		} else {
			d.Verify += " --type playbook"
		}
	}
	if s.Stalled != nil {
		if run, _, ok := strings.Cut(s.Stalled.Event.ID, "_"); ok && address.ValidLowerUUID(run) {
			d.StalledRun = runHref(pb, run)
		}
	}
	if s.Checkpoint != nil {
		d.Through, _ = strconv.ParseInt(*s.Checkpoint, 10, 64)
	}
	d.Newest, _ = w.l.HistoryLen(pb)
	return d
}

type runPage struct {
	R       *ledger.Run
	Address string
	DefHref string
	// Head is the result's first block when it is the headline alone:
	// drawn once, as the page's heading, with its address and comments.
	Head    *block
	Input   string        // the run's input, indented JSON
	Context template.HTML // context.md
	Source  string        // the definition's source at the run's version
	// SourceLines are Source's lines, each an anchor (#L<n>) that the
	// steps of the events link to.
	SourceLines []sourceLine
	Pause       *ledger.Pause
	// PausedData is a pause's data that says no reason, kind, stage or
	// summary (one recorded by hand), as it is.
	PausedData string
	Blocks     []block
	Events     []eventRow
	Thread     template.HTML
	Artifacts  []artifact
	State      string
	Commits    []commit
	Output     string
	// Acts says the person may move the run (resume, archive or end it):
	// on a server without tokens anyone who gives their name, with tokens
	// the run's executor and authorizer (rule 4; the operation decides).
	Acts bool
	CSRF string
	Open bool   // the person gives their name
	Name string // remembered from the last form
	Back string
}

type eventRow struct {
	E       ledger.Event
	Address string
	Detail  string
	Step    string
	// StepLine is the line of the pinned source the step begins at (0:
	// the source holds no such step).
	StepLine int
}

type artifact struct {
	Name, Href, Type string
	Size             int64
	// Shown inline, by the kind of its name, when it is small: a CSV
	// file as a table (its first row the header), Markdown through the
	// page's renderer, plain text as it is.
	CSV      [][]string
	Markdown template.HTML
	Text     string
}

// inlineMax is the largest artifact shown on the run page; any other is a
// download only.
const inlineMax = 64 << 10

// inline fills in what of the artifact the run page shows, read from the
// run's folder (OpenRunFile opens nothing outside it and no link).
func (w *Web) inline(a *artifact, runPath string) {
	ext := strings.ToLower(path.Ext(a.Name))
	if a.Size > inlineMax || (ext != ".csv" && ext != ".md" && ext != ".txt") {
		return
	}
	f, _, err := w.l.OpenRunFile(runPath, "artifacts/"+a.Name)
	if err != nil {
		return
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, inlineMax))
	if err != nil || !utf8.Valid(data) {
		return
	}
	switch ext {
	case ".csv":
		rd := csv.NewReader(bytes.NewReader(data))
		rd.FieldsPerRecord = -1
		if rows, err := rd.ReadAll(); err == nil && len(rows) > 0 {
			a.CSV = rows
		}
	case ".md":
		a.Markdown = (&mdState{}).inSection(string(data), 3, func(string) bool { return false })
	default:
		a.Text = string(data)
	}
}

type commit struct {
	Hash, Short, Author, Time, Subject string
	Href                               string // its changes' page
}

// run is a run's page.
func (w *Web) run(r *http.Request, c *reqCtx) (*view, error) {
	pb, id := r.PathValue("playbook"), r.PathValue("run_id")
	run, err := callAs[*ledger.Run](w, r, c, "get_run", map[string]any{"playbook": pb, "run_id": id, "blocks": true})
	if err != nil {
		return nil, err
	}
	rp := &runPage{R: run, Address: run.Address, DefHref: defHref(pb, run.Type, run.Name),
		Acts: (c.Open || c.Who == run.Executor || c.Who == run.AuthorizedBy) && run.State != runfolder.Archived,
		CSRF: c.CSRF, Open: c.Open, Name: c.Name, Back: r.URL.RequestURI()}
	// The title (and the crumb it is) names the run; the headline is
	// drawn once, as the page's heading.
	v := &view{Title: "Run of " + run.Name, Playbook: pb, Template: "run", Data: rp,
		Crumbs: []crumb{{"Playbooks", "/"}, {pb, "/p/" + url.PathEscape(pb)}, {run.Name, rp.DefHref}}}
	if run.Page != nil && run.Page.Result != "" {
		st := &mdState{}
		byN := map[int]ledger.ResultBlock{}
		for _, b := range run.Page.Blocks {
			byN[b.N] = b
		}
		rp.Blocks = blocks(run.Page.Result, st,
			func(n int) string { return byN[n].Address },
			func(n, m int) string { return fmt.Sprintf("%s/parts/result-%d-%d", run.Address, n, m) })
		rp.Head, rp.Blocks = headline(rp.Blocks, run.Page.Headline, st)
	}
	rp.Input, rp.Output = indented(run.Input), indented(run.Output)
	// What the run was asked to follow: its definition at the version it
	// is pinned to, which may be older than the definition's page.
	if d, err := callAs[*ledger.Definition](w, r, c, "get_definition", map[string]any{"playbook": pb, "type": run.Type, "name": run.Name, "version": run.Version}); err == nil {
		rp.Source, rp.SourceLines = d.Source, sourceLines(d.Source)
	}
	if rp.Pause = run.Pause(); rp.Pause == nil {
		rp.PausedData = indented(run.Paused)
	}
	if evs, err := callAs[*ledger.EventPage](w, r, c, "list_playbook_events", map[string]any{"playbook": pb, "run_id": id, "limit": 1000}); err == nil {
		doc := parseSource(rp.Source)
		for _, e := range evs.Events {
			er := eventRowOf(run.Address, e)
			er.StepLine = stepLine(doc, er.Step)
			rp.Events = append(rp.Events, er)
		}
	}
	// The run's files and commits, through the operations (get_run_files,
	// list_run_commits) with the token's rights, as the rest of the page.
	if files, err := callAs[*ledger.RunFiles](w, r, c, "get_run_files", map[string]any{"playbook": pb, "run_id": id}); err == nil {
		// Each file's own title is the section's heading already;
		// thread.md's names the run by its id, which stays off the page.
		if strings.TrimSpace(files.Thread) != "" {
			rp.Thread = (&mdState{}).inSection(files.Thread, 2, func(h string) bool { return strings.HasPrefix(h, "Thread of run ") })
		}
		if strings.TrimSpace(files.Context) != "" {
			rp.Context = (&mdState{}).inSection(files.Context, 3, func(h string) bool { return h == "Context" })
		}
		rp.State = stateText(files.State)
		for _, a := range files.Artifacts {
			art := artifact{Name: a.Name, Type: contentType(a.Name), Size: a.Bytes, Href: runHref(pb, id) + "/artifacts/" + escapePath(a.Name)}
			w.inline(&art, run.Path)
			rp.Artifacts = append(rp.Artifacts, art)
		}
	}
	if page, err := callAs[*ledger.RunCommitPage](w, r, c, "list_run_commits", map[string]any{"playbook": pb, "run_id": id, "limit": 100}); err == nil {
		for _, cm := range page.Commits {
			rp.Commits = append(rp.Commits, commit{Hash: cm.Commit, Short: cm.Commit[:min(12, len(cm.Commit))], Author: cm.Author, Time: cm.Time, Subject: cm.Subject,
				Href: runHref(pb, id) + "/commits/" + url.PathEscape(cm.Commit)})
		}
	}
	w.comments(r, c, v, pb, run.Address)
	return v, nil
}

// headline takes the result's first block out of bs when it is the
// headline alone (one line, a sentence or a heading), so the page draws
// the headline once: as its heading, the block's Markdown inline.
func headline(bs []block, line string, st *mdState) (*block, []block) {
	if len(bs) == 0 || line == "" || strings.Contains(strings.TrimSpace(bs[0].text), "\n") {
		return nil, bs
	}
	head := bs[0]
	text := strings.TrimSpace(head.text)
	switch {
	case head.Kind == "paragraph" && text == line:
	case head.Kind == "heading" && strings.TrimSpace(strings.TrimLeft(text, "#")) == strings.TrimSpace(strings.TrimLeft(line, "#")):
		text = strings.TrimSpace(strings.TrimLeft(text, "#"))
	default:
		return nil, bs
	}
	head.HTML = st.inline(text)
	return &head, bs[1:]
}

// indented is a JSON value as the page shows it, "" for none.
func indented(raw json.RawMessage) string {
	var b bytes.Buffer
	if len(raw) == 0 || json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}

// stateText is run.state.json as the page shows it: indented, or its text
// as it is when a hand edit left it no JSON (get_run_files answers that
// as a string).
func stateText(raw json.RawMessage) string {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return text
	}
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}

func escapePath(rel string) string {
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

// contentType is an artifact's type, by its name's extension.
func contentType(name string) string {
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// artifact answers one artifact of a run as a download: its type by its
// name, always an attachment, never sniffed, in a sandbox. get_run, called
// with the token's rights, finds the run (or refuses); the file is then
// streamed from the ledger's OpenRunFile, which opens nothing outside the
// run's folder and no link. An operation answering the content would hold
// the whole file in memory, as base64 past its text, under a size limit;
// streaming keeps an artifact of any size, and Range requests, working.
func (w *Web) artifact(rw http.ResponseWriter, r *http.Request) {
	c, err := w.who(rw, r)
	fail := func(err error) {
		http.Error(rw, err.Error(), statusOf(err))
	}
	if err != nil {
		fail(err)
		return
	}
	pb, id, name := r.PathValue("playbook"), r.PathValue("run_id"), r.PathValue("name")
	run, err := callAs[*ledger.Run](w, r, c, "get_run", map[string]any{"playbook": pb, "run_id": id})
	if err != nil {
		fail(err)
		return
	}
	clean := path.Clean("/" + name)[1:]
	if clean == "" || clean != name || strings.Contains(name, "\\") {
		fail(refusal.Invalid("/name", "%q is not an artifact's name", name))
		return
	}
	f, fi, err := w.l.OpenRunFile(run.Path, "artifacts/"+clean)
	if r, ok := refusal.As(err); ok && r.Code == refusal.NotFound {
		fail(refusal.At(refusal.NotFound, "/name", "the run has no artifact %q", name))
		return
	}
	if err != nil {
		fail(err)
		return
	}
	defer f.Close()
	h := rw.Header()
	h.Set("Content-Type", contentType(clean))
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": path.Base(clean)}))
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'")
	h.Set("Cache-Control", "no-store")
	http.ServeContent(rw, r, "", fi.ModTime(), f)
}

type commentsPage struct {
	Address string
	Back    string
}

// comments is the page of the comments on one address, with the form
// that makes one: where the addressable things of a long list (a run's
// row, an event) send a person.
func (w *Web) commentsPage(r *http.Request, c *reqCtx) (*view, error) {
	pb := r.PathValue("playbook")
	addr := r.URL.Query().Get("address")
	if addr == "" {
		return nil, refusal.Invalid("/address", "the comments page needs an address: ?address=<address>")
	}
	list, err := callAs[[]*ledger.Comment](w, r, c, "list_comments", map[string]any{"playbook": pb, "address": addr})
	if err != nil {
		return nil, err
	}
	v := &view{Title: "Comments", Playbook: pb, Template: "comments", Data: &commentsPage{Address: addr, Back: localPath(r.URL.Query().Get("back"))},
		Crumbs: []crumb{{"Playbooks", "/"}, {pb, "/p/" + url.PathEscape(pb)}}, Threads: map[string][]*ledger.Comment{addr: list}}
	return v, nil
}

// makeComment makes a comment through make_comment: as the token's
// principal, or, on a server without tokens, as the name given in the
// form (remembered in a cookie for the next one).
func (w *Web) makeComment(rw http.ResponseWriter, r *http.Request, c *reqCtx) (string, error) {
	pb := r.PathValue("playbook")
	args := map[string]any{"playbook": pb, "address": r.PostFormValue("address"), "text": r.PostFormValue("text")}
	if c.Open {
		name, err := w.formName(rw, r, "author", "give your name with the comment")
		if err != nil {
			return "", err
		}
		args["author"] = name
	}
	cm, err := callAs[*ledger.Comment](w, r, c, "make_comment", args)
	if err != nil {
		return "", err
	}
	return localPath(r.PostFormValue("back")) + "#c-" + cm.ID, nil
}

// formName is the name a person gives in a form's field on a server
// without tokens, remembered in a cookie for the next form; none is
// refused with ask.
func (w *Web) formName(rw http.ResponseWriter, r *http.Request, field, ask string) (string, error) {
	name := strings.TrimSpace(r.PostFormValue(field))
	if name == "" {
		return "", refusal.Invalid("/"+field, "%s: a server without tokens does not know who you are", ask)
	}
	w.setCookie(rw, r, cookieName, name, 365*24*time.Hour)
	return name, nil
}

// moveRun resumes or archives a run through transition_run: as the
// token's principal, who rule 4 wants the run's executor or authorizer,
// or, on a server without tokens, as the name given in the form.
func (w *Web) moveRun(rw http.ResponseWriter, r *http.Request, c *reqCtx) (string, error) {
	pb, id := r.PathValue("playbook"), r.PathValue("run_id")
	args := map[string]any{"playbook": pb, "run_id": id, "to": r.PostFormValue("to"), "reason": r.PostFormValue("reason")}
	if c.Open {
		name, err := w.formName(rw, r, "actor", "give your name, as a run is moved by its executor or authorizer")
		if err != nil {
			return "", err
		}
		args["actor"] = name
	} else {
		args["actor"] = c.Who
	}
	if _, err := callAs[*ledger.Run](w, r, c, "transition_run", args); err != nil {
		return "", err
	}
	return runHref(pb, id), nil
}

// resolveComment resolves a comment through resolve_comment, saying how:
// as the token's principal, or, on a server without tokens, as the name
// given in the form.
func (w *Web) resolveComment(rw http.ResponseWriter, r *http.Request, c *reqCtx) (string, error) {
	id := r.PathValue("id")
	args := map[string]any{"playbook": r.PathValue("playbook"), "id": id, "how": r.PostFormValue("how")}
	if c.Open {
		name, err := w.formName(rw, r, "author", "give your name to resolve the comment")
		if err != nil {
			return "", err
		}
		args["actor"] = name
	}
	if _, err := callAs[*ledger.Comment](w, r, c, "resolve_comment", args); err != nil {
		return "", err
	}
	return localPath(r.PostFormValue("back")) + "#c-" + id, nil
}

// loginPage asks for a token.
func (w *Web) loginPage(r *http.Request, c *reqCtx) (*view, error) {
	return &view{Title: "Log in", Template: "login", Data: localPath(r.URL.Query().Get("next"))}, nil
}

// login checks a token and keeps it in an HttpOnly, SameSite=Strict
// cookie for the browser's session.
func (w *Web) login(rw http.ResponseWriter, r *http.Request, _ *reqCtx) (string, error) {
	tok := strings.TrimSpace(r.PostFormValue("token"))
	if tok == "" {
		return "", refusal.Invalid("/token", "paste a token that quire token create made")
	}
	if _, open, err := w.opts.Authenticate(r, tok); err != nil {
		return "", err
	} else if open {
		return "", refusal.Invalid("/token", "this server has no tokens: nobody needs to log in")
	}
	w.setCookie(rw, r, cookieToken, tok, 0)
	w.newSession(rw, r)
	return localPath(r.PostFormValue("next")), nil
}

func (w *Web) logout(rw http.ResponseWriter, r *http.Request, _ *reqCtx) (string, error) {
	w.setCookie(rw, r, cookieToken, "", -1)
	w.newSession(rw, r)
	return "/login", nil
}
