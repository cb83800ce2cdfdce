// Command quire-bench prints the figures `make bench` promises, measured
// side by side in one run: a boundary's commit through quire's object-level
// committer against `git add <files> && git commit` with the git CLI on the
// same vault, at 1,000, 5,000 and 20,000 runs; the median of an append that
// is not a boundary; and how much the repository grows per boundary before
// and after compaction; and quire check --history over a vault of 5,000
// runs and 50,000 commits, the full walk and the incremental one after it
// (history.go); and the peak memory of recording 30,000 events with
// compaction in the background (compact.go); and boundaries and appends
// over HTTP from 1 and 16 clients, beside the git CLI (boundary.go); and
// the reads that must not grow with the vault, at 1,000 and 100,000 runs
// (scale.go).
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"quire/fold"
	"quire/vault"
)

func main() {
	// A ledger it opens folds (a page's views) in workers of this program.
	fold.ServeIfWorker()
	sizes := flag.String("runs", "1000,5000,20000", "vault sizes, in runs")
	rounds := flag.Int("rounds", 40, "boundaries measured per side and size")
	hist := flag.String("history", "5000x50000", "runs x commits of the vault whose history quire check --history walks; empty to skip")
	histRounds := flag.Int("history-rounds", 3, "full walks of the history timed")
	doorRounds := flag.Int("door-rounds", 40, "boundaries measured per door and size (a multiple of 10)")
	only := flag.String("only", "commit,doors,boundary,mirror,compact,history,scale", "the sections to run: commit (quire's committer vs the git CLI), doors (a boundary from MCP, quire call and the git CLI), boundary (boundaries and appends over HTTP, 1 and 16 clients), mirror (pushes to a remote), compact (background compaction's memory), history, scale (the reads at 100,000 runs)")
	boundaryRuns := flag.String("boundary-runs", "1000,100000", "vault sizes, in runs, of the boundary section (the vault of 100,000 runs takes about 7 minutes to make, once: it is kept under the temporary folder)")
	boundaryRounds := flag.Int("boundary-rounds", 50, "boundaries a client records in the boundary section (one client alone: four times as many)")
	scaleSizes := flag.String("scale-runs", "1000,100000", "the scale section's vault sizes, in runs")
	scaleRounds := flag.Int("scale-rounds", 20, "rounds of each read the scale section times")
	scaleMemOnly := flag.Bool("scale-memory-only", false, "the scale section measures quire serve's memory alone (200 boundaries and reads over HTTP at each size), without its reads and checks")
	scaleCheckRounds := flag.Int("scale-check-rounds", 3, "rounds of quire check, its variants and git status the scale section times")
	mirrorRate := flag.Int("mirror-rate", 100, "boundaries a second the mirror's writer records")
	mirrorSecs := flag.Int("mirror-secs", 10, "seconds the mirror's writer records for")
	lagRounds := flag.Int("lag-rounds", 20, "boundaries whose lag to a replica is measured")
	quireBin := flag.String("quire", "", "the quire binary the doors run; built from this tree when empty")
	compactEvents := flag.Int("compact-events", 30000, "events recorded with background compaction, its memory measured; 0 to skip")
	sum := flag.Bool("summarize", false, "read go test -bench output on stdin and print medians, ratios and targets")
	flag.Parse()
	if *sum {
		summarize(os.Stdin, os.Stdout)
		return
	}
	want := map[string]bool{}
	for _, s := range strings.Split(*only, ",") {
		want[strings.TrimSpace(s)] = true
	}
	ns := sizesOf(*sizes)
	if want["commit"] {
		benchCommitSection(ns, *rounds)
	}
	if want["doors"] {
		benchDoors(ns, *doorRounds, *quireBin)
	}
	if want["boundary"] {
		benchBoundary(sizesOf(*boundaryRuns), *boundaryRounds, *quireBin)
	}
	if want["mirror"] {
		benchMirror(*quireBin, 1000, *doorRounds, *mirrorRate, *mirrorSecs)
		benchReplicaLag(*quireBin, *lagRounds)
	}
	if want["compact"] && *compactEvents > 0 {
		fmt.Println("== Background compaction: peak memory while recording events through the ledger")
		benchCompaction(*compactEvents, 300)
	}
	if want["scale"] {
		fmt.Println("== The reads at scale: list_runs, get_event, quire check and git status, side by side at each size")
		benchScale(sizesOf(*scaleSizes), *scaleRounds, *scaleCheckRounds, *quireBin, *scaleMemOnly)
	}
	var runs, commits int
	if _, err := fmt.Sscanf(*hist, "%dx%d", &runs, &commits); want["history"] && err == nil && runs > 0 && commits > runs {
		fmt.Printf("== quire check --history: %d runs, %d commits\n", runs, commits)
		benchHistory(runs, commits, *histRounds)
	}
}

// sizesOf reads a list of vault sizes, "1000,5000".
func sizesOf(list string) []int {
	var ns []int
	for _, s := range strings.Split(list, ",") {
		var n int
		if _, err := fmt.Sscan(s, &n); err == nil && n > 0 {
			ns = append(ns, n)
		}
	}
	return ns
}

func benchCommitSection(ns []int, rounds int) {
	fmt.Println("== Boundary commit: quire (object level) vs git CLI (git add <files> && git commit), same vault, interleaved")
	fmt.Printf("%-7s %-8s %12s %12s %12s %12s %8s\n", "runs", "files", "quire p50", "quire p99", "git p50", "git p99", "ratio")
	for _, n := range ns {
		benchCommits(n, rounds)
	}
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "quire-bench:", err)
		os.Exit(1)
	}
}

func git(dir string, args ...string) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=b@x", "GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=b@x")
	if out, err := cmd.CombinedOutput(); err != nil {
		must(fmt.Errorf("git %v: %v\n%s", args, err, out))
	}
}

func benchCommits(runs, rounds int) {
	dir, err := os.MkdirTemp("", "quire-bench-")
	must(err)
	defer os.RemoveAll(dir)
	v, err := vault.Init(dir, "bench", time.Now())
	must(err)
	names := make([]string, runs)
	for i := range names {
		names[i] = fmt.Sprintf("playbook-runs/close-the-month-019a4012-7c3e-7d10-9b2a-%012x-2026-11-01", i)
		d := filepath.Join(dir, names[i])
		must(os.MkdirAll(d, 0o755))
		for _, f := range []string{"definition.md", "thread.md", "run.jsonl", "run.state.json"} {
			must(os.WriteFile(filepath.Join(d, f), []byte(fmt.Sprintf("%s of run %d\n", f, i)), 0o644))
		}
	}
	git(dir, "add", "-A")
	git(dir, "commit", "-q", "-m", "seed")
	v.Close()
	v, err = vault.Open(dir)
	must(err)
	// Pack the seed's loose objects first, and compact between blocks rather
	// than in the background of the measured commits (its cost is printed
	// on its own below, at 5,000 runs).
	must(v.Compact(context.Background()))
	v.SetAutoCompact(false)
	line := []byte(`{"event":"step_completed","timestamp":"2026-11-01T09:30:12.345Z","step":"do/1/review","detail":"Reviewed 14 entries","seq":1042}` + "\n")
	touch := func(run string) []string {
		abs := filepath.Join(dir, run)
		_, err := vault.AppendLine(filepath.Join(abs, "run.jsonl"), line)
		must(err)
		must(vault.WriteAtomic(filepath.Join(abs, "run.state.json"), []byte(fmt.Sprintf(`{"last_seq":%d}`, rand.Int()))))
		return []string{run + "/run.jsonl", run + "/run.state.json"}
	}
	// The two sides take turns in blocks of ten boundaries: each side's
	// first commit after the other's pays for reading the index the other
	// wrote (git rewrites .git/index whole; quire reloads it when its stat
	// changed), which a vault written by quire alone never does. That first
	// commit of each block is left out on both sides.
	var quire, cli []time.Duration
	const block = 10
	for b := 0; b < (rounds+block-1)/block; b++ {
		must(v.Compact(context.Background()))
		for i := 0; i <= block; i++ {
			files := touch(names[rand.Intn(runs)])
			t0 := time.Now()
			must(v.Locked(func() error {
				_, err := v.Commit(files, vault.Signature{Name: "agent-7", When: time.Now()}, "bench: step_completed")
				return err
			}))
			if d := time.Since(t0); i > 0 {
				quire = append(quire, d)
			}
		}
		for i := 0; i <= block; i++ {
			files := touch(names[rand.Intn(runs)])
			t0 := time.Now()
			git(dir, append([]string{"add"}, files...)...)
			git(dir, "commit", "-q", "-m", "bench: step_completed")
			if d := time.Since(t0); i > 0 {
				cli = append(cli, d)
			}
		}
	}
	qp50, qp99 := pct(quire, 50), pct(quire, 99)
	gp50, gp99 := pct(cli, 50), pct(cli, 99)
	fmt.Printf("%-7d %-8d %12s %12s %12s %12s %7.1fx\n", runs, runs*4, ms(qp50), ms(qp99), ms(gp50), ms(gp99), float64(gp50)/float64(qp50))
	if runs == 5000 {
		appendMedian(dir, names)
		growth(v, dir, names, touch)
	}
	v.Close()
}

func appendMedian(dir string, names []string) {
	var ds []time.Duration
	line := []byte(`{"event":"step_started","timestamp":"2026-11-01T09:30:12.345Z","step":"do/1/review","detail":"","seq":1041}` + "\n")
	for i := 0; i < 200; i++ {
		p := filepath.Join(dir, names[i%len(names)], "run.jsonl")
		t0 := time.Now()
		_, err := vault.AppendLine(p, line)
		must(err)
		ds = append(ds, time.Since(t0))
	}
	fmt.Printf("   append that is not a boundary (one write + fsync), 5,000 runs: median %s, p99 %s\n", ms(pct(ds, 50)), ms(pct(ds, 99)))
}

func growth(v *vault.Vault, dir string, names []string, touch func(string) []string) {
	size := func() int64 {
		var n int64
		filepath.Walk(filepath.Join(dir, ".git", "objects"), func(_ string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				n += fi.Size()
			}
			return nil
		})
		return n
	}
	must(v.Compact(context.Background()))
	before := size()
	const n = 100
	for i := 0; i < n; i++ {
		files := touch(names[rand.Intn(len(names))])
		must(v.Locked(func() error {
			_, err := v.Commit(files, vault.Signature{Name: "agent-7", When: time.Now()}, "bench")
			return err
		}))
	}
	v.Close() // waits for any background compaction
	loose := size()
	t0, c0 := time.Now(), cpuTime()
	must(v.Compact(context.Background()))
	took, cpu := time.Since(t0), cpuTime()-c0
	packed := size()
	fmt.Printf("   growth per boundary at 5,000 runs: %.1f KB as loose objects, %.1f KB after compaction (which takes %.1f ms per boundary, in the background, %.1f ms of CPU)\n",
		float64(loose-before)/n/1024, float64(packed-before)/n/1024, float64(took.Microseconds())/1000/n, float64(cpu.Microseconds())/1000/n)
}

func pct(ds []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (len(s)*p + 99) / 100
	if i >= len(s) {
		i = len(s) - 1
	}
	if p == 50 {
		i = len(s) / 2
	}
	return s[i]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
