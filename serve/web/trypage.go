package web

import (
	"net/http"
	"net/url"

	"quire/fold"
	"quire/ledger"
	"quire/words/refusal"
)

// A definition's page offers "Try a change": its document in a form,
// which posts the changed text to /p/{playbook}/{type}/{name}/try. The
// answer is a page of its own, try_page's dry run beside today's page
// (render_page) and each view's changes, with the form again holding the
// tried text so the person may go on changing it. Nothing is saved: the
// page says how a save is made.

// tryFormMax bounds the form of a dry run: a document of 65,536 bytes
// (the page format's limit) written form-encoded, each byte %XX at worst.
const tryFormMax = 4 * 65536

// triedPage is a dry run's page.
type triedPage struct {
	D      *ledger.Definition // today's definition
	Href   string
	Source string // the tried document, back in the form
	// Version is what the document would be saved as.
	Version int
	Today   pageSide
	Tried   pageSide
	Changes []ledger.ViewChanges
	// TodayState is the state of today's views when they are not live:
	// the changes are from what they hold so far.
	TodayState string
	OutOfReach bool
	// Refused is why try_page refused the document, with its issues at
	// their lines.
	Refused string
	Issues  []refusal.Issue
}

// tryForm is what the form of a dry run holds.
type tryForm struct{ Href, CSRF, Source string }

// pageSide is one side of the comparison: a page's result and runs.
type pageSide struct {
	Standing standingData
	Result   []block
	Runs     []block
}

// postPage wraps a form whose answer is a page (rather than a redirect):
// the form read within tryFormMax and its CSRF value checked, then the
// page, or the page that says why not.
func (w *Web) postPage(fn func(*http.Request, *reqCtx) (*view, error)) http.HandlerFunc {
	show := w.page(fn)
	return func(rw http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(rw, r.Body, tryFormMax)
		err := r.ParseForm()
		if err != nil {
			err = refusal.Invalid("/source", "the form could not be read: %v", err)
		} else {
			err = w.checkCSRF(r)
		}
		if err != nil {
			w.page(func(*http.Request, *reqCtx) (*view, error) { return nil, err })(rw, r)
			return
		}
		show(rw, r)
	}
}

// tryPage is the dry run of the document the form holds.
func (w *Web) tryPage(r *http.Request, c *reqCtx) (*view, error) {
	pb, typ, name := r.PathValue("playbook"), r.PathValue("type"), r.PathValue("name")
	args := map[string]any{"playbook": pb, "type": typ, "name": name}
	today, err := callAs[*ledger.Definition](w, r, c, "render_page", args)
	if re, ok := refusal.As(err); ok && re.Code == refusal.NotFound && len(re.Issues) > 0 && re.Issues[0].Path == "/name" {
		// A definition without a page yet: today it shows none.
		today, err = callAs[*ledger.Definition](w, r, c, "get_definition", args)
	}
	if err != nil {
		return nil, err
	}
	tp := &triedPage{D: today, Href: defHref(pb, typ, name), Source: r.PostFormValue("source")}
	v := &view{Title: "Trying a change to " + name, Playbook: pb, Template: "tried", Data: tp,
		Crumbs: []crumb{{"Playbooks", "/"}, {pb, "/p/" + url.PathEscape(pb)}, {name, tp.Href}}}
	st := &mdState{} // one for both sides: their figures' ids are the page's
	if p := today.Page; p != nil {
		tp.Today = w.side(pb, st, p.Result, p.Runs, p.Standing)
	}
	args["source"] = tp.Source
	tried, err := callAs[*ledger.TriedPage](w, r, c, "try_page", args)
	if re, ok := refusal.As(err); ok && re.Code == refusal.InvalidInput {
		tp.Refused, tp.Issues = re.Message, re.Issues
		return v, nil
	}
	if err != nil {
		return nil, err
	}
	tp.Version, tp.Changes = tried.Version, tried.Changes
	if tried.Today != "" && tried.Today != fold.StateLive {
		tp.TodayState = tried.Today
	}
	tp.OutOfReach = tried.Page.Standing != nil && tried.Page.Standing.State == fold.StateOutOfReach
	tp.Tried = w.side(pb, st, tried.Page.Result, tried.Page.Runs, tried.Page.Standing)
	return v, nil
}

// side lays out one side of the comparison. Its blocks carry no address:
// the page compares, and comments are made on the definition's own page.
func (w *Web) side(pb string, st *mdState, result, runs string, s *fold.Standing) pageSide {
	// A side's standing is shown without a receipt: the tried page has
	// none, and today's is on the definition's own page.
	none := func(int) string { return "" }
	cell := func(int, int) string { return "" }
	return pageSide{Standing: w.standing(pb, &ledger.PageView{Standing: s}), Result: blocks(result, st, none, cell), Runs: blocks(runs, st, none, cell)}
}
