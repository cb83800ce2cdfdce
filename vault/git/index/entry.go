package index

import (
	"time"

	"quire/vault/git/object"
)

// Entry is one entry of the index: a path, its blob, and the stat git
// keeps of its file to tell, without reading it, whether it changed.
type Entry struct {
	Name       string // slash-separated, relative to the work tree
	Hash       object.Hash
	Mode       object.Mode
	CreatedAt  time.Time // ctime; zero when the stat is not known
	ModifiedAt time.Time // mtime; zero when the stat is not known
	Dev, Inode uint32
	UID, GID   uint32
	Size       uint32 // the file's size, truncated to 32 bits as git does
	Stage      uint8  // 0, or 1 to 3 in a merge's conflict
	// The extended flags (version 3 and later).
	SkipWorktree bool
	IntentToAdd  bool
	// FSMonitorValid: git's file system monitor extension (FSMN) says
	// the file has not changed since the index recorded it, and git
	// status need not stat it. Not a field of the entry's own bytes, and
	// not compared by Same.
	FSMonitorValid bool
}

// Same reports whether two entries say the same thing, field by field.
func Same(a, b *Entry) bool {
	return a.Name == b.Name && a.Hash == b.Hash && a.Mode == b.Mode && a.Size == b.Size &&
		a.CreatedAt.Equal(b.CreatedAt) && a.ModifiedAt.Equal(b.ModifiedAt) &&
		a.Dev == b.Dev && a.Inode == b.Inode && a.UID == b.UID && a.GID == b.GID &&
		a.Stage == b.Stage && a.SkipWorktree == b.SkipWorktree && a.IntentToAdd == b.IntentToAdd
}
