//go:build !windows

package main

import (
	"os/exec"
	"syscall"
	"time"
)

// inOwnGroup makes cmd, once started, the leader of a process group of its
// own, so that killGroup reaches every process it starts.
func inOwnGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills cmd's process group with SIGKILL, waits for cmd and then
// for the group's other members (reaped by init, soon after), up to d; it
// answers false when some member outlived d.
func killGroup(cmd *exec.Cmd, d time.Duration) bool {
	pgid := cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGKILL)
	cmd.Wait()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if syscall.Kill(-pgid, syscall.SIGKILL) != nil {
			return true
		}
	}
	return false
}
