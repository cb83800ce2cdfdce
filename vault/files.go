package vault

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"quire/internal/atomicfile"
	"quire/internal/crashpoint"
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

// AppendLine appends line (which must end in "\n") to the file at abs in one
// write(2) on a descriptor opened with O_APPEND, then fsyncs. One write keeps
// concurrent appenders from interleaving inside a line, which a buffered
// writer could not promise. It returns the offset the line starts at.
//
// A torn last line left by a crash is repaired first (see RepairTail), so
// the new line never continues a broken one.
func AppendLine(abs string, line []byte) (int64, error) {
	if len(line) == 0 || line[len(line)-1] != '\n' {
		return 0, errors.New("vault: a line must end in a newline")
	}
	if bytes.IndexByte(line[:len(line)-1], '\n') >= 0 {
		return 0, errors.New("vault: a line must not hold a newline")
	}
	if _, err := RepairTail(abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, err
	}
	f, err := os.OpenFile(abs, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	off := fi.Size()
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
	if err := f.Sync(); err != nil {
		return 0, err
	}
	return off, nil
}

// RepairTail cuts a torn last line (bytes after the last newline) off the
// file at abs. It reports whether it cut anything.
func RepairTail(abs string) (bool, error) {
	f, err := os.OpenFile(abs, os.O_RDWR, 0)
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
	crashpoint.Hit()
	if err := f.Truncate(cut); err != nil {
		return false, err
	}
	return true, f.Sync()
}
