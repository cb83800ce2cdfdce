//go:build !(linux || darwin)

package fsys

import "os"

// OpenFile is os.OpenFile (open_unix.go says why it is not on Linux).
func OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}

// Open is os.Open.
func Open(name string) (*os.File, error) { return os.Open(name) }

// ReadFile is os.ReadFile.
func ReadFile(name string) ([]byte, error) { return os.ReadFile(name) }
