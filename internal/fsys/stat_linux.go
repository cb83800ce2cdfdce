package fsys

import (
	"io/fs"
	"syscall"
	"time"
)

// Stat answers the fields of fi's stat that git's index keeps, and false
// when fi carries none.
func Stat(fi fs.FileInfo) (s StatFields, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return s, false
	}
	return StatFields{
		Ctime: time.Unix(st.Ctim.Sec, st.Ctim.Nsec),
		Dev:   uint64(st.Dev), Ino: st.Ino, UID: st.Uid, GID: st.Gid,
	}, true
}
