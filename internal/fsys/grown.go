package fsys

import (
	"bytes"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"time"
)

// Grown is what a warm process holds of a file that grows by appends
// (vault/00-index.jsonl, a history's list of files): how far it took the
// file, the bytes just before that point, and the file's stat when it last
// read it. The next read takes only the tail when the file only grew, and
// the whole file otherwise (another process or git rewrote, replaced or
// truncated it).
//
// The file only grew when it is the same file (same device and inode), is
// at least as long as what was taken, still begins with the bytes it began
// with (up to headMax) and still holds the last line taken (up to lastMax
// bytes) just before the old end. A file made anew may get the inode of
// the one it replaced, and a list of paths of one length may hold the old
// last line at the old end: a writer that makes such a file anew begins
// it with a line of its own (a history's list of files begins with a
// nonce), which the head tells. A file whose stat (size,
// mtime, ctime, device, inode) is as it was is unchanged, unless the stat
// was taken too soon after the file last changed (within racyWindow: a
// write in the same tick of the file system's clock leaves the same times
// behind, git's "racily clean" entries): then it is read whole.
//
// The zero Grown holds nothing: the first read is whole.
type Grown struct {
	n     int64        // bytes taken from the file's start
	last  []byte       // the bytes just before n, up to lastMax
	head  []byte       // the file's first bytes, up to headMax
	stamp growStamp    // the file's stat when last read
	at    time.Time    // when that stat was taken
	sum   maphash.Hash // of the bytes taken, the file's first n

	next   growStamp // the stat of the read Next answered, for Took
	nextAt time.Time
}

type growStamp struct {
	size         int64
	mtime, ctime time.Time
	dev, ino     uint64
}

const (
	// lastMax bounds the bytes kept to check the prefix: the last line
	// taken (an index line, a path) is shorter.
	lastMax = 4096
	// headMax bounds the bytes kept of the file's start.
	headMax = 64
	// racyWindow is how long after a change the file's stat is not trusted
	// to show the next change: file systems stamp times from a clock that
	// ticks every few milliseconds (a jiffy, at most 10 ms on Linux; newer
	// kernels give a stat'ed file fine times). A file system that keeps
	// whole seconds (its times have no nanoseconds) gets two.
	racyWindow       = 20 * time.Millisecond
	racyWindowCoarse = 2 * time.Second
)

func growStampOf(fi fs.FileInfo) growStamp {
	s := growStamp{size: fi.Size(), mtime: fi.ModTime()}
	if st, ok := Stat(fi); ok {
		s.ctime, s.dev, s.ino = st.Ctime, st.Dev, st.Ino
	}
	return s
}

// Held reports whether g holds a read of the file.
func (g *Grown) Held() bool { return g.n > 0 || !g.at.IsZero() }

// Forget drops what g holds: the next read is whole.
func (g *Grown) Forget() { *g = Grown{} }

// Next answers what to read of f since the last read: data is the file's
// bytes from offset from to its end. from is 0 when the file must be read
// whole (the caller drops what it took before); data is nil when nothing
// changed. The caller then calls Took with what it took of data.
func (g *Grown) Next(f *os.File) (from int64, data []byte, err error) {
	now := time.Now()
	fi, err := f.Stat()
	if err != nil {
		return 0, nil, err
	}
	s := growStampOf(fi)
	g.next, g.nextAt = s, now
	switch {
	case g.Held() && s == g.stamp:
		if !g.racy() {
			return g.n, nil, nil
		}
		// The same stat, too soon after a change to tell: the bytes
		// taken are read again.
		if g.sumHolds(f) {
			from = g.n
		}
	case g.Held() && s.dev == g.stamp.dev && s.ino == g.stamp.ino && s.size >= g.n && g.prefixHolds(f) && g.headHolds(f):
		from = g.n
	}
	data = make([]byte, s.size-from)
	n, err := f.ReadAt(data, from)
	if err != nil && err != io.EOF {
		return 0, nil, err
	}
	return from, data[:n], nil
}

// racy reports whether the stat held was taken within racyWindow of the
// file's last change.
func (g *Grown) racy() bool {
	t := g.stamp.mtime
	if g.stamp.ctime.After(t) {
		t = g.stamp.ctime
	}
	w := racyWindow
	if t.Nanosecond() == 0 {
		w = racyWindowCoarse
	}
	return !t.Before(g.at.Add(-w))
}

// prefixHolds reports whether f still holds, just before the old end, the
// bytes taken there.
func (g *Grown) prefixHolds(f *os.File) bool {
	if len(g.last) == 0 {
		return g.n == 0
	}
	b := make([]byte, len(g.last))
	if _, err := f.ReadAt(b, g.n-int64(len(b))); err != nil {
		return false
	}
	return bytes.Equal(b, g.last)
}

// headHolds reports whether f still begins with the bytes it began with.
func (g *Grown) headHolds(f *os.File) bool {
	b := make([]byte, len(g.head))
	if _, err := f.ReadAt(b, 0); err != nil {
		return false
	}
	return bytes.Equal(b, g.head)
}

// sumHolds reports whether f's first n bytes are the ones taken.
func (g *Grown) sumHolds(f *os.File) bool {
	b := make([]byte, g.n)
	if _, err := f.ReadAt(b, 0); err != nil {
		return false
	}
	var h maphash.Hash
	h.SetSeed(g.sum.Seed())
	h.Write(b)
	return h.Sum64() == g.sum.Sum64()
}

// Took records that the caller took data[:k] of what Next answered (whole
// lines: a torn last line is left for a later read).
func (g *Grown) Took(from int64, data []byte, k int) {
	if from == 0 {
		g.n, g.last, g.head = 0, nil, nil
		g.sum.Reset()
	}
	if len(g.head) < headMax && from == int64(len(g.head)) {
		g.head = append(g.head, data[:min(k, headMax-len(g.head))]...)
	}
	if data != nil || from == 0 {
		g.last = append(g.last, data[:k]...)
		// Keep the last line taken (and the newline before it, so that a
		// line that only ends the same is not taken for it), at most
		// lastMax bytes.
		cut := 0
		if len(g.last) > 1 {
			cut = bytes.LastIndexByte(g.last[:len(g.last)-1], '\n')
			cut = max(cut, 0)
		}
		cut = max(cut, len(g.last)-lastMax)
		g.last = append([]byte(nil), g.last[cut:]...)
		g.n = from + int64(k)
		g.sum.Write(data[:k])
	}
	g.stamp, g.at = g.next, g.nextAt
}
