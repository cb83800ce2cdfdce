//go:build linux || darwin

package fsys

import (
	"errors"
	"os"
	"syscall"
)

// Lock takes f's exclusive whole-file lock (flock), waiting for it.
func Lock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err == nil || !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// TryLock takes f's exclusive whole-file lock if no one holds it, and
// answers whether it took it.
func TryLock(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case !errors.Is(err, syscall.EINTR):
			return false, err
		}
	}
}

// Unlock releases the lock Lock took.
func Unlock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// OpenNoFollow opens name with flag and perm, refusing a symbolic link at
// its last component: the error then satisfies IsLink.
func OpenNoFollow(name string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag|syscall.O_NOFOLLOW, perm)
}

// IsLink tells whether err is OpenNoFollow's refusal of a symbolic link.
func IsLink(err error) bool { return errors.Is(err, syscall.ELOOP) }

// Map maps f's whole content read-only; Unmap releases it.
func Map(f *os.File, size int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
}

// Unmap releases what Map answered.
func Unmap(b []byte) error { return syscall.Munmap(b) }

// Gone tells whether no process with the id pid exists.
func Gone(pid int) bool { return syscall.Kill(pid, 0) == syscall.ESRCH }

// KillSelf ends this process at once, as kill -9 would: no deferred
// function runs and no file is closed by Go.
func KillSelf() { syscall.Kill(os.Getpid(), syscall.SIGKILL) }

// IsReadOnly tells whether err says a file may not be written here: its
// permissions, or a file system mounted read-only.
func IsReadOnly(err error) bool {
	return errors.Is(err, os.ErrPermission) || errors.Is(err, syscall.EROFS)
}
