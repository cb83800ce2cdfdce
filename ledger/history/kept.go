package history

import (
	"io/fs"
	"os"
	"sync"

	"quire/internal/fsys"
)

// keptFile is a small file's text as this store last read or wrote it,
// with the file's stat then (size, modification and change times,
// inode): while the file's stat is that one, the text is the file's, and
// a write reads a stat instead of the file. A history's git stamp and
// git's HEAD are read so at every write; git writes HEAD anew and renames
// it into place, and quire writes the stamp under the vault's lock.
type keptFile struct {
	mu   sync.Mutex
	at   keptStat
	text string
	held bool
}

type keptStat struct {
	size, mtime, ctime int64
	ino                uint64
}

func keptStatOf(fi fs.FileInfo) keptStat {
	k := keptStat{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fsys.Stat(fi); ok {
		k.ctime, k.ino = st.Ctime.UnixNano(), st.Ino
	}
	return k
}

// read answers the file's text: the kept one while the file's stat is
// the one it was kept with, else the file read again. The stat is taken
// before the read, so a text is never kept with a stat later than its
// own: a file changed in between is read again next time.
func (k *keptFile) read(p string) (string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	at := keptStatOf(fi)
	k.mu.Lock()
	if k.held && k.at == at {
		defer k.mu.Unlock()
		return k.text, nil
	}
	k.mu.Unlock()
	data, err := fsys.ReadFile(p)
	if err != nil {
		return "", err
	}
	k.keep(at, string(data))
	return string(data), nil
}

// wrote keeps text as the file's after the caller wrote it, holding the
// lock every writer of the file holds; a file it cannot stat is read
// again next time.
func (k *keptFile) wrote(p, text string) {
	fi, err := os.Stat(p)
	if err != nil {
		k.forget()
		return
	}
	k.keep(keptStatOf(fi), text)
}

func (k *keptFile) keep(at keptStat, text string) {
	k.mu.Lock()
	k.at, k.text, k.held = at, text, true
	k.mu.Unlock()
}

func (k *keptFile) forget() {
	k.mu.Lock()
	k.held = false
	k.mu.Unlock()
}
