package resident

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// Supported: the front hands calls to a resident on Linux only (the peer's
// credentials are read with SO_PEERCRED); elsewhere it always runs the
// engine.
const Supported = true

func ownedBySelf(fi os.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return errors.New("cannot read its owner")
	}
	if int(st.Uid) != os.Getuid() {
		return fmt.Errorf("it belongs to user %d, not to this user (%d)", st.Uid, os.Getuid())
	}
	return nil
}

// TryLock takes an exclusive lock on f without waiting: false when another
// process holds it.
func TryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// dial connects to the unix socket at path with the system calls
// themselves: the net package would link cgo into the front.
func dial(path string) (*os.File, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Connect(fd, &syscall.SockaddrUnix{Name: path})
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// detach makes cmd a session of its own, so that it outlives the front and
// its terminal's signals.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// noResident says whether a dial's error means no resident listens (no
// socket, or a socket nothing accepts on: a stale one).
func noResident(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
}
