package fsys

import "io/fs"

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
func (s Stamp) IsDir() bool { return s.Mode&modeType == modeDir }

// IsRegular says whether the stamp is a plain file's.
func (s Stamp) IsRegular() bool { return s.Mode&modeType == modeRegular }

// IsSymlink says whether the stamp is a symbolic link's (its own, not
// what it points at).
func (s Stamp) IsSymlink() bool { return s.Mode&modeType == modeSymlink }

// StampOf is the stamp of what fi describes (an os.Lstat's, a DirEntry's
// Info): its kind and permission bits, its size and times, and its change
// time and inode where the platform gives them (Stat; none: 0).
func StampOf(fi fs.FileInfo) Stamp {
	mode := uint32(fi.Mode().Perm())
	switch {
	case fi.IsDir():
		mode |= modeDir
	case fi.Mode().IsRegular():
		mode |= modeRegular
	case fi.Mode()&fs.ModeSymlink != 0:
		mode |= modeSymlink
	case fi.Mode()&fs.ModeSocket != 0:
		mode |= 0xc000
	case fi.Mode()&fs.ModeCharDevice != 0:
		mode |= 0x2000
	case fi.Mode()&fs.ModeDevice != 0:
		mode |= 0x6000
	default:
		mode |= 0x1000 // a fifo, or what else there is
	}
	s := Stamp{Size: fi.Size(), MTime: fi.ModTime().UnixNano(), Mode: mode}
	if st, ok := Stat(fi); ok {
		s.CTime, s.Ino = st.Ctime.UnixNano(), st.Ino
	}
	return s
}
