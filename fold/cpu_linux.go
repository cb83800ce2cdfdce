//go:build linux

package fold

import (
	"syscall"
	"time"
	"unsafe"
)

// watchSleep sleeps in the kernel (nanosleep), so the watchdog wakes
// whatever the Go scheduler's timers do.
func watchSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil)
}

// threadClock names the CPU-time clock of the calling OS thread, which the
// caller must have locked with runtime.LockOSThread. Any thread of the
// process may read it (Linux's per-thread CPU clocks: CPUCLOCK_PERTHREAD
// with CPUCLOCK_SCHED, encoded as clock_getcpuclockid does).
func threadClock() int {
	tid := syscall.Gettid()
	return (^tid << 3) | 6
}

// clockCPU reads the CPU time a thread clock counted, in nanoseconds; -1
// when it cannot be read.
func clockCPU(clock int) int64 {
	var ts syscall.Timespec
	_, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, uintptr(clock), uintptr(unsafe.Pointer(&ts)), 0)
	if errno != 0 {
		return -1
	}
	return ts.Nano()
}
