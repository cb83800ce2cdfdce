package fsys

// Stamp is what a stat says of whether a file changed, as git's index
// compares it: size, modification and change times to the nanosecond,
// inode and mode (type and permission bits). A file written, replaced,
// renamed over or chmod'ed gets another; only a write that also puts both
// times back (which the change time, set by the kernel, cannot be) keeps
// it.
type Stamp struct {
	Size, MTime, CTime int64
	Ino                uint64
	Mode               uint32
}

// IsDir says whether the stamp is a folder's.
func (s Stamp) IsDir() bool { return s.Mode&modeDir == modeDir }

// IsRegular says whether the stamp is a plain file's.
func (s Stamp) IsRegular() bool { return s.Mode&modeType == modeRegular }

// IsSymlink says whether the stamp is a symbolic link's (its own, not
// what it points at).
func (s Stamp) IsSymlink() bool { return s.Mode&modeType == modeSymlink }
