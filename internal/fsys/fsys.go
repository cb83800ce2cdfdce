package fsys

import (
	"io/fs"
	"time"
)

// StatFields are the stat fields git's index records for a file.
type StatFields struct {
	Ctime    time.Time
	Dev, Ino uint64
	UID, GID uint32
}

// Inode answers fi's inode number, 0 where the platform has none.
func Inode(fi fs.FileInfo) uint64 {
	s, _ := Stat(fi)
	return s.Ino
}
