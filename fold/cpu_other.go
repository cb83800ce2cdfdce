//go:build !linux

package fold

import "time"

var start = time.Now()

// threadClock has no per-thread CPU clock outside Linux: the work bound
// counts the fold's running (wall) time instead.
func threadClock() int { return 0 }

func clockCPU(int) int64 { return int64(time.Since(start)) }

func watchSleep(d time.Duration) { time.Sleep(d) }
