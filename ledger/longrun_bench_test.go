package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkLongRunBoundary times a boundary on a run whose run.jsonl is
// long (QUIRE_BENCH_LONG_MB, 130 by default, as issue 28 measured it),
// beside git hash-object of the same file, in turn: git names each
// version of run.jsonl by the SHA-1 of its whole content, so hashing it
// is the floor of what a commit of it costs.
func BenchmarkLongRunBoundary(b *testing.B) {
	mb := 130
	if n, err := strconv.Atoi(os.Getenv("QUIRE_BENCH_LONG_MB")); err == nil && n > 0 {
		mb = n
	}
	tStart := time.Now()
	f := newFixture(b)
	r := f.start()
	step := func() {
		f.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_completed","step":"do/1/work","actor":"agent-7"}`, r.RunID))
	}
	step()
	// The log grown by hand to its size with copies of that line, each
	// with its own seq and id, committed with git.
	abs := filepath.Join(f.dir, filepath.FromSlash(r.Path), "run.jsonl")
	data, err := os.ReadFile(abs)
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	last := string(lines[len(lines)-1])
	var ev struct {
		ID  string `json:"id"`
		Seq int64  `json:"seq"`
	}
	if err := json.Unmarshal([]byte(last), &ev); err != nil {
		b.Fatal(err)
	}
	n, seq := len(lines), ev.Seq
	old, oldID := fmt.Sprintf(`"seq":%d`, seq), fmt.Sprintf(`"%s_%d"`, r.RunID, n)
	if !strings.Contains(last, old) || !strings.Contains(last, oldID) {
		b.Fatalf("the line does not say its seq and id as expected: %s", last)
	}
	var buf bytes.Buffer
	buf.Write(data)
	for buf.Len() < mb<<20 {
		n++
		seq++
		ln := strings.Replace(last, old, fmt.Sprintf(`"seq":%d`, seq), 1)
		ln = strings.Replace(ln, oldID, fmt.Sprintf(`"%s_%d"`, r.RunID, n), 1)
		buf.WriteString(ln + "\n")
	}
	if err := os.WriteFile(abs, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	f.git("add", "-A")
	f.git("commit", "-qm", "a long run, by hand")
	t1 := time.Now()
	step() // the lines numbered and the state derived, once
	first := time.Since(t1)
	b.Logf("the log made in %s, committed by git in %s", t0.Sub(tStart), t1.Sub(t0))
	hash := func() time.Duration {
		t0 := time.Now()
		if out, err := exec.Command("git", "-C", f.dir, "hash-object", abs).CombinedOutput(); err != nil {
			b.Fatalf("git hash-object: %v\n%s", err, out)
		}
		return time.Since(t0)
	}
	var quire, git []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		step()
		quire = append(quire, time.Since(t0))
		git = append(git, hash())
	}
	b.StopTimer()
	med := func(ds []time.Duration) time.Duration {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return ds[len(ds)/2]
	}
	q, g := med(quire), med(git)
	b.ReportMetric(float64(q.Microseconds())/1000, "boundary-ms")
	b.ReportMetric(float64(g.Microseconds())/1000, "hash-object-ms")
	b.ReportMetric(float64(q)/float64(g), "per-hash-object")
	b.ReportMetric(float64(buf.Len())/(1<<20), "log-MB")
	b.ReportMetric(float64(first.Milliseconds()), "first-ms")
}
