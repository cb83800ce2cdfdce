package main

import (
	"os/exec"
	"time"
)

// inOwnGroup leaves cmd as it is: Windows has no process groups to kill
// whole, so killGroup kills cmd alone.
func inOwnGroup(cmd *exec.Cmd) {}

// killGroup kills cmd and waits for it.
func killGroup(cmd *exec.Cmd, d time.Duration) bool {
	cmd.Process.Kill()
	cmd.Wait()
	return true
}
