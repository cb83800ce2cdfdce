package history

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"quire/internal/fsys"
)

// The chain is a digest of a playbook's history that depends on every byte
// of its records and on their order, kept beside the records:
//
//	<playbook>.chain  32 bytes a record, chain(n) at (n-1)*32
//
//	chain(0) = 32 zero bytes
//	chain(n) = SHA-256(chain(n-1) || uint64-be(len(line n)) || line n)
//
// where line n is the bytes of record n's line in its file, without the
// newline that ends it. A view receipt names chain(checkpoint); anyone who
// holds the event files can compute it again (docs/vault-format.md says
// how). The file is extended by the reads of the history that reach past
// its end (Page), from the bytes they read anyway, so keeping it never
// reads the history again; it is derived state, rebuilt with the history.

// ChainSize is the size of one link of the chain.
const ChainSize = sha256.Size

// Link is chain(n) made from chain(n-1) and line n (without its newline).
func Link(prev [ChainSize]byte, line []byte) [ChainSize]byte {
	h := sha256.New()
	h.Write(prev[:])
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(line)))
	h.Write(n[:])
	h.Write(line)
	var out [ChainSize]byte
	h.Sum(out[:0])
	return out
}

// ChainString writes a link as a receipt names it: "sha256:" and hex.
func ChainString(c [ChainSize]byte) string { return "sha256:" + hex.EncodeToString(c[:]) }

func (h *History) chainPath() string { return filepath.Join(h.dir, h.playbook+".chain") }

// chainLen is how many links the chain file holds.
func (h *History) chainLen() int64 {
	fi, err := os.Stat(h.chainPath())
	if err != nil {
		return 0
	}
	return fi.Size() / ChainSize
}

// link reads chain(seq) from the chain file; chain(0) is zero.
func (h *History) link(f *os.File, seq int64) ([ChainSize]byte, error) {
	var c [ChainSize]byte
	if seq == 0 {
		return c, nil
	}
	_, err := f.ReadAt(c[:], (seq-1)*ChainSize)
	return c, err
}

// extendChain adds to the chain the links of records just read (the
// records after seq after), where they reach past its end. Links are
// written at their places, so two readers that extend it at once write the
// same bytes to the same places.
func (h *History) extendChain(after int64, recs []Record) error {
	h.chainMu.Lock()
	defer h.chainMu.Unlock()
	have := h.chainLen()
	if have < after || have >= after+int64(len(recs)) {
		return nil // a gap before them, or nothing new
	}
	f, err := fsys.OpenFile(h.chainPath(), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	prev, err := h.link(f, have)
	if err != nil {
		return err
	}
	buf := make([]byte, 0, (after+int64(len(recs))-have)*ChainSize)
	for _, r := range recs[have-after:] {
		prev = Link(prev, r.Raw)
		buf = append(buf, prev[:]...)
	}
	_, err = f.WriteAt(buf, have*ChainSize)
	return err
}

// Chain answers chain(seq), 0 ≤ seq ≤ Len: read from the chain file, which
// is first extended to seq where it ends before it (reading the records it
// lacks, once).
func (h *History) Chain(seq int64) ([ChainSize]byte, error) {
	for have := h.chainLen(); have < seq; {
		recs, err := h.Page(have, int(min(seq-have, 1000)))
		if err != nil {
			return [ChainSize]byte{}, err
		}
		if len(recs) == 0 {
			return [ChainSize]byte{}, errors.New("history: the chain reaches past the records")
		}
		if now := h.chainLen(); now == have {
			return [ChainSize]byte{}, errors.New("history: the chain cannot be extended")
		} else {
			have = now
		}
	}
	f, err := fsys.Open(h.chainPath())
	if errors.Is(err, fs.ErrNotExist) && seq == 0 {
		return [ChainSize]byte{}, nil
	}
	if err != nil {
		return [ChainSize]byte{}, err
	}
	defer f.Close()
	return h.link(f, seq)
}

// cutChain drops the links past count records (the history dropped a
// record, or was made anew).
func (h *History) cutChain(count int64) error {
	if h.chainLen() <= count {
		return nil
	}
	err := os.Truncate(h.chainPath(), count*ChainSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
