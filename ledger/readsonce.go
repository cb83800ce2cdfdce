package ledger

import (
	"os"
	"sync"
	"time"
)

// reads keeps what a ledger read from files that change only by writes,
// for as long as those files stay as they were: the definitions of a
// playbook (its events.jsonl) and the subjects of its pages (events.jsonl,
// playbook.md and the vault's index).
type reads struct {
	defs     sync.Map // playbook -> *readOnce[map[string]*defInfo]
	subjects sync.Map // playbook -> *readOnce[[]*subject]
}

// readOnce is one answer and the stamps of the files it was read from.
type readOnce[T any] struct {
	stamps []fileStamp
	v      T
}

// fileStamp tells versions of a file apart without reading it. A file
// rewritten within the same nanosecond to the same size (no writer of
// quire's, nor git, does so) would read as the one before.
type fileStamp struct {
	size  int64
	mtime time.Time
	there bool
}

func stampOf(file string) fileStamp {
	fi, err := os.Stat(file)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{size: fi.Size(), mtime: fi.ModTime(), there: true}
}

// readsOnce answers the value kept under key in m while the files are
// as they were when it was read, and reads it again (read) when any
// changed. The stamps are taken before read, so a write during the read
// makes the next call read again.
func readsOnce[T any](m *sync.Map, key string, files []string, read func() (T, error)) (T, error) {
	stamps := make([]fileStamp, len(files))
	for i, f := range files {
		stamps[i] = stampOf(f)
	}
	if c, ok := m.Load(key); ok {
		if c := c.(*readOnce[T]); sameStamps(c.stamps, stamps) {
			return c.v, nil
		}
	}
	v, err := read()
	if err != nil {
		return v, err
	}
	m.Store(key, &readOnce[T]{stamps: stamps, v: v})
	return v, nil
}

func sameStamps(a, b []fileStamp) bool {
	for i := range a {
		if a[i].size != b[i].size || !a[i].mtime.Equal(b[i].mtime) || a[i].there != b[i].there {
			return false
		}
	}
	return true
}
