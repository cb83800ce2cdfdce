//go:build unix

package ledger

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A boundary with many pages in one playbook (issue 28): what a boundary
// costs while the keeper keeps 1 or many pages live, and what the keeper
// spends while nothing is written.
func BenchmarkBoundaryWithPages(b *testing.B) {
	for _, n := range []int{1, pagesBenchMany()} {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) { benchBoundaryWithPages(b, n) })
	}
}

func pagesBenchMany() int {
	if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv("QUIRE_BENCH_PAGES"))); err == nil && n > 0 {
		return n
	}
	return 1000
}

func benchBoundaryWithPages(b *testing.B, n int) {
	f := newFixture(b)
	src := source(b, "fulfill-order.yaml")
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("fulfill-order-%04d", i)
		// Each page takes its own definition's runs alone.
		f.call("create_definition", saveArgs("workflow", name, strings.ReplaceAll(src, "subject: workflow/fulfill-order", "subject: workflow/"+name)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	go f.l.Keep(ctx)
	live := func(name string, folded int64) {
		for i := 0; i < 30000; i++ {
			d := f.call("get_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":%q}`, name)).(*Definition)
			if d.Page != nil && d.Page.Standing != nil && d.Page.Standing.State == "live" && d.Page.Standing.Folded >= folded {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		b.Fatalf("the views never read to %d events", folded)
	}
	f.runAt("fulfill-order-0000", "2026-10-30", `{"order":"A-1","channel":"Web","total":20.25}`)
	live("fulfill-order-0000", 1)
	// Every page built (four at a time, in the order they were saved)
	// before anything is timed.
	live(fmt.Sprintf("fulfill-order-%04d", n-1), 0)
	// Making n definitions left their objects loose: packed now, so that
	// a compaction of them is not timed as the boundaries'.
	if err := f.l.v.Compact(ctx); err != nil {
		b.Fatal(err)
	}
	// Idle: what the keeper spends on n live pages while nothing is written.
	c0 := processCPU()
	time.Sleep(3 * time.Second)
	idle := float64(processCPU()-c0) / float64(3*time.Second)
	var ds []time.Duration
	if f := os.Getenv("QUIRE_BENCH_CPUPROFILE"); f != "" {
		// The timed part alone: making the pages costs far more.
		out, err := os.Create(f)
		if err != nil {
			b.Fatal(err)
		}
		pprof.StartCPUProfile(out)
		defer pprof.StopCPUProfile()
	}
	b.ResetTimer()
	c1 := processCPU()
	for i := 0; i < b.N; i++ {
		// Two boundaries, the second an event one page takes.
		t0 := time.Now()
		f.runAt("fulfill-order-0000", "2026-10-31", `{"order":"A-2","channel":"Web","total":20.25}`)
		ds = append(ds, time.Since(t0))
	}
	live("fulfill-order-0000", int64(b.N)+1)
	b.StopTimer()
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	cpu := processCPU() - c1
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
	b.ReportMetric(idle*100, "idle-%core")
}

// processCPU is the CPU this process has spent, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
