package render

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/osteele/liquid/values"
)

// Run is the run a result renders, as plain values.
type Run struct {
	Status  string // succeeded, started, rejected or failed
	Started string // ISO 8601, UTC; "" for none
	Ended   string // ISO 8601, UTC; "" while the run is going
	Version int    // the subject's version the run used, from 1
	// For a rejected run: its reason, kind ("" for none) and detail.
	Reason, Kind, Detail string
}

// Subject is the definition a page presents, or the playbook.
type Subject struct {
	Type        string // workflow, a function's type, or playbook
	Name        string
	Description string // "" reads as null
	Version     int    // 0 reads as null, as for the playbook
}

// Options says how a render is written.
type Options struct {
	// Format is "markdown" (the default), or "text" for a client that does
	// not draw: every chart block is then printed as its data's table.
	Format string
	// FirstLine is the document's line of the template's first line, so
	// that a line in place names the line of the document; 0 or 1 names the
	// template's own lines.
	FirstLine int
}

// The fixed lines of page-format.md, "Lines in place of a render", word
// for word.
const (
	LineBuilding   = "Building this page's figures from the playbook's history…"
	LineStalled    = "The figures stopped updating because the page could not process an event. Correct the page to continue."
	LineOutOfReach = "Could not work out this page's figures as they stood when this run ended."
	LineFailed     = "The run failed."
	resultStopped  = "Could not display this run: "
	runsStopped    = "Could not display this page’s figures: "
)

// HeadlineLimit is where a client cuts a headline, with an ellipsis.
const HeadlineLimit = 200

// Rejected is the result of a rejected run: "The run was rejected as
// <reason>, <kind>. <detail>", without ", <kind>" where it has none.
func Rejected(reason, kind, detail string) string {
	s := "The run was rejected as " + reason
	if kind != "" {
		s += ", " + kind
	}
	s += "."
	if detail != "" {
		s += " " + detail
	}
	return s
}

// Headline is a result's first line, cut at 200 characters with an
// ellipsis as a client cuts it.
func Headline(result string) string {
	line, _, _ := strings.Cut(strings.TrimLeft(result, "\r\n"), "\n")
	line = strings.TrimRight(line, "\r")
	if utf8.RuneCountInString(line) <= HeadlineLimit {
		return line
	}
	return clip(line, HeadlineLimit)
}

// Result renders a run through the result template, or gives the line in
// its place: the fixed sentence of a rejected or failed run, or the line
// that says why the template could not be rendered. It never returns a
// render half done.
func Result(tmpl string, run Run, subject Subject, output []byte, now time.Time, opts Options) string {
	switch run.Status {
	case "rejected":
		return Rejected(run.Reason, run.Kind, run.Detail)
	case "failed":
		return LineFailed
	}
	out, err := decodeJSON(output, "output")
	if err != nil {
		return resultStopped + "the output is not JSON (" + err.Error() + ")."
	}
	b := baseBindings(subject, now)
	b["output"] = out
	b["run"] = runValue(run)
	return renderTemplate(tmpl, b, now, opts, resultStopped)
}

// Runs renders the runs template over the views, or gives the line in its
// place. views is a JSON object of each view the fold has written; a view
// it has not written reads as null.
func Runs(tmpl string, views []byte, subject Subject, now time.Time, opts Options) string {
	vv, err := viewsOf(views)
	if err != nil {
		return runsStopped + err.Error() + "."
	}
	b := baseBindings(subject, now)
	b["views"] = vv
	return renderTemplate(tmpl, b, now, opts, runsStopped)
}

// Glance renders one string of a workflow's glance over the views and the
// latest ended run's output and run; the line in its place is runs'.
func Glance(tmpl string, views []byte, run Run, subject Subject, output []byte, now time.Time, opts Options) string {
	vv, err := viewsOf(views)
	if err != nil {
		return runsStopped + err.Error() + "."
	}
	out, err := decodeJSON(output, "output")
	if err != nil {
		return runsStopped + "the output is not JSON (" + err.Error() + ")."
	}
	b := baseBindings(subject, now)
	b["views"] = vv
	b["output"] = out
	b["run"] = runValue(run)
	return renderTemplate(tmpl, b, now, opts, runsStopped)
}

func viewsOf(views []byte) (viewsValue, error) {
	v, err := decodeJSON(views, "views")
	if err != nil {
		return viewsValue{}, fmt.Errorf("the views are not JSON (%s)", err.Error())
	}
	switch o := v.(type) {
	case *object:
		return viewsValue{o}, nil
	case null:
		return viewsValue{&object{path: "views"}}, nil
	}
	return viewsValue{}, errors.New("the views are not a JSON object")
}

func baseBindings(subject Subject, now time.Time) map[string]any {
	s := &object{path: "subject"}
	s.add("type", str(subject.Type))
	s.add("name", str(subject.Name))
	if subject.Description == "" {
		s.add("description", null{"subject.description"})
	} else {
		s.add("description", str(subject.Description))
	}
	if subject.Version == 0 {
		s.add("version", null{"subject.version"})
	} else {
		s.add("version", num(subject.Version))
	}
	return map[string]any{
		"subject": s,
		"today":   str(now.UTC().Format("2006-01-02")),
		"now":     str(isoTime(now)),
	}
}

func runValue(run Run) *object {
	r := &object{path: "run"}
	r.add("status", str(run.Status))
	for _, f := range []struct{ k, v string }{{"started", run.Started}, {"ended", run.Ended}} {
		if f.v == "" {
			r.add(f.k, null{"run." + f.k})
		} else {
			r.add(f.k, str(f.v))
		}
	}
	r.add("version", num(run.Version))
	return r
}

func (o *object) add(k string, v values.Value) {
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
}

// renderTemplate renders a template and lays its Markdown out, or gives
// the line in its place, which begins with stopped.
func renderTemplate(tmpl string, b map[string]any, now time.Time, opts Options, stopped string) (result string) {
	c := compileCached(tmpl)
	if c.root == nil {
		p := c.problems[0]
		return stopped + lowerFirst(strings.TrimSuffix(p.msg, ".")) + onLine(p.line, opts)
	}
	st := &rstate{deadline: time.Now().Add(timeLimit), now: now}
	b["__st"] = &filterEnv{st: st}
	b["__stc"] = &filterEnv{st: st, lenient: true}
	w := &limitWriter{st: st}
	defer func() {
		if r := recover(); r != nil {
			if st.passed != "" {
				result = stopped + limitWords(st.passed) + "."
				return
			}
			result = stopped + fmt.Sprintf("the render failed (%v).", r)
		}
	}()
	if err := renderNode(c, w, b); err != nil {
		if st.passed != "" {
			return stopped + limitWords(st.passed) + "."
		}
		line := 0
		if le, ok := err.(interface{ LineNumber() int }); ok {
			line = le.LineNumber()
		}
		return stopped + strings.TrimSuffix(causeText(err), ".") + onLine(line, opts)
	}
	if st.passed != "" {
		return stopped + limitWords(st.passed) + "."
	}
	md := strings.TrimSpace(string(w.buf))
	md = Layout(md, opts.Format)
	if len(md) > outputLimit {
		return stopped + limitWords("size") + "."
	}
	if time.Now().After(st.deadline) {
		return stopped + limitWords("time") + "."
	}
	return md
}

func onLine(line int, opts Options) string {
	if line <= 0 {
		return "."
	}
	if opts.FirstLine > 1 {
		line += opts.FirstLine - 1
	}
	return fmt.Sprintf(", on line %d.", line)
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	r, size := utf8.DecodeRuneInString(s)
	if size == 1 && r >= 'A' && r <= 'Z' && !(len(s) > 1 && s[1] >= 'A' && s[1] <= 'Z') {
		return string(r+'a'-'A') + s[1:]
	}
	return s
}

// ReadsClock says whether what a template renders may change with the
// time it is rendered at: it reads today or now, or uses the date filter
// (whose input may be the words "now" or "today", from any value). What
// it renders otherwise depends on its bindings alone.
func ReadsClock(tmpl string) bool {
	c := compileCached(tmpl)
	for _, r := range c.an.refs {
		if r.root == "today" || r.root == "now" {
			return true
		}
	}
	for _, f := range c.an.filters {
		if f.name == "date" {
			return true
		}
	}
	return false
}
