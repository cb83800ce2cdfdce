//go:build !linux

package resident

import (
	"os"
	"os/exec"
)

// Supported: the front hands calls to a resident on Linux only; here it
// always runs the engine, and `quire resident` refuses.
const Supported = false

func ownedBySelf(os.FileInfo) error  { return ErrLinuxOnly }
func TryLock(*os.File) (bool, error) { return false, ErrLinuxOnly }
func dial(string) (*os.File, error)  { return nil, ErrLinuxOnly }
func detach(*exec.Cmd)               {}
func noResident(error) bool          { return false }
