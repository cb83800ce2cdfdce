package main

import (
	"time"

	"golang.org/x/sys/windows"
)

// cpuTime is the CPU time this process has used (user and system), the
// figure that holds on a machine shared with other work.
func cpuTime() time.Duration {
	var created, exited, kernel, user windows.Filetime
	windows.GetProcessTimes(windows.CurrentProcess(), &created, &exited, &kernel, &user)
	ticks := func(f windows.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
	return time.Duration((ticks(kernel) + ticks(user)) * 100) // in 100 ns ticks
}
