package fold

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// threadSwitches sums the voluntary context switches of every thread of
// a process.
func threadSwitches(t *testing.T, pid int) int {
	t.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	if err != nil || len(tasks) == 0 {
		t.Fatalf("the threads of process %d: %v", pid, err)
	}
	n := 0
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			continue // a thread that ended
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
				k, _ := strconv.Atoi(strings.TrimSpace(v))
				n += k
			}
		}
	}
	return n
}

// A worker folding wakes little besides the fold: its watchdog a few
// hundred times a second, not Go's sysmon every 20 µs, as it did while
// the watchdog's sleeps were system calls Go's scheduler saw (sysmon then
// took the watchdog's processor back at each, and polled as if busy). On
// a core shared with other work that polling halved the fold's speed
// (docs/fold-speed.md).
func TestFoldingWakesLittleElse(t *testing.T) {
	pg := examplePage(t, "close-the-month")
	prog, _ := exampleProgram(t, "close-the-month", pg.views)
	hist, _ := exampleEvents("close-the-month", pg.output, 4000)
	pool, err := NewPool(PoolOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	res, err := pool.Fold(t.Context(), prog, nil, hist[:1000])
	if err != nil || res.Stall != nil {
		t.Fatal(err, res.Stall)
	}
	pool.mu.Lock()
	pid := pool.idle[0].cmd.Process.Pid
	pool.mu.Unlock()
	before, t0 := threadSwitches(t, pid), time.Now()
	for i := 1000; i < len(hist); i += 1000 {
		if res, err = pool.Fold(t.Context(), prog, res.Views, hist[i:i+1000]); err != nil || res.Stall != nil {
			t.Fatal(err, res.Stall)
		}
	}
	took := time.Since(t0)
	rate := float64(threadSwitches(t, pid)-before) / took.Seconds()
	t.Logf("%d events in %v: the worker's threads slept and woke %.0f times a second", len(hist)-1000, took, rate)
	if rate > 3000 {
		t.Fatalf("the worker's threads slept and woke %.0f times a second while it folded (its watchdog: 200)", rate)
	}
}
