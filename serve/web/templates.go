package web

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"quire/ledger/comments"
	"sync"
	"time"

	"quire/fold"
	"quire/ledger"
	"quire/render"
	"quire/serve/web/assets"
)

//go:embed templates/*.html
var templateFiles embed.FS

// pages are the templates, parsed at their first use rather than when
// the package starts: every quire process links this package, and most
// (a CLI command, a fold worker) never show a page; the parse was some
// 2 ms of each one's start.
var pages = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("").Funcs(template.FuncMap{
		"include":    func(name string, data any) (template.HTML, error) { return includeFn(name, data) },
		"hasAsset":   hasAsset,
		"statuses":   func() []string { return []string{"started", "succeeded", "failed", "rejected"} },
		"dec":        func(n int) int { return n - 1 },
		"chartKinds": func() map[string]render.ChartKind { return chartKinds },
		"scripts":    scripts,
		"when":       when,
		"clip":       clipHeadline,
		"short":      func(s string) string { return s[:min(12, len(s))] },
		"jsonText":   jsonText,
		"blocksOf":   func(v *view, b []block) blocksData { return blocksData{V: v, Blocks: b} },
		"openThread": func(v *view, addr string) Thread { t := v.Thread(addr); t.open = true; return t },
		"tryForm":    func(href, csrf, source string) tryForm { return tryForm{Href: href, CSRF: csrf, Source: source} },
	}).ParseFS(templateFiles, "templates/*.html"))
})

var includeFn func(string, any) (template.HTML, error)

// jsonText is one side of a view's value that changed, as its JSON; "—"
// for a side without one (a value added or removed).
func jsonText(raw json.RawMessage) string {
	if raw == nil {
		return "—"
	}
	return string(raw)
}

func init() { includeFn = include }

// include fills a page's own template (html/template names templates
// only as constants).
func include(name string, data any) (template.HTML, error) {
	var b bytes.Buffer
	err := pages().ExecuteTemplate(&b, name, data)
	return template.HTML(b.String()), err
}

type blocksData struct {
	V      *view
	Blocks []block
}

func hasAsset(name string) bool {
	_, err := fs.Stat(assets.FS(), name)
	return err == nil
}

// chartKinds is render's table of chart kinds by name, which the layout
// writes into each page as JSON (script#q-chart-kinds) for charts.js: the
// roles a kind needs, in order, and those it may take are those the
// server checks a block against, not a copy of them.
var chartKinds = func() map[string]render.ChartKind {
	m := map[string]render.ChartKind{}
	for _, k := range render.ChartKinds() {
		m[k.Name] = k
	}
	return m
}()

// pageScripts are the scripts a page loads, deferred, in order: live.js
// first (it keeps the parts as the server sent them, before any chart is
// drawn in them), the vendored libraries charts.js draws with, then
// charts.js; each only where the assets have it.
var pageScripts = []string{"live.js", "vendor/d3.min.js", "vendor/plot.umd.min.js", "charts.js"}

func scripts() []string {
	var out []string
	for _, s := range pageScripts {
		if hasAsset(s) {
			out = append(out, s)
		}
	}
	return out
}

// when writes a time as the page shows it: UTC, to the minute.
func when(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// clipHeadline cuts a headline at 200 characters with an ellipsis, as the
// page format asks of a client.
func clipHeadline(s string) string {
	r := []rune(s)
	if len(r) <= 200 {
		return s
	}
	return string(r[:199]) + "…"
}

// standingData is a standing and how far its views have read of the
// playbook's history, for the page's standing line.
type standingData struct {
	S       *fold.Standing
	Through int64 // the views' checkpoint (seq)
	Newest  int64 // the playbook's history's length
	// StalledRun is the page of the run whose event the views stopped
	// at, when it is a run's (its id <run_id>_<n>).
	StalledRun string
	// Receipt is what the views were folded from, and Verify the command
	// that checks it on any clone.
	Receipt *ledger.Receipt
	Verify  string
}

// Short cuts a digest to what a reader compares at a glance:
// "sha256:1f2e3d4c5b6a…".
func (standingData) Short(digest string) string {
	if len(digest) <= len("sha256:")+12 {
		return digest
	}
	return digest[:len("sha256:")+12] + "…"
}

// Progress says how far views being built have read: "412 of 1,000
// records (41%)", and how far behind the newest record they are.
func (d standingData) Progress() string {
	if d.S == nil || d.Newest <= 0 {
		return ""
	}
	out := fmt.Sprintf("%d of %d records read (%d%%)", d.Through, d.Newest, d.Through*100/d.Newest)
	if d.S.LagMs > 0 {
		out += fmt.Sprintf(", %s behind the newest", (time.Duration(d.S.LagMs) * time.Millisecond).Round(time.Second))
	}
	return out
}

// Thread's fields for its template.
func (t Thread) Playbook() string {
	if t.playbook != "" {
		return t.playbook
	}
	return t.v.Playbook
}
func (t Thread) CSRF() string  { return t.v.C.CSRF }
func (t Thread) Open() bool    { return t.v.C.Open }
func (t Thread) Name() string  { return t.v.C.Name }
func (t Thread) Back() string  { return t.v.Path }
func (t Thread) OpenNow() bool { return t.open }

// Hows are the ways a comment is resolved, as resolve_comment takes them.
func (t Thread) Hows() []string { return comments.Hows }
