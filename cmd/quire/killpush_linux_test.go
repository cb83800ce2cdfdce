package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// killReceivePack waits up to d for a git receive-pack into the bare
// repository at bare (a push being taken) and kills it with SIGKILL,
// answering whether it found one. It reads /proc (Linux).
func killReceivePack(bare string, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(time.Millisecond) {
		cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, c := range cmdlines {
			b, err := os.ReadFile(c)
			if err != nil || !bytes.Contains(b, []byte("receive-pack")) {
				continue
			}
			// It runs in the repository (git daemon and http-backend
			// start it there, naming it ".").
			if cwd, _ := os.Readlink(filepath.Join(filepath.Dir(c), "cwd")); cwd != bare && !bytes.Contains(b, []byte(bare)) {
				continue
			}
			var pid int
			if _, err := fmt.Sscanf(filepath.Base(filepath.Dir(c)), "%d", &pid); err == nil && syscall.Kill(pid, syscall.SIGKILL) == nil {
				return true
			}
		}
	}
	return false
}
