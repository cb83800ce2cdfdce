package fsys

import "syscall"

// Release drops the pages of what Map answered from the process's
// resident memory (madvise MADV_DONTNEED): the file's bytes stay in the
// page cache, and a page touched again is read from it.
func Release(b []byte) {
	if len(b) > 0 {
		syscall.Madvise(b, syscall.MADV_DONTNEED)
	}
}
