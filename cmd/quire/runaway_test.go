//go:build linux

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"quire/fold"
)

// runawayPage is a workflow whose page's module never returns from a fold
// of a run_succeeded: a runaway module.
const runawayPage = `document:
  name: spin
page:
  data:
    language: typescript
    source:
      events:
        - type: run_succeeded
    views:
      note: text
    module: |
      export function fold(view: View, event: Event): View {
        let n = 0;
        for (;;) n++;
      }
  runs: |
    {{ views.note.text }}
`

// The work bound of a page's fold counts the CPU time the fold spends,
// so a module that loops for ever is stopped at the page format's 500
// checkpoints (5 s of CPU) whatever else the machine runs, and its views
// stall as work: the CLI's render answers with the page format's line,
// and the fold's tries of that one event spend the bound once in all.
// Before, on a loaded machine each try ran out of its 10 s of wall time
// before it had used its CPU, and the render waited out the 20 tries (224
// s at a load of 12 to 14). make test renders on the machine as the other
// tests leave it; QUIRE_TEST_LONG renders with the render and three busy
// processes the test starts held to one processor, where the fold gets a
// quarter of it.
func TestCLIRenderStopsARunawayModule(t *testing.T) {
	t.Parallel()
	loaded := os.Getenv("QUIRE_TEST_LONG") != ""
	dir, v, project := newCLIVault(t)
	quire(t, "", v, "call", "create_playbook", "--args", `{"playbook":"lab","name":"Lab"}`)
	args, _ := json.Marshal(map[string]string{"playbook": "lab", "type": "workflow", "name": "spin", "source": runawayPage})
	if code, out, errs := quire(t, string(args), v, "call", "create_definition", "--args", "-"); code != 0 {
		t.Fatalf("create_definition: %d %s %s", code, out, errs)
	}
	code, out, errs := quire(t, "", v, "run", "start", "--playbook", "lab", "--name", "spin", "--member-of", project,
		"--executor", "agent-7", "--authorized-by", "ana", "--json")
	var r struct {
		RunID string `json:"run_id"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("run start: %d %s %s", code, out, errs)
	}
	if code, out, errs := quire(t, "", v, "run", "end", "succeeded", "--playbook", "lab", "--run", r.RunID, "--output", `{}`, "--actor", "agent-7"); code != 0 {
		t.Fatalf("run end: %d %s %s", code, out, errs)
	}

	// The render in a process of its own (its fold workers are its
	// children), killed if it is still folding after two minutes. The
	// vault's first fold compiles QuickJS into its cache (some 0.7 s of
	// CPU, many times that under the race detector): done here first, so
	// the render's CPU is its fold's.
	warmQuickJS(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := quireProcess(nil, "--vault", dir, "page", "render", "--playbook", "lab", "--name", "spin", "--json")
	cmd = exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	cmd.Env = append(os.Environ(), "QUIRE_TEST_AS_QUIRE=1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cpu := -1
	if loaded {
		cpu = lastCPU(t)
		for range 3 {
			busy(t, cpu)
		}
	}
	start := time.Now()
	if err := startOn(cmd, cpu); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	took := time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("the render of a runaway module was still folding after %v", took)
	}
	if err != nil {
		t.Fatalf("render: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	// The CPU time of the render and its fold workers, which it waited for.
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	spent := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	var d struct {
		Page struct {
			Runs     string        `json:"runs"`
			Standing fold.Standing `json:"standing"`
		} `json:"page"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &d); err != nil {
		t.Fatalf("render: %v\n%s", err, stdout.String())
	}
	const stalledLine = "The figures stopped updating because the page could not process an event. Correct the page to continue."
	st := d.Page.Standing.Stalled
	if d.Page.Runs != stalledLine || d.Page.Standing.State != fold.StateStalled || st == nil || st.Kind != fold.KindWork ||
		!strings.HasPrefix(st.Error, "the fold did more work than one fold may: 500 checkpoints (10ms of CPU each)") || st.Event.Type != "run_succeeded" {
		t.Fatalf("after %v: %s", took, stdout.String())
	}
	// On a quarter of a processor a try runs out of its 10 s with some
	// 2.5 s of CPU spent: the work bound is reached over tries.
	if loaded && !strings.Contains(st.Error, ", counted over ") {
		t.Errorf("loaded, the stall says %q", st.Error)
	}
	// The bound is 5 s of CPU for the event, spent once: the tries of
	// the event carry what the earlier ones spent.
	if spent > 7500*time.Millisecond {
		t.Errorf("the render spent %v of CPU on a fold whose bound is 5s of CPU (in %v)", spent, took)
	}
	// A quarter of a processor spends 5 s of CPU in 20 s (and the tries
	// start their workers again).
	if limit := 60 * time.Second; took > limit {
		t.Errorf("the render took %v, over %v", took, limit)
	}
	t.Logf("the render stalled as work in %v, spending %v of CPU", took, spent)

	// The text render answers the page format's line at once.
	code, out, _ = quire(t, "", v, "page", "render", "--playbook", "lab", "--name", "spin")
	if code != 0 || out != "# runs\n\n"+stalledLine+"\n" {
		t.Fatalf("text render: %d %q", code, out)
	}
}

// warmQuickJS compiles QuickJS into the cache the vault's folds use (the
// user's, fold.CompiledCache, as the ledger's), as its first fold does.
func warmQuickJS(t *testing.T, dir string) {
	t.Helper()
	p, err := fold.NewPool(fold.PoolOptions{CacheDir: fold.CompiledCache(filepath.Join(dir, ".quire", "qjs-cache"))})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	prog := fold.NewProgram("export function fold(view, event) { return view; }", nil, 1, nil)
	if _, err := p.Fold(context.Background(), prog, nil, []fold.Event{{Seq: 1, JSON: []byte(`{}`), Time: time.Now()}}); err != nil {
		t.Fatal(err)
	}
}

// lastCPU is the last processor this process may run on.
func lastCPU(t *testing.T) int {
	t.Helper()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	cpu := -1
	for i := range 1024 {
		if set.IsSet(i) {
			cpu = i
		}
	}
	return cpu
}

// startOn starts cmd held to processor cpu (any, if cpu < 0): it forks
// from a thread of its own held to it, whose affinity the child and its
// children inherit. The thread is thrown away with its goroutine.
func startOn(cmd *exec.Cmd, cpu int) error {
	if cpu < 0 {
		return cmd.Start()
	}
	errc := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		var set unix.CPUSet
		set.Set(cpu)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			errc <- err
			return
		}
		errc <- cmd.Start()
	}()
	return <-errc
}

// busy starts a process that spins on processor cpu until the test ends.
func busy(t *testing.T, cpu int) {
	t.Helper()
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	if err := startOn(cmd, cpu); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
}
