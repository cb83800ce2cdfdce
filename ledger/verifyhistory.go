package ledger

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	"quire/fold"
	"quire/ledger/history"
	"quire/vault"
	"quire/words/event"
)

// historyDiffers says where the history here parts from the receipt's. The
// receipt's history is the one its commit holds: each record's line as its
// file held it at that commit (the same line of the same file, counted from
// the file's start: event files only grow, so a line keeps its place).
// From the first record whose line differs, the views of both histories
// are folded one record at a time, and the first record after which they
// differ is named with the view, a pointer and both values.
func (l *Ledger) historyDiffers(ctx context.Context, s *subject, r *Receipt, fp fold.Page, pool *fold.Pool, recs []Record) (string, *ViewDifference, error) {
	here := chainOf(recs)
	msg := fmt.Sprintf("the history here is not the receipt's: its chain through record %d is %s, the receipt's %s", r.History.Through, here, r.History.Chain)
	if r.Commit == "" {
		return msg + "; the receipt names no commit its history can be read from", nil, nil
	}
	then, err := l.linesAt(r.Commit, recs)
	if err != nil {
		return "", nil, err
	}
	var chain [history.ChainSize]byte
	first := -1
	for i := range recs {
		if then[i] == nil {
			return fmt.Sprintf("%s; commit %s lacks record %d (%s)", msg, r.Commit, recs[i].Seq, recs[i].Line.ID), nil, nil
		}
		chain = history.Link(chain, then[i])
		if first < 0 && !bytes.Equal(then[i], recs[i].Raw) {
			first = i
		}
	}
	if history.ChainString(chain) != r.History.Chain {
		return fmt.Sprintf("%s, nor is it the history commit %s holds (chain %s): the receipt is of no history this vault has", msg, r.Commit, history.ChainString(chain)), nil, nil
	}
	rec := recs[first]
	msg = fmt.Sprintf("the history here differs from the receipt's (commit %s) from record %d (%s) in %s", r.Commit, rec.Seq, rec.Line.ID, rec.File)
	base, err := fold.NewReplay(pool, fp)
	if err != nil {
		return "", nil, err
	}
	if _, _, err := l.refold(ctx, s.Playbook, base, recs[:first]); err != nil {
		return "", nil, err
	}
	was, now := base.Copy(), base
	for i := first; i < len(recs); i++ {
		old := recs[i]
		if old.Line, err = lineThen(then[i], recs[i]); err != nil {
			return fmt.Sprintf("%s; its line at commit %s is not an event: %v", msg, r.Commit, err), nil, nil
		}
		if err := foldOne(ctx, s.Playbook, was, &old); err != nil {
			return "", nil, err
		}
		if err := foldOne(ctx, s.Playbook, now, &recs[i]); err != nil {
			return "", nil, err
		}
		d, err := firstDifference(was.Views, now.Views)
		if err != nil {
			return "", nil, err
		}
		if d != nil {
			d.Seq, d.Record = recs[i].Seq, recs[i].Line.ID
			return fmt.Sprintf("%s: after record %d (%s), view %s differs at %s: the receipt's history gives %s, the history here %s",
				msg, d.Seq, d.Record, d.View, d.Pointer, shown(d.Receipt), shown(d.Refolded)), d, nil
		}
	}
	return msg + "; the views the module folds from both are the same", nil, nil
}

// chainOf is the chain over recs.
func chainOf(recs []Record) string {
	var chain [history.ChainSize]byte
	for i := range recs {
		chain = history.Link(chain, recs[i].Raw)
	}
	return history.ChainString(chain)
}

// foldOne folds one record into rp.
func foldOne(ctx context.Context, playbook string, rp *fold.Replay, rec *Record) error {
	ev, seen, err := foldEvent(playbook, rec)
	if err != nil || !seen {
		return err
	}
	return rp.Fold(ctx, []fold.Event{ev})
}

// lineThen reads a record's line as a commit held it, with what a line
// written by hand is given by its place (its id, run, subject, version),
// which is the record's here.
func lineThen(raw []byte, rec Record) (event.Line, error) {
	ln, err := event.Parse(raw)
	if err != nil {
		return ln, err
	}
	ln.Seq = rec.Seq
	if ln.ID == "" {
		ln.ID = rec.Line.ID
		if ln.Run == "" {
			ln.Run = rec.Line.Run
		}
		if ln.Subject == "" {
			ln.Subject = rec.Line.Subject
		}
		if ln.Version == 0 {
			ln.Version = rec.Line.Version
		}
	}
	return ln, nil
}

// linesAt answers each record's line (without its newline) as commit
// held it: the line of its file at that commit with the place the record's
// line has in the file here; nil where the commit has no such line.
func (l *Ledger) linesAt(commit string, recs []Record) ([][]byte, error) {
	id, err := vault.ParseHash(commit)
	if err != nil {
		return nil, fmt.Errorf("the receipt's commit %q: %v", commit, err)
	}
	h := l.v.History()
	defer h.Close()
	tree, _, err := h.Commit(id)
	if err != nil {
		return nil, fmt.Errorf("the receipt's commit %s cannot be read: %v", commit, err)
	}
	type file struct {
		starts []int64 // where each line begins here
		then   [][]byte
	}
	files := map[string]*file{}
	out := make([][]byte, len(recs))
	for i, rec := range recs {
		f, ok := files[rec.File]
		if !ok {
			cur, err := os.ReadFile(l.v.Abs(rec.File))
			if err != nil {
				return nil, err
			}
			old, err := blobAt(h, tree, rec.File)
			if err != nil {
				return nil, err
			}
			f = &file{starts: lineStarts(cur), then: bytes.SplitAfter(old, []byte("\n"))}
			files[rec.File] = f
		}
		n := sort.Search(len(f.starts), func(i int) bool { return f.starts[i] > rec.Off }) - 1
		if n >= 0 && f.starts[n] == rec.Off && n < len(f.then) && bytes.HasSuffix(f.then[n], []byte("\n")) {
			out[i] = bytes.TrimSuffix(f.then[n], []byte("\n"))
		}
	}
	return out, nil
}

// lineStarts answers where each line of a file begins.
func lineStarts(b []byte) []int64 {
	starts := []int64{0}
	for i, c := range b {
		if c == '\n' && i+1 < len(b) {
			starts = append(starts, int64(i+1))
		}
	}
	return starts
}

// blobAt reads the file at path (relative to the vault) in tree; nil when
// the tree has none.
func blobAt(h *vault.History, tree vault.Hash, path string) ([]byte, error) {
	for _, seg := range strings.Split(path, "/") {
		raw, err := h.Tree(tree)
		if err != nil {
			return nil, err
		}
		e, ok, err := vault.TreeFind(raw, seg)
		if err != nil || !ok {
			return nil, err
		}
		tree = e.Hash
	}
	return h.Blob(tree)
}
