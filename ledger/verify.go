package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"quire/words/viewdiff"
	"slices"
	"strings"

	"quire/fold"
	"quire/ledger/history"
	"quire/words/address"
	"quire/words/canon"
	"quire/words/refusal"
)

// Verdicts of verify_page.
const (
	Verified       = "verified"
	Differs        = "differs"
	VerifyOutReach = fold.StateOutOfReach
)

type VerifyPageArgs struct {
	Playbook string      `json:"playbook"`
	Subject  string      `json:"subject" jsonschema:"<type>/<name>, or playbook"`
	Receipt  ReceiptJSON `json:"receipt,omitempty" jsonschema:"a page.receipt"`
}

// ReceiptJSON is a receipt as an argument: an object, read whole into a
// Receipt by its handler (tools/list says no more than that of it).
type ReceiptJSON json.RawMessage

// MarshalJSON writes the object as it is.
func (r ReceiptJSON) MarshalJSON() ([]byte, error) {
	if r == nil {
		return []byte("null"), nil
	}
	return r, nil
}

// UnmarshalJSON keeps the object as it is.
func (r *ReceiptJSON) UnmarshalJSON(b []byte) error {
	*r = append((*r)[:0], b...)
	return nil
}

// JSONForms says what a receipt's JSON takes: an object.
func (ReceiptJSON) JSONForms() []any { return []any{map[string]any{}} }

// receipt reads the receipt argument; nil when there is none.
func (r ReceiptJSON) receipt() (*Receipt, error) {
	if len(r) == 0 || string(r) == "null" {
		return nil, nil
	}
	var out Receipt
	dec := json.NewDecoder(bytes.NewReader(r))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return nil, refusal.Invalid("/receipt", "not a receipt as page.receipt writes it: %v", err)
	}
	for ptr, v := range map[string]string{"/receipt/subject": out.Subject, "/receipt/document/blob": out.Document.Blob, "/receipt/module": out.Module,
		"/receipt/history/chain": out.History.Chain, "/receipt/views": out.Views} {
		if v == "" {
			return nil, refusal.Invalid(ptr, "the receipt lacks %s", ptr[len("/receipt/"):])
		}
	}
	return &out, nil
}

// Verification is verify_page's answer.
type Verification struct {
	Verdict    string          `json:"verdict" enum:"verified,differs,out_of_reach"`
	Message    string          `json:"message"`
	Receipt    ReceiptJSON     `json:"receipt"` // the receipt checked
	Difference *ViewDifference `json:"difference,omitempty"`
}

// ViewDifference is the first record at which the views differ: the record,
// the view, a JSON pointer into it and the value on each side (absent when
// the member is not there).
type ViewDifference struct {
	Seq      int64           `json:"seq"`
	Record   string          `json:"record"`
	View     string          `json:"view"`
	Pointer  string          `json:"pointer"`
	Receipt  json.RawMessage `json:"receipt_value,omitempty"`
	Refolded json.RawMessage `json:"refolded_value,omitempty"`
}

// verifyPage is the operation verify_page (ops.go): it folds the views
// again from nothing, over the history as the files hold it, with the
// module of the document the receipt names read from git's objects, and
// compares the history's chain and the views' digest with the receipt's.
func (l *Ledger) verifyPage(ctx context.Context, a *VerifyPageArgs) (*Verification, error) {
	s, err := l.verifySubject(a)
	if err != nil {
		return nil, err
	}
	r, err := a.Receipt.receipt()
	if err != nil {
		return nil, err
	}
	if r == nil {
		views, st, err := l.viewsOf(ctx, s)
		if err != nil {
			return nil, err
		}
		if r, err = l.receiptOf(s, views, st); err != nil {
			return nil, err
		}
		if r == nil {
			return nil, refusal.At(refusal.Conflict, "/subject", "the views of %s have no receipt: they are %s, or were folded where the history's chain could not be kept (a vault read-only here)", s.ID, st.State)
		}
	} else if r.Playbook != s.Playbook || r.Subject != s.ID {
		return nil, refusal.Invalid("/receipt/subject", "the receipt is of %s/%s, not of %s/%s", r.Playbook, r.Subject, s.Playbook, s.ID)
	}
	return l.verify(ctx, s, r)
}

// verifySubject is the subject verify_page names: <type>/<name>, or
// playbook for the playbook's own page.
func (l *Ledger) verifySubject(a *VerifyPageArgs) (*subject, error) {
	if a.Subject == "playbook" {
		s, err := l.playbookSubject(a.Playbook)
		if err == nil && (s.Page == nil || s.Page.Data == nil) {
			err = refusal.At(refusal.NotFound, "/subject", "the playbook %s has no page with data", a.Playbook)
		}
		return s, err
	}
	typ, name, ok := strings.Cut(a.Subject, "/")
	if !ok || name == "" || !slices.Contains(address.Types(), typ) {
		return nil, refusal.Invalid("/subject", "%q names no page: give <type>/<name> (%s) or playbook", a.Subject, strings.Join(address.Types(), ", "))
	}
	s, err := l.subjectOf(a.Playbook, typ, name)
	if err == nil && (s.Page == nil || s.Page.Data == nil) {
		err = refusal.At(refusal.NotFound, "/subject", "the %s %q has no page with data: it keeps no views", typ, name)
	}
	return s, err
}

// verify checks receipt r of subject s.
func (l *Ledger) verify(ctx context.Context, s *subject, r *Receipt) (*Verification, error) {
	rj, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	out := &Verification{Receipt: rj}
	ko, err := l.keeper(s.Playbook)
	if err != nil {
		return nil, err
	}
	if reach := ko.k.Reach(); r.History.Through > reach {
		out.Verdict = VerifyOutReach
		out.Message = fmt.Sprintf("out of reach: the receipt names %d records of the history; a replay reads at most %d", r.History.Through, reach)
		return out, nil
	}
	p, err := l.pageOfDocument(ctx, r.Document)
	if err != nil {
		return nil, err
	}
	if got := moduleDigest(p); got != r.Module {
		out.Verdict = Differs
		out.Message = fmt.Sprintf("the module of the receipt's document (%s) is %s, not the receipt's %s", r.Document.Blob, got, r.Module)
		return out, nil
	}
	fp, err := freshPage(s.ID, p)
	if err != nil {
		return nil, err
	}
	pool, err := l.foldPool()
	if err != nil {
		return nil, err
	}
	recs, err := l.historyRecords(s.Playbook, r.History.Through)
	if err != nil {
		return nil, err
	}
	rp, err := fold.NewReplay(pool, fp)
	if err != nil {
		return nil, err
	}
	chain, views, err := l.refold(ctx, s.Playbook, rp, recs)
	if err != nil {
		return nil, err
	}
	vd, err := viewsDigest(views)
	if err != nil {
		return nil, err
	}
	if chain == r.History.Chain && vd == r.Views && rp.Stall == nil {
		out.Verdict = Verified
		out.Message = fmt.Sprintf("verified: %s's views are what its module (%s) folds from records 1 to %d of the history (chain %s)", s.ID, r.Module, r.History.Through, chain)
		return out, nil
	}
	out.Verdict = Differs
	if chain != r.History.Chain {
		out.Message, out.Difference, err = l.historyDiffers(ctx, s, r, fp, pool, recs)
		return out, err
	}
	out.Message, out.Difference, err = l.viewsDiffer(ctx, s, r, rp, views, vd)
	return out, err
}

// historyRecords reads records 1 to through of a playbook's history, as
// the files hold them.
func (l *Ledger) historyRecords(playbook string, through int64) ([]Record, error) {
	out := make([]Record, 0, through)
	for int64(len(out)) < through {
		page, err := l.History(playbook, int64(len(out)), int(min(through-int64(len(out)), 1000)))
		if err != nil {
			return nil, err
		}
		if len(page) == 0 {
			return nil, refusal.Invalid("/receipt/history/through", "the history here holds %d records, not the receipt's %d", len(out), through)
		}
		out = append(out, page...)
	}
	return out, nil
}

// refold folds recs into rp a page at a time, as the keeper does, and
// answers the chain over them and the views.
func (l *Ledger) refold(ctx context.Context, playbook string, rp *fold.Replay, recs []Record) (string, json.RawMessage, error) {
	var chain [history.ChainSize]byte
	for from := 0; from < len(recs); from += 1000 {
		page := recs[from:min(from+1000, len(recs))]
		events := make([]fold.Event, 0, len(page))
		for i := range page {
			chain = history.Link(chain, page[i].Raw)
			ev, seen, err := foldEvent(playbook, &page[i])
			if err != nil {
				return "", nil, err
			}
			if seen {
				events = append(events, ev)
			}
		}
		if err := rp.Fold(ctx, events); err != nil {
			return "", nil, err
		}
	}
	return history.ChainString(chain), rp.Views, nil
}

// viewsDiffer says how the views folded here from the receipt's own history
// differ from the receipt's. A receipt's views are a digest alone; when they
// are the views this vault keeps (a receipt made here, of views a hand or a
// module other than the document's wrote under .quire/), the kept views
// name the view and the values.
func (l *Ledger) viewsDiffer(ctx context.Context, s *subject, r *Receipt, rp *fold.Replay, views json.RawMessage, vd string) (string, *ViewDifference, error) {
	at := fmt.Sprintf("record %d (%s)", r.History.Through, r.History.ThroughID)
	if rp.Stall != nil {
		return fmt.Sprintf("the receipt's module stalls at event %s folding the receipt's history (%s): %s", rp.Stall.Event.ID, rp.Stall.Kind, rp.Stall.Error), nil, nil
	}
	msg := fmt.Sprintf("the history is the receipt's (its chain matches), but the views its module folds from it, %s, are not the receipt's %s", vd, r.Views)
	kept, st, err := l.viewsOf(ctx, s)
	if err != nil {
		return "", nil, err
	}
	if kr, err := l.receiptOf(s, kept, st); err != nil || kr == nil || kr.Views != r.Views {
		return msg + " at " + at, nil, nil
	}
	d, err := firstDifference(kept, views)
	if err != nil || d == nil {
		return msg + " at " + at, nil, err
	}
	d.Seq, d.Record = r.History.Through, r.History.ThroughID
	return fmt.Sprintf("%s: at %s, view %s differs at %s: the kept views hold %s, the module folds %s", msg, at, d.View, d.Pointer, shown(d.Receipt), shown(d.Refolded)), d, nil
}

// MarshalJSON writes the difference as its fields say. It is written by a
// method of its own so that tools/list declares it as an object alone
// (JSONForms), its fields named by verify_page's description, to keep the
// list an agent pays for at start-up short.
func (d ViewDifference) MarshalJSON() ([]byte, error) {
	type fields ViewDifference
	return json.Marshal(fields(d))
}

// JSONForms says what a difference's JSON takes: an object.
func (ViewDifference) JSONForms() []any { return []any{map[string]any{}} }

// shown writes a value of a difference for a message.
func shown(v json.RawMessage) string {
	if v == nil {
		return "nothing"
	}
	return string(v)
}

// firstDifference is the first place, in canonical order, where two
// views differ; nil when they are the same.
func firstDifference(a, b json.RawMessage) (*ViewDifference, error) {
	var av, bv any
	if err := decodeNumbers(a, &av); err != nil {
		return nil, err
	}
	if err := decodeNumbers(b, &bv); err != nil {
		return nil, err
	}
	for _, ch := range viewdiff.Diff(av, bv) {
		x, y := canonOf(ch.Old), canonOf(ch.New)
		if ch.Old != nil && ch.New != nil && bytes.Equal(x, y) {
			continue // the same number written two ways
		}
		return &ViewDifference{Pointer: ch.Pointer, View: viewOf(ch.Pointer), Receipt: x, Refolded: y}, nil
	}
	return nil, nil
}

// canonOf is one side of a difference as canonical JSON; nil where that
// side lacks the member or item.
func canonOf(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	if c, err := canon.JSON(raw); err == nil {
		return c
	}
	return raw
}

// viewOf is the view a pointer into the views begins with ("" for the
// views whole).
func viewOf(ptr string) string {
	if ptr == "" {
		return ""
	}
	tok, _, _ := strings.Cut(ptr[1:], "/")
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
}
