//go:build !linux

package main

import "time"

// stopLeftovers reads /proc: Linux only (leftover_linux_test.go).
func stopLeftovers(time.Duration) {}
