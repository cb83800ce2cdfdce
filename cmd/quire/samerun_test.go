package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"quire/fold"
	"quire/internal/gittest"
	"quire/internal/resident"
)

// TestMain lets the test binary stand in for quire: with QUIRE_TEST_AS_QUIRE
// set it runs its arguments as quire would, so tests start real processes;
// so it does with guideRunAsQuire set, for the guide's session.
//
// With QUIRE_TEST_AS_FRONT set, a copy of it named quire-engine is the
// engine and one named quire the front (front_test.go), each process
// noting its arguments in QUIRE_TEST_ENGINE_LOG when it runs as the engine.
func TestMain(m *testing.M) {
	fold.ServeIfWorker()
	compactIfWorker()
	workersForTests = workers
	if os.Getenv(guideRunAsQuire) == "1" {
		os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
	}
	if os.Getenv("QUIRE_TEST_AS_FRONT") != "" {
		if exe, _ := os.Executable(); filepath.Base(exe) != "quire-engine" {
			os.Exit(resident.Front(os.Args))
		}
		noteEngine(os.Args[1:])
		os.Exit(run(append([]string{"quire"}, os.Args[1:]...), os.Stdin, os.Stdout, os.Stderr))
	}
	if os.Getenv("QUIRE_TEST_AS_QUIRE") != "" {
		os.Exit(run(append([]string{"quire"}, os.Args[1:]...), os.Stdin, os.Stdout, os.Stderr))
	}
	code := m.Run()
	stopLeftovers(15 * time.Second)
	os.Exit(code)
}

// workers counts the compaction workers the tests' commands started
// (compactWorker). A sync.WaitGroup it was not: parallel tests wait for it
// in their cleanups while others start workers from a count of zero,
// which a WaitGroup forbids (the race detector, in CI).
var workers = newWorkerCount()

type workerCount struct {
	mu   sync.Mutex
	zero *sync.Cond
	n    int
}

func newWorkerCount() *workerCount {
	w := &workerCount{}
	w.zero = sync.NewCond(&w.mu)
	return w
}

func (w *workerCount) Add(delta int) {
	w.mu.Lock()
	w.n += delta
	if w.n == 0 {
		w.zero.Broadcast()
	}
	w.mu.Unlock()
}

func (w *workerCount) Done() { w.Add(-1) }

// Wait waits until no worker started is still running.
func (w *workerCount) Wait() {
	w.mu.Lock()
	for w.n > 0 {
		w.zero.Wait()
	}
	w.mu.Unlock()
}

// noteEngine notes a run of the engine (TestMain): its arguments, and
// "direct" when the test ran it rather than the front.
func noteEngine(args []string) {
	p := os.Getenv("QUIRE_TEST_ENGINE_LOG")
	if p == "" {
		return
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	how := "via-front"
	if os.Getenv("QUIRE_TEST_DIRECT") != "" {
		how = "direct"
	}
	fmt.Fprintf(f, "%s %s\n", how, strings.Join(args, " "))
}

// Eight processes record on the same run at once with quire call, without
// a time, three rounds: none is refused, every acknowledged event is in
// the history once, seq has no gap, quire check and git fsck are clean.
func TestEightProcessesOnOneRun(t *testing.T) {
	t.Parallel()
	dir, v, project := newCLIVault(t)
	r := struct{ RunID string }{closeRun(t, v, project)}
	const procs, rounds = 8, 3
	acked := map[string]bool{}
	for round := range rounds {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for p := range procs {
			typ := "step_completed" // a boundary: its commit holds the lock longer
			if p%4 == 0 {
				typ = "step_started"
			}
			cmd := exec.Command(os.Args[0], v, "call", "record_event", "--args",
				fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":%q,"step":"do/%d/%d","actor":"agent-7"}`, r.RunID, typ, round, p))
			cmd.Env = append(os.Environ(), "QUIRE_TEST_AS_QUIRE=1")
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, err := cmd.Output()
				var ev struct{ ID string }
				mu.Lock()
				defer mu.Unlock()
				if err != nil || json.Unmarshal(out, &ev) != nil || ev.ID == "" {
					msg := ""
					if ee, ok := err.(*exec.ExitError); ok {
						msg = string(ee.Stderr)
					}
					t.Errorf("round %d process %d: %v %s %s", round, p, err, out, msg)
					return
				}
				acked[ev.ID] = true
			}()
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
	}
	code, out, _ := quire(t, "", v, "call", "list_playbook_events", "--args", `{"playbook":"finance","limit":1000}`)
	var page struct {
		Events []struct {
			ID  string
			Seq int64
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &page) != nil {
		t.Fatalf("list_playbook_events: %d %s", code, out)
	}
	seen := map[string]bool{}
	for i, ev := range page.Events {
		if ev.Seq != int64(i+1) || seen[ev.ID] {
			t.Fatalf("event %s: seq %d at place %d, seen before: %v", ev.ID, ev.Seq, i+1, seen[ev.ID])
		}
		seen[ev.ID] = true
	}
	for id := range acked {
		if !seen[id] {
			t.Fatalf("acknowledged event %s is not in the history", id)
		}
	}
	if len(acked) != procs*rounds {
		t.Fatalf("%d acknowledged", len(acked))
	}
	if code, out, _ := quire(t, "", v, "check"); code != 0 || !strings.HasSuffix(out, " 0 problems\n") {
		t.Fatalf("check: %d %s", code, out)
	}
	if out, err := gittest.Fsck(dir, "--strict"); err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
}

// closeRun makes the playbook finance with a workflow close in the CLI
// vault v and starts a run of it, answering its id.
func closeRun(t *testing.T, v, project string) string {
	t.Helper()
	quire(t, "", v, "call", "create_playbook", "--args", `{"playbook":"finance","name":"Finance"}`)
	quire(t, "", v, "call", "create_definition", "--args", `{"playbook":"finance","type":"workflow","name":"close","source":"document:\n  name: close\n"}`)
	code, out, _ := quire(t, "", v, "call", "run_definition", "--args", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"close","member_of":[%q],"executor":"agent-7","authorized_by":"ana"}`, project))
	var r struct {
		RunID string `json:"run_id"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("run_definition: %d %s", code, out)
	}
	return r.RunID
}
