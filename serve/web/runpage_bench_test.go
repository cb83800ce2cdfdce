package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"quire/ledger"
	"quire/serve"
	"quire/vault"
)

// BenchmarkRunPage50000: a run's page in a playbook of 50,000 runs of
// fulfill-order (issue 26: under 50 ms median), answered by the server's
// handler: its result, events, thread, artifacts, state, commits and
// comments, each through its operation. The timed runs are ten of them,
// spread through the index, each with a few steps, a thread, an artifact
// and its end recorded through the operations (so commits of their own);
// the others are copies of one run made through the operations, as
// cmd/quire-bench's vaults are, committed in one commit. The vault is
// kept under the temporary folder (quire-bench-vaults/runpage-*) for the
// next run; QUIRE_BENCH_RUNS sets the runs.
func BenchmarkRunPage50000(b *testing.B) {
	runs := 50_000
	if n, err := strconv.Atoi(os.Getenv("QUIRE_BENCH_RUNS")); err == nil && n > 0 {
		runs = n
	}
	dir, timed := runPageVault(b, runs)
	l, err := ledger.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	go l.Keep(ctx)
	waitLive(b, l, "fulfill-order")
	h := serve.Handler(l, serve.Options{Open: true})
	get := func(id string) time.Duration {
		req := httptest.NewRequest("GET", "http://127.0.0.1/p/operations/runs/"+id, nil)
		rec := httptest.NewRecorder()
		t := time.Now()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "fulfilled") {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
		return time.Since(t)
	}
	for _, id := range timed {
		get(id)
	}
	var times []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		times = append(times, get(timed[i%len(timed)]))
	}
	b.StopTimer()
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(runs), "runs")
}

// waitLive waits until a workflow's views have caught up with the
// history (folding 50,000 events from the start takes seconds), so the
// pages are timed on their own, not beside the keeper's rebuild.
func waitLive(b *testing.B, l *ledger.Ledger, name string) {
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		raw, err := l.Call(context.Background(), "get_definition", json.RawMessage(`{"playbook":"operations","type":"workflow","name":"`+name+`"}`))
		if err != nil {
			b.Fatal(err)
		}
		if p := raw.(*ledger.Definition).Page; p != nil && p.Standing != nil && p.Standing.State == "live" {
			return
		}
	}
	b.Fatalf("the views of %s are not live after 5 minutes", name)
}

// runPageVaultVersion names the shape of the benchmark's vault; change it
// when the shape changes, so that a vault kept from before is made again.
const runPageVaultVersion = "v1"

// runPageVault answers the benchmark's vault of n runs and the ids of the
// runs it times, made once under the temporary folder.
func runPageVault(b *testing.B, n int) (string, []string) {
	dir := filepath.Join(os.TempDir(), "quire-bench-vaults", fmt.Sprintf("runpage-%s-%d", runPageVaultVersion, n))
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("019a4012-7c3e-7d10-9b2a-%012x", i)
	}
	var timed []string
	for k := 0; k < 10; k++ {
		timed = append(timed, ids[k*n/10])
	}
	if _, err := os.Stat(dir + ".ready"); err == nil {
		return dir, timed
	}
	t0 := time.Now()
	os.RemoveAll(dir)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		b.Fatal(err)
	}
	// The run copied is made on a demo that is closed (its server, its
	// keeper, its ledger) before its folder is copied.
	var closers []func()
	d := makeDemo(b, dir, func(f func()) { closers = append(closers, f) }, serve.Options{Open: true}, "fulfill-order")
	r := d.call("run_definition", map[string]any{"playbook": "operations", "type": "workflow", "name": "fulfill-order",
		"member_of": []string{d.project}, "executor": "agent-7", "authorized_by": "ana", "time": "2026-11-01T07:00:00Z"})
	for i := len(closers) - 1; i >= 0; i-- {
		closers[i]()
	}
	copyRun(b, dir, r["run_id"].(string), r["path"].(string), int64(r["last_seq"].(float64)), ids)
	benchGit(b, dir, "add", "-A")
	benchGit(b, dir, "-c", "gc.auto=0", "commit", "-q", "-m", fmt.Sprintf("bench: %d runs", n))
	benchGit(b, dir, "gc", "-q")
	if err := os.RemoveAll(filepath.Join(dir, vault.QuireDir)); err != nil {
		b.Fatal(err)
	}
	l, err := ledger.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	if err := l.Reindex(); err != nil {
		b.Fatal(err)
	}
	d = &demo{t: b, l: l}
	for k, id := range timed {
		for s := 0; s < 3; s++ {
			d.call("record_event", map[string]any{"playbook": "operations", "run_id": id, "event": "step_completed", "actor": "agent-7",
				"step": fmt.Sprintf("do/%d/fulfill", s), "detail": fmt.Sprintf("Step %d done", s+1)})
		}
		d.call("append_thread", map[string]any{"playbook": "operations", "run_id": id, "text": "Packed and **shipped**.", "actor": "agent-7"})
		d.call("put_artifact", map[string]any{"playbook": "operations", "run_id": id, "name": "items.csv", "content": "item,qty\nmug,2\n", "actor": "agent-7"})
		d.call("end_run", map[string]any{"playbook": "operations", "run_id": id, "status": "succeeded", "actor": "agent-7",
			"output": json.RawMessage(fmt.Sprintf(`{"order":"A-%d","channel":"Web","total":%d.25}`, 1000+k, 20+k))})
	}
	l.Close()
	if err := os.WriteFile(dir+".ready", nil, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("made the vault of %d runs in %.1f s (kept in %s)", n, time.Since(t0).Seconds(), dir)
	return dir, timed
}

// copyRun makes the run at rel (its id tmpl, its last seq seq0) into a
// run for each of ids, each a copy with its own id and seq, registered in
// the vault's index in its place.
func copyRun(b *testing.B, dir, tmpl, rel string, seq0 int64, ids []string) {
	files := map[string]string{}
	for _, name := range []string{"definition.md", "context.md", "thread.md", "run.jsonl", "run.state.json", "artifacts/.gitkeep"} {
		data, err := os.ReadFile(filepath.Join(dir, rel, name))
		if err != nil {
			b.Fatal(err)
		}
		files[name] = string(data)
	}
	idxData, err := os.ReadFile(filepath.Join(dir, vault.IndexFile))
	if err != nil {
		b.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(idxData), "\n"), "\n")
	runLine := lines[len(lines)-1] + "\n"
	if err := os.RemoveAll(filepath.Join(dir, rel)); err != nil {
		b.Fatal(err)
	}
	idx, err := os.Create(filepath.Join(dir, vault.IndexFile))
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(idx, 1<<20)
	for _, ln := range lines[:len(lines)-1] {
		w.WriteString(ln)
	}
	base := filepath.Base(rel)
	for i, id := range ids {
		folder := filepath.Join(dir, filepath.Dir(rel), strings.ReplaceAll(base, tmpl, id))
		if err := os.MkdirAll(filepath.Join(folder, "artifacts"), 0o755); err != nil {
			b.Fatal(err)
		}
		seq := seq0 + int64(i)
		log := strings.ReplaceAll(files["run.jsonl"], tmpl, id)
		log = strings.Replace(log, fmt.Sprintf(`"seq":%d,`, seq0), fmt.Sprintf(`"seq":%d,`, seq), 1)
		for name, text := range files {
			text = strings.ReplaceAll(text, tmpl, id)
			switch name {
			case "run.jsonl":
				text = log
			case "run.state.json":
				text = strings.Replace(text, fmt.Sprintf(`"last_seq": %d,`, seq0), fmt.Sprintf(`"last_seq": %d,`, seq), 1)
				text = strings.Replace(text, fmt.Sprintf(`"log_bytes": %d,`, len(files["run.jsonl"])), fmt.Sprintf(`"log_bytes": %d,`, len(log)), 1)
			}
			if err := os.WriteFile(filepath.Join(folder, name), []byte(text), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		w.WriteString(strings.ReplaceAll(runLine, tmpl, id))
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := idx.Close(); err != nil {
		b.Fatal(err)
	}
}

func benchGit(b *testing.B, dir string, args ...string) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=b@x", "GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=b@x")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git %v: %v\n%s", args, err, out)
	}
}
