//go:build !windows

package main

import (
	"os/exec"
	"syscall"
)

// detach makes cmd a process of its own session, so that a signal to the
// terminal's process group (an interrupt typed after the command) does
// not stop it.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }
