package vault

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"quire/internal/atomicfile"
	"quire/internal/crashpoint"
	"quire/internal/fsys"
)

// CleanRel checks a slash-separated path relative to the vault's root and
// returns it cleaned. It refuses an empty path, an absolute one, one that
// climbs out with "..", and one holding a backslash or a NUL.
func CleanRel(rel string) (string, error) {
	if rel == "" {
		return "", errors.New("empty path")
	}
	if strings.ContainsAny(rel, "\\\x00") {
		return "", fmt.Errorf("path %q holds a backslash or NUL", rel)
	}
	if path.IsAbs(rel) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("path %q is absolute", rel)
	}
	c := path.Clean(rel)
	if c == ".." || strings.HasPrefix(c, "../") || c == "." {
		return "", fmt.Errorf("path %q leaves the vault", rel)
	}
	return c, nil
}

// Join returns the absolute path of rel inside the vault, refusing a path
// that leaves it, lexically or through a symbolic link on the way (the last
// element may be absent; if it exists and is a link, it is refused too).
func (v *Vault) Join(rel string) (string, error) {
	c, err := CleanRel(rel)
	if err != nil {
		return "", err
	}
	cur := v.root
	parts := strings.Split(c, "/")
	for _, p := range parts {
		cur = filepath.Join(cur, p)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return "", fmt.Errorf("path %q passes through the symbolic link %s", rel, p)
		}
	}
	return filepath.Join(v.root, filepath.FromSlash(c)), nil
}

// WriteAtomic replaces the file at abs with data so that a reader sees the
// old contents or the new, never a part (see internal/atomicfile).
func WriteAtomic(abs string, data []byte) error { return atomicfile.Write(abs, data) }

// WriteDerived replaces a file derived from durable ones (a run's
// run.state.json) as WriteAtomic does for readers, without its fsyncs:
// after the machine stops the file may be older or empty, and is derived
// again (atomicfile.Replace).
func WriteDerived(abs string, data []byte) error { return atomicfile.Replace(abs, data) }

// AppendLine appends line (which must end in "\n") to the file at abs in one
// write(2) on a descriptor opened with O_APPEND, then fsyncs. One write keeps
// concurrent appenders from interleaving inside a line, which a buffered
// writer could not promise. It returns the offset the line starts at.
//
// A torn last line left by a crash is repaired first (see RepairTail), so
// the new line never continues a broken one.
func AppendLine(abs string, line []byte) (int64, error) {
	return appendLine(abs, line, os.O_CREATE, nil, nil)
}

// AppendLineAt is AppendLine calling before with the offset the line will
// start at, once the tail is repaired and before the line is written: a
// refusal of before writes nothing. A run's event takes its seq there (the
// history's record, written before the line it numbers). The file is
// opened once for all of it: an event's append opened, stat'ed and read
// the log's tail three times, a tenth of an append's system calls. Unlike
// AppendLine it appends to a file that exists, never makes one.
func AppendLineAt(abs string, line []byte, before func(off int64) error) (int64, error) {
	return appendLine(abs, line, 0, before, nil)
}

// AppendEventLine is AppendLineAt for a write of a group (vault/group.go),
// which holds the lock: the line's fsync is the group's (SyncAtEnd). An
// event's two fsyncs, one after the other under the lock, were most of the
// time 16 clients' appends held it. Outside a group it is AppendLineAt.
func (v *Vault) AppendEventLine(abs string, line []byte, before func(off int64) error) (int64, error) {
	return appendLine(abs, line, 0, before, v.SyncAtEnd)
}

// SyncAtEnd hands f, written, to the write's group, which syncs and
// closes it at its end: for every file its writes handed it, side by side
// (the file system makes one commit of its journal for fsyncs that wait at
// once), before its objects are written and the branch moves, and before
// any write of the group is answered. A file the group holds already (two
// events of one run, the records of a playbook's history) is closed at
// once: the one fsync syncs the file, whichever descriptor asks. It answers
// false, keeping f the caller's, outside a group or without the lock.
func (v *Vault) SyncAtEnd(f *os.File) bool {
	if v.grp == nil || !v.locked {
		return false
	}
	fi, err := f.Stat()
	if err == nil {
		for _, held := range v.grp.syncs {
			if held.fi != nil && os.SameFile(fi, held.fi) {
				f.Close()
				return true
			}
		}
	}
	v.grp.syncs = append(v.grp.syncs, heldFile{f, fi})
	return true
}

// appendLine is AppendLine and AppendLineAt; a later that answers true
// takes the file, written, to sync and close it itself.
func appendLine(abs string, line []byte, create int, before func(off int64) error, later func(*os.File) bool) (int64, error) {
	if len(line) == 0 || line[len(line)-1] != '\n' {
		return 0, errors.New("vault: a line must end in a newline")
	}
	if bytes.IndexByte(line[:len(line)-1], '\n') >= 0 {
		return 0, errors.New("vault: a line must not hold a newline")
	}
	f, err := fsys.OpenFile(abs, os.O_RDWR|os.O_APPEND|create, 0o644)
	if err != nil {
		return 0, err
	}
	taken := false
	defer func() {
		if !taken {
			f.Close()
		}
	}()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	off := fi.Size()
	if off > 0 {
		var last [1]byte
		if _, err := f.ReadAt(last[:], off-1); err != nil {
			return 0, err
		}
		if last[0] != '\n' {
			// Rare: mended through a descriptor of its own (a newline is
			// written at an offset, which O_APPEND's does not take).
			if _, err := RepairTail(abs); err != nil {
				return 0, err
			}
			if fi, err = f.Stat(); err != nil {
				return 0, err
			}
			off = fi.Size()
		}
	}
	if before != nil {
		if err := before(off); err != nil {
			return 0, err
		}
	}
	crashpoint.Hit()
	n, err := f.Write(line)
	if err == nil && n != len(line) {
		err = io.ErrShortWrite
	}
	if err != nil {
		// Leave no part of the line behind.
		_ = f.Truncate(off)
		return 0, err
	}
	if later != nil && later(f) {
		taken = true
		return off, nil
	}
	if err := f.Sync(); err != nil {
		return 0, err
	}
	return off, nil
}

// RepairTail mends the last line of the file at abs when it lacks its
// newline. A last line that is a whole JSON value (a line written by hand,
// or whose newline alone was lost) is kept and given its newline; anything
// else is a torn line (a write cut short), which is moved aside into the
// vault's quarantine (see CutTail) and cut off. It reports whether it
// changed the file.
func RepairTail(abs string) (bool, error) {
	f, err := fsys.OpenFile(abs, os.O_RDWR, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	size := fi.Size()
	if size == 0 {
		return false, nil
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], size-1); err != nil {
		return false, err
	}
	if last[0] == '\n' {
		return false, nil
	}
	// Find the last newline, reading backwards in blocks.
	const block = 64 << 10
	end := size
	cut := int64(0)
	buf := make([]byte, block)
	for end > 0 {
		start := max(end-block, 0)
		b := buf[:end-start]
		if _, err := f.ReadAt(b, start); err != nil {
			return false, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			cut = start + int64(i) + 1
			break
		}
		end = start
	}
	tail := make([]byte, size-cut)
	if _, err := f.ReadAt(tail, cut); err != nil {
		return false, err
	}
	crashpoint.Hit()
	if wholeLine(tail) {
		if _, err := f.WriteAt([]byte{'\n'}, size); err != nil {
			return false, err
		}
		return true, f.Sync()
	}
	if err := quarantine(abs, tail, ".torn"); err != nil {
		return false, err
	}
	if err := f.Truncate(cut); err != nil {
		return false, err
	}
	return true, f.Sync()
}

// wholeLine says whether a last line without its newline is a whole line
// (a JSON value), which lacks only the newline.
func wholeLine(tail []byte) bool { return json.Valid(tail) && bytes.IndexByte(tail, '\n') < 0 }

// maxLine is the longest line GiveNewline looks back for: the longest an
// event line may be (256 KiB, words/event.MaxLine), and more.
const maxLine = 1 << 20

// GiveNewline gives the file at abs the newline its last line lacks when
// that line is whole (see RepairTail), and leaves any other tail as it is.
// A file that another tool wrote without its last newline is read as
// holding that line, before anything numbers the lines after it.
func GiveNewline(abs string) error {
	f, err := fsys.OpenFile(abs, os.O_RDWR, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return err
	}
	// A last byte that is a newline is the answer, as in RepairTail: the
	// tail read whole at every append (a log of under 1 MiB read whole)
	// was a tenth of an append's CPU through 16 clients.
	var last [1]byte
	if _, err := f.ReadAt(last[:], fi.Size()-1); err != nil || last[0] == '\n' {
		return err
	}
	start := max(fi.Size()-maxLine-1, 0)
	buf := make([]byte, fi.Size()-start)
	if _, err := f.ReadAt(buf, start); err != nil {
		return err
	}
	if buf[len(buf)-1] == '\n' {
		return nil
	}
	i := bytes.LastIndexByte(buf, '\n')
	if i < 0 && start > 0 || !wholeLine(buf[i+1:]) {
		return nil // torn: RepairTail's, at the append
	}
	crashpoint.Hit()
	if _, err := f.WriteAt([]byte{'\n'}, fi.Size()); err != nil {
		return err
	}
	return f.Sync()
}

// QuarantineDir is where torn tails are kept, under the vault's root: a
// file <path of the file it was cut from>.<UTC time>.torn holding the bytes
// cut. quire check lists them; they are for a person to read, and to
// delete once read.
const QuarantineDir = QuireDir + "/quarantine"

// CutTail cuts the file at abs back to at, moving the bytes after it into
// the quarantine first, as <path>.<UTC time>.unacknowledged: it is how a
// writer takes back a line that a killed writer reserved and never wrote
// whole, so never acknowledged. quire check does not count those as
// problems (no answer said they were written); they are kept all the same.
func CutTail(abs string, at int64) error {
	f, err := fsys.OpenFile(abs, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() <= at {
		return err
	}
	tail := make([]byte, fi.Size()-at)
	if _, err := f.ReadAt(tail, at); err != nil {
		return err
	}
	if err := quarantine(abs, tail, ".unacknowledged"); err != nil {
		return err
	}
	if err := f.Truncate(at); err != nil {
		return err
	}
	return f.Sync()
}

// quarantine keeps the bytes cut from the file at abs. The vault is the
// nearest folder above abs holding quire.yaml; a file outside a vault, and
// quire's own files under .quire/, keep nothing.
func quarantine(abs string, tail []byte, suffix string) error {
	root := filepath.Dir(abs)
	for {
		if _, err := os.Stat(filepath.Join(root, ConfigFile)); err == nil {
			break
		}
		up := filepath.Dir(root)
		if up == root {
			return nil
		}
		root = up
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || strings.HasPrefix(filepath.ToSlash(rel), QuireDir+"/") {
		return nil
	}
	dst := filepath.Join(root, filepath.FromSlash(QuarantineDir), rel+"."+time.Now().UTC().Format("20060102T150405.000000000Z")+suffix)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return WriteAtomic(dst, tail)
}
