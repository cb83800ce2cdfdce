//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// stopLeftovers finds the processes other than this one that hold this
// test binary's standard output or error, once its tests are done: go
// test waits for those streams to close and, two minutes on, fails the
// package with "Test I/O incomplete" without saying whose they were (CI,
// once, after every test had passed). A process that ends within grace
// is let be; one still running after it is named on standard error and
// killed, so the package's answer is its tests'.
func stopLeftovers(grace time.Duration) {
	mine := map[string]bool{}
	for _, fd := range []string{"1", "2"} {
		if l, err := os.Readlink("/proc/self/fd/" + fd); err == nil && strings.HasPrefix(l, "pipe:") {
			mine[l] = true
		}
	}
	if len(mine) == 0 {
		return // a terminal or a file: nothing waits on it
	}
	deadline := time.Now().Add(grace)
	for {
		left := holders(mine)
		if len(left) == 0 {
			return
		}
		if time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		for _, pid := range left {
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
			var quireEnv []string
			for _, kv := range strings.Split(string(env), "\x00") {
				if strings.HasPrefix(kv, "QUIRE_") {
					quireEnv = append(quireEnv, kv)
				}
			}
			fmt.Fprintf(os.Stderr, "cmd/quire tests: process %d (%s; %s) still holds the tests' output %v after they ended: killed\n",
				pid, strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " "), strings.Join(quireEnv, " "), grace)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		return
	}
}

// holders are the processes, this one aside, that hold a pipe in pipes
// open for writing (go test holds its reading end).
func holders(pipes map[string]bool) []int {
	self := os.Getpid()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var pids []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == self {
			continue
		}
		fds, _ := os.ReadDir(d + "/fd")
		for _, fd := range fds {
			if l, err := os.Readlink(d + "/fd/" + fd.Name()); err == nil && pipes[l] && writes(d+"/fdinfo/"+fd.Name()) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// writes says whether the descriptor whose /proc fdinfo is at p is open
// for writing (O_WRONLY or O_RDWR in its flags, in octal).
func writes(p string) bool {
	info, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(info), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			return err == nil && flags&3 != 0
		}
	}
	return false
}
