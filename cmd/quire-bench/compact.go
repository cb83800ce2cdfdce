package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"quire/ledger"
	"quire/vault"
)

// benchCompaction records events through the ledger's operations as quire
// serve does, background compaction on, and prints the peak resident
// memory of the process and of the Go heap while it ran, against the
// target (issue 12: under 200 MB at 30,000 events; before, 958 MB), with
// the packs it left (at most log2 of the objects, a geometric progression).
func benchCompaction(events, runs int) {
	dir, err := os.MkdirTemp("", "quire-bench-compact-")
	must(err)
	defer os.RemoveAll(dir)
	v, err := vault.Init(dir, "acme", time.Now())
	must(err)
	v.Close()
	l, err := ledger.Open(dir)
	must(err)
	call := func(op, args string) map[string]any {
		res, err := l.Call(context.Background(), op, json.RawMessage(args))
		must(err)
		raw, _ := json.Marshal(res)
		var m map[string]any
		json.Unmarshal(raw, &m)
		return m
	}
	project := call("create_project", `{"name":"Operations"}`)["uid"].(string)
	call("create_playbook", `{"playbook":"finance","name":"Finance"}`)
	call("create_definition", `{"playbook":"finance","type":"workflow","name":"close","source":"document:\n  name: close\n"}`)

	runtime.GC()
	os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // resets VmHWM
	base := procStatus("VmRSS")
	var heapPeak uint64
	var mu sync.Mutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			mu.Lock()
			heapPeak = max(heapPeak, ms.HeapInuse)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	t0 := time.Now()
	ids := make([]string, runs)
	steps := make([]int, runs)
	for i := range ids {
		ids[i] = call("run_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"close","member_of":[%q],"executor":"agent-7","authorized_by":"ana"}`, project))["run_id"].(string)
	}
	for n := runs; n < events; n++ {
		r := n % runs
		ev := "step_started"
		if steps[r]%2 == 1 {
			ev = "step_completed" // a boundary: a commit
		}
		call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":%q,"step":"do/%d/review","detail":"event %d","actor":"agent-7"}`, ids[r], ev, steps[r]/2, n))
		steps[r]++
	}
	wrote := time.Since(t0)
	must(l.Close()) // waits for a compaction under way
	close(stop)
	wg.Wait()
	peak := procStatus("VmHWM")
	idxs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*.idx"))
	var counts []int
	total := 0
	for _, idx := range idxs {
		n := idxObjects(idx)
		counts = append(counts, n)
		total += n
	}
	sort.Ints(counts)
	fmt.Printf("   %d events (%d runs, a boundary every second event) in %.0f s, compaction in the background: peak RSS %d MB (%d MB before; target under 200 MB, was 958 MB), peak Go heap %d MB; %d packs of %v objects (%d in all)\n",
		events, runs, wrote.Seconds(), peak>>10, base>>10, heapPeak>>20, len(counts), counts, total)
}

// procStatus reads a figure in kB of /proc/self/status.
func procStatus(key string) uint64 { return pidStatus("self", key) }

// pidStatus is a field of a process's /proc/<pid>/status, in kB.
func pidStatus(pid, key string) uint64 {
	f, err := os.Open("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), key+":"); ok {
			n, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// idxObjects is the number of objects of a pack's index (version 2).
func idxObjects(path string) int {
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 8+256*4 {
		return 0
	}
	i := 8 + 255*4
	return int(b[i])<<24 | int(b[i+1])<<16 | int(b[i+2])<<8 | int(b[i+3])
}
