//go:build !linux

package fsys

import "os"

// Reserve allocates a file's blocks ahead of its writes where the system
// can (Linux only; see reserve_linux.go).
func Reserve(f *os.File, size int64) {}
