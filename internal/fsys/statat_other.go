//go:build !linux && !darwin

package fsys

import (
	"io/fs"
	"os"
	"path/filepath"
)

const (
	modeType    = 0xf000
	modeDir     = 0x4000
	modeRegular = 0x8000
	modeSymlink = 0xa000
)

// Dir is a folder to stamp the files below it by their names relative to
// it (here, os.Lstat of the joined path: no change time).
type Dir struct{ path string }

// OpenDir opens the folder at path.
func OpenDir(path string) (Dir, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Dir{}, err
	}
	if !fi.IsDir() {
		return Dir{}, &fs.PathError{Op: "open", Path: path, Err: fs.ErrInvalid}
	}
	return Dir{path: path}, nil
}

// At opens the folder name below d, not through a link.
func (d Dir) At(name string) (Dir, bool) {
	p := filepath.Join(d.path, filepath.FromSlash(name))
	if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
		return Dir{}, false
	}
	return Dir{path: p}, true
}

// Close closes the folder.
func (d Dir) Close() {}

// Stamp stamps the folder itself.
func (d Dir) Stamp() (Stamp, bool) { return lstat(d.path) }

// Lstat stamps the file at name below d, without following a link.
func (d Dir) Lstat(name string) (Stamp, bool) {
	return lstat(filepath.Join(d.path, filepath.FromSlash(name)))
}

func lstat(p string) (Stamp, bool) {
	fi, err := os.Lstat(p)
	if err != nil {
		return Stamp{}, false
	}
	s := StampOf(fi)
	s.Ino = Inode(fi)
	return s, true
}
