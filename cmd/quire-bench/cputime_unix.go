//go:build unix

package main

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process has used (user and system), the
// figure that holds on a machine shared with other work.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
