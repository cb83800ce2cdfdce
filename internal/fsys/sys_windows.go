package fsys

import (
	"errors"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// errLink is OpenNoFollow's refusal of a symbolic link.
var errLink = errors.New("a symbolic link")

// Lock takes f's exclusive lock (LockFileEx on its first byte, the whole
// file by convention among quire's processes), waiting for it.
func Lock(f *os.File) error {
	ol := new(windows.Overlapped)
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, ol)
}

// TryLock takes f's exclusive lock if no one holds it, and answers
// whether it took it.
func TryLock(f *os.File) (bool, error) {
	ol := new(windows.Overlapped)
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return false, nil
	}
	return err == nil, err
}

// Unlock releases the lock Lock took.
func Unlock(f *os.File) error {
	ol := new(windows.Overlapped)
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, ol)
}

// OpenNoFollow opens name with flag and perm, refusing a symbolic link at
// its last component. Windows has no O_NOFOLLOW: the last component is
// checked with Lstat before the open, so a link swapped in between the two
// is followed (a weaker guarantee than on Linux and macOS).
func OpenNoFollow(name string, flag int, perm os.FileMode) (*os.File, error) {
	fi, err := os.Lstat(name)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errLink}
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return os.OpenFile(name, flag, perm)
}

// IsLink tells whether err is OpenNoFollow's refusal of a symbolic link.
func IsLink(err error) bool { return errors.Is(err, errLink) }

// Map reads f's whole content into memory (Windows: not mapped, so the
// file stays free to be replaced or removed while it is read).
func Map(f *os.File, size int) ([]byte, error) {
	b := make([]byte, size)
	_, err := io.ReadFull(f, b)
	return b, err
}

// Unmap releases what Map answered: nothing to do.
func Unmap(b []byte) error { return nil }

// Gone tells whether no process with the id pid exists.
func Gone(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return errors.Is(err, windows.ERROR_INVALID_PARAMETER)
	}
	defer windows.CloseHandle(h)
	var code uint32
	return windows.GetExitCodeProcess(h, &code) == nil && code != 259 // STILL_ACTIVE
}

// KillSelf ends this process at once, as kill -9 would: no deferred
// function runs and no file is closed by Go.
func KillSelf() {
	p, _ := os.FindProcess(os.Getpid())
	p.Kill()
}

// IsReadOnly tells whether err says a file may not be written here: its
// permissions (a read-only file or folder, a share without write access).
func IsReadOnly(err error) bool {
	return errors.Is(err, os.ErrPermission) || errors.Is(err, windows.ERROR_WRITE_PROTECT)
}
