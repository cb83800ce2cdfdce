package resident

import (
	"errors"
	"fmt"
	"net"
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

// tryLock takes an exclusive lock on f without waiting: false when another
// process holds it.
func tryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// peerUID is the user id of the process at the other end of c.
func peerUID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return -1, err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return -1, err
	}
	if cerr != nil {
		return -1, cerr
	}
	return int(cred.Uid), nil
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
