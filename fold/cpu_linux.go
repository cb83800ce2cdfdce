//go:build linux

package fold

import (
	"syscall"
	"time"
	"unsafe"
)

// watchSleep sleeps in the kernel (nanosleep), so the watchdog wakes
// whatever the Go scheduler's timers do. It is a raw system call, unseen
// by the scheduler, so the watchdog keeps its processor while it sleeps:
// a system call the scheduler sees, 200 times a second, had sysmon take
// the processor back at each and poll every 20 µs as if busy, some 9,000
// wakings a second that halved the fold's speed on a shared core
// (docs/fold-speed.md). Nothing else in a worker needs the processor
// while a fold runs.
func watchSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	syscall.RawSyscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
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
// when it cannot be read. A raw system call too: it does not block.
func clockCPU(clock int) int64 {
	var ts syscall.Timespec
	_, _, errno := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, uintptr(clock), uintptr(unsafe.Pointer(&ts)), 0)
	if errno != 0 {
		return -1
	}
	return ts.Nano()
}
