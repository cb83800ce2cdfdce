package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"

	"quire/fold"
	"quire/fold/module"
	"quire/ledger/history"
	"quire/words/canon"
	"quire/words/filter"
	"quire/words/page"
	"quire/words/refusal"
)

// A view receipt says what a page's views, as kept at their checkpoint,
// were folded from: the document the page was read from, the digest of its
// module, the records of the history folded (records 1 to the checkpoint,
// with the history's chain over them) and the digest of the views as
// canonical JSON (docs/vault-format.md says exactly how each is made).
// Receipts are made from the kept views when a page is read; they are never
// kept themselves, and nothing needs one to read a vault. A receipt is a
// small JSON value whoever read it can carry to any clone of the vault,
// where verify_page checks it from the files and git's objects alone.
type Receipt struct {
	Playbook string          `json:"playbook"`
	Subject  string          `json:"subject"` // <type>/<name>, or playbook for the playbook's own page
	Document ReceiptDocument `json:"document"`
	Module   string          `json:"module"` // sha256: of the page's data.module text
	History  ReceiptHistory  `json:"history"`
	Views    string          `json:"views"`            // sha256: of the views as canonical JSON (RFC 8785)
	Commit   string          `json:"commit,omitempty"` // HEAD, once the views had read the whole history
}

// ReceiptDocument is the document a page was read from: a definition's
// version, or playbook.md; Blob is its git blob id.
type ReceiptDocument struct {
	Type    string `json:"type"`
	Name    string `json:"name"`
	Version int    `json:"version,omitempty"`
	Blob    string `json:"blob"`
}

// ReceiptHistory is the records of the history folded: From to Through
// (by seq; From is always 1, as views are folded from the start) and the
// history's chain through Through.
type ReceiptHistory struct {
	From      int64  `json:"from"`
	FromID    string `json:"from_id,omitempty"`
	Through   int64  `json:"through"`
	ThroughID string `json:"through_id,omitempty"`
	Chain     string `json:"chain"`
}

// digest writes a SHA-256 as receipts name it.
func digest(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

// moduleDigest is the digest of a page's module: its data.module text.
func moduleDigest(p *page.Page) string { return digest([]byte(p.Data.Module)) }

// viewsDigest is the digest of views as canonical JSON.
func viewsDigest(views json.RawMessage) (string, error) {
	c, err := canon.JSON(views)
	if err != nil {
		return "", fmt.Errorf("the views have no canonical form: %v", err)
	}
	return digest(c), nil
}

// digests keeps, for each page, the canonical digest of the views it was
// last asked for, by the SHA-256 of their text as kept: a page read again
// and again canonicalizes its views once a checkpoint.
type digests struct {
	mu   sync.Mutex
	last map[string][2]string // playbook, id → hash of the text, digest
}

func (d *digests) of(key string, views json.RawMessage) (string, error) {
	text := digest(views)
	d.mu.Lock()
	had, ok := d.last[key]
	d.mu.Unlock()
	if ok && had[0] == text {
		return had[1], nil
	}
	vd, err := viewsDigest(views)
	if err != nil {
		return "", err
	}
	d.mu.Lock()
	if d.last == nil {
		d.last = map[string][2]string{}
	}
	d.last[key] = [2]string{text, vd}
	d.mu.Unlock()
	return vd, nil
}

// receiptOf is the receipt of a subject's views as kept; nil for views out
// of reach (which were not kept), and for views whose checkpoint has no
// chain (folded where the chain could not be kept: a read-only vault).
func (l *Ledger) receiptOf(s *subject, views json.RawMessage, st fold.Standing) (*Receipt, error) {
	if s.Page == nil || s.Page.Data == nil || st.State == fold.StateOutOfReach || views == nil ||
		st.From.Seq > 0 && st.From.Chain == "" {
		return nil, nil
	}
	vd, err := l.views.digests.of(s.Playbook+"\x00"+s.ID, views)
	if err != nil {
		return nil, err
	}
	from := st.From
	r := &Receipt{Playbook: s.Playbook, Subject: s.ID, Document: s.Doc, Module: moduleDigest(s.Page),
		History: ReceiptHistory{Through: from.Seq, ThroughID: from.ThroughID, Chain: from.Chain},
		Views:   vd, Commit: st.Commit}
	if from.Seq == 0 {
		r.History.Chain = history.ChainString([history.ChainSize]byte{})
		return r, nil
	}
	first, err := l.History(s.Playbook, 0, 1)
	if err != nil {
		return nil, err
	}
	r.History.From = 1
	if len(first) == 1 {
		r.History.FromID = first[0].Line.ID
	}
	return r, nil
}

// pageOfDocument reads the page a receipt's document holds from git's
// objects, as it was saved: what verify folds with, whatever the files or
// .quire/ hold now.
func (l *Ledger) pageOfDocument(ctx context.Context, doc ReceiptDocument) (*page.Page, error) {
	src, err := l.v.ReadBlob(doc.Blob)
	if err != nil {
		return nil, refusal.Invalid("/receipt/document/blob", "the receipt's document %s cannot be read from git's objects: %v", doc.Blob, err)
	}
	var p *page.Page
	if doc.Type == "playbook" {
		f, err := parsePlaybookFront(src)
		if err != nil {
			return nil, refusal.Invalid("/receipt/document/blob", "the receipt's document %s is no playbook.md: %v", doc.Blob, err)
		}
		p, _ = page.Parse([]byte(f.Page), page.Where{Form: page.ForPlaybook})
	} else {
		info, err := l.inspect(ctx, doc.Type, string(src), false)
		if err != nil {
			return nil, refusal.Invalid("/receipt/document/blob", "the receipt's document %s does not read as a %s: %v", doc.Blob, doc.Type, err)
		}
		p = info.Page
	}
	if p == nil || p.Data == nil {
		return nil, refusal.Invalid("/receipt/document/blob", "the receipt's document %s has no page with data", doc.Blob)
	}
	return p, nil
}

// freshPage is a page folded with a program transpiled anew from its
// module's text: nothing of what this process or .quire/ keeps.
func freshPage(id string, p *page.Page) (fold.Page, error) {
	js, lines, err := module.TranspileMapped(p.Data.Module)
	if err != nil {
		return fold.Page{}, fmt.Errorf("transpiling the module: %w", err)
	}
	filters := make(filter.Filters, len(p.Data.Filters))
	for i, f := range p.Data.Filters {
		filters[i] = f.Match
	}
	return fold.Page{ID: id, Program: fold.NewProgram(js, lines, p.Data.ModuleLine, p.ViewMap()), Filters: filters}, nil
}
