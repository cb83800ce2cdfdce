//go:build !linux && !darwin

package fsys

import "io/fs"

// Stat answers false: outside Linux and macOS quire reads no stat fields
// beyond size, mode and modification time.
func Stat(fi fs.FileInfo) (s StatFields, ok bool) { return s, false }
