//go:build !linux

package resident

import (
	"net"
	"os"
	"os/exec"
)

// Supported: the front hands calls to a resident on Linux only; here it
// always runs the engine, and `quire resident` refuses.
const Supported = false

func ownedBySelf(os.FileInfo) error      { return errLinuxOnly }
func tryLock(*os.File) (bool, error)     { return false, errLinuxOnly }
func peerUID(*net.UnixConn) (int, error) { return -1, errLinuxOnly }
func detach(*exec.Cmd)                   {}
func noResident(error) bool              { return false }
