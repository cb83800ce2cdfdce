package vault

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"quire/vault/git/pack"
)

// versions writes n loose blobs of size bytes each, every one the one
// before with a few bytes changed, as a growing log or tree is from one
// boundary to the next. It answers their ids.
func versions(t testing.TB, v *Vault, n, size int) []Hash {
	rng := rand.New(rand.NewSource(int64(n*size + 1)))
	var b strings.Builder
	for b.Len() < size {
		fmt.Fprintf(&b, `{"event":"step_completed","step":"do/%d/review","seq":%d}`+"\n", rng.Intn(1000), b.Len())
	}
	base := []byte(b.String()[:size])
	var ids []Hash
	for i := 0; i < n; i++ {
		at := rng.Intn(size - 16)
		copy(base[at:], fmt.Sprintf("v%015d", i))
		id, err := v.objs.write("blob", base)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// peakHeap runs fn while sampling the heap, and answers how far it grew
// above where it was before.
func peakHeap(fn func()) (uint64, time.Duration) {
	// Collected often, the heap follows what is held rather than the
	// garbage between two collections.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	t0 := time.Now()
	fn()
	took := time.Since(t0)
	close(stop)
	wg.Wait()
	if peak.Load() < before {
		return 0, took
	}
	return peak.Load() - before, took
}

// Compaction streams: packing loose objects many times the size of its
// window holds the window, not the objects. make test: 80 versions of a
// 256 KB object (20 MB); make test-long: 400 (100 MB). The bound, 8 MB,
// is the window (10 objects, 2.5 MB here), the object in hand, the deltas
// made from it and the zlib streams (about 4.5 MB live), with room for the
// garbage between two collections: a window held twice over (as a
// resliced window once was) goes over it.
func TestCompactHoldsAWindowNotTheObjects(t *testing.T) {
	n, size := 80, 256<<10
	if os.Getenv("QUIRE_TEST_LONG") != "" {
		n = 400
	}
	dir := t.TempDir()
	v, err := Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	ids := versions(t, v, n, size)
	var cerr error
	grew, took := peakHeap(func() { cerr = v.Compact(context.Background()) })
	if cerr != nil {
		t.Fatal(cerr)
	}
	if bound := uint64(8 << 20); grew > bound {
		// The collector lags on a loaded machine: a compaction that holds
		// the objects grows the heap by them every time, one that holds a
		// window does not twice. Measure a second one, of as many other
		// objects (one byte longer each).
		ids = versions(t, v, n, size+1)
		grew2, took2 := peakHeap(func() { cerr = v.Compact(context.Background()) })
		if cerr != nil {
			t.Fatal(cerr)
		}
		grew, took = min(grew, grew2), took2
	}
	total := uint64(n * size)
	t.Logf("%d objects, %d MB: compaction in %v, heap grew by at most %.1f MB", n, total>>20, took, float64(grew)/(1<<20))
	if bound := uint64(8 << 20); grew > bound {
		t.Fatalf("compaction of %d MB of objects grew the heap by %.1f MB, over %d MB", total>>20, float64(grew)/(1<<20), bound>>20)
	}
	for _, id := range ids[len(ids)-3:] {
		if _, err := v.objs.readBlob(id); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(looseFiles(t, dir)); n != 0 {
		t.Fatalf("%d loose objects left", n)
	}
	gitOut(t, dir, "fsck", "--strict")
}

func looseFiles(t testing.TB, dir string) []string {
	var out []string
	ents, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "??", "*"))
	for _, e := range ents {
		if !strings.HasPrefix(filepath.Base(e), "tmp_") {
			out = append(out, e)
		}
	}
	return out
}

// packCounts answers the number of objects of each pack, smallest first.
func packCounts(t testing.TB, dir string) []int {
	idxs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*.idx"))
	var out []int
	for _, idx := range idxs {
		x, err := pack.OpenIndex(strings.TrimSuffix(idx, ".idx"))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, x.Len())
		pack.UnmapIndex(x)
	}
	sort.Ints(out)
	return out
}

// Many compactions leave few packs, in a geometric progression (each at
// least twice the one before), which git reads: git fsck, count-objects
// and log agree with what was committed. A pack git made is rolled up too.
func TestCompactionsKeepPacksGeometric(t *testing.T) {
	rounds := 16
	if os.Getenv("QUIRE_TEST_LONG") != "" {
		rounds = 200
	}
	dir := t.TempDir()
	v, err := Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	v.SetAutoCompact(false)
	rng := rand.New(rand.NewSource(7))
	commits := 1
	for r := 0; r < rounds; r++ {
		// Rounds of 1 to 6 commits, each touching 1 to 3 runs.
		for c := 0; c <= rng.Intn(6); c++ {
			var paths []string
			for k := 0; k <= rng.Intn(3); k++ {
				p := fmt.Sprintf("playbook-runs/run-%02d/run.jsonl", rng.Intn(30))
				os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
				AppendLine(filepath.Join(dir, p), []byte(fmt.Sprintf(`{"round":%d,"commit":%d}`+"\n", r, c)))
				paths = append(paths, p)
			}
			if err := v.Locked(func() error {
				_, err := v.Commit(paths, Signature{Name: "agent-7", When: time.Now()}, fmt.Sprintf("round %d commit %d", r, c))
				return err
			}); err != nil {
				t.Fatal(err)
			}
			commits++
		}
		if r == rounds/2 {
			// A pack made by git itself is rolled up as well.
			gitOut(t, dir, "repack", "-q", "-d")
		}
		if err := v.Compact(context.Background()); err != nil {
			t.Fatal(err)
		}
		counts := packCounts(t, dir)
		total := 0
		for _, n := range counts {
			total += n
		}
		for i := 1; i < len(counts); i++ {
			if counts[i] < 2*counts[i-1] {
				t.Fatalf("round %d: packs of %v objects are not a progression of factor 2", r, counts)
			}
		}
		if limit := 1; len(counts) > limit {
			for 1<<limit <= total {
				limit++
			}
			if len(counts) > limit {
				t.Fatalf("round %d: %d packs for %d objects", r, len(counts), total)
			}
		}
	}
	counts := packCounts(t, dir)
	t.Logf("%d commits in %d compactions: packs of %v objects", commits, rounds, counts)
	gitOut(t, dir, "fsck", "--strict", "--no-dangling")
	co := gitOut(t, dir, "count-objects", "-v")
	if !strings.Contains(co, "count: 0\n") || !strings.Contains(co, "packs: "+strconv.Itoa(len(counts))+"\n") || !strings.Contains(co, "garbage: 0\n") {
		t.Fatalf("git count-objects -v:\n%s", co)
	}
	if n := strings.Count(gitOut(t, dir, "log", "--format=%H"), "\n"); n != commits {
		t.Fatalf("git log shows %d commits of %d", n, commits)
	}
	if s := gitOut(t, dir, "status", "--porcelain"); s != "" {
		t.Fatalf("git status:\n%s", s)
	}
}

// cutCtx is a context that ends at its nth look.
type cutCtx struct {
	context.Context
	left atomic.Int64
}

func (c *cutCtx) Err() error {
	if c.left.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// A compaction whose context ends at any point leaves the repository as
// it was: every object readable, no temporary file, git fsck clean; the
// next compaction packs everything.
func TestCompactAbandonedAnywhereLeavesTheRepositoryWhole(t *testing.T) {
	dir := t.TempDir()
	v, err := Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	v.SetAutoCompact(false)
	// Two packs and loose objects, so that the cut falls in the copy of a
	// pack as well as in the packing of loose objects.
	var ids []Hash
	for k, n := range []int{60, 10, 12} {
		ids = append(ids, versions(t, v, n, 4096+k)...)
		if k < 2 {
			if err := v.Compact(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if p := packCounts(t, dir); len(p) != 2 {
		t.Fatalf("packs %v", p)
	}
	loose := len(looseFiles(t, dir))
	for cut := 0; ; cut++ {
		ctx := &cutCtx{Context: context.Background()}
		ctx.left.Store(int64(cut))
		err := v.Compact(ctx)
		if err == nil && cut == 0 {
			t.Fatal("a compaction under a context already ended packed all the same")
		}
		if err == nil {
			break
		}
		if err != context.Canceled {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if tmps, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "tmp_*")); len(tmps) > 0 {
			t.Fatalf("cut %d: left %v", cut, tmps)
		}
		if n := len(looseFiles(t, dir)); n != loose {
			t.Fatalf("cut %d: %d loose objects of %d", cut, n, loose)
		}
		if p := packCounts(t, dir); len(p) != 2 {
			t.Fatalf("cut %d: packs %v", cut, p)
		}
	}
	if n := len(looseFiles(t, dir)); n != 0 {
		t.Fatalf("%d loose objects after the whole compaction", n)
	}
	for _, id := range ids {
		if _, err := v.objs.readBlob(id); err != nil {
			t.Fatal(err)
		}
	}
	gitOut(t, dir, "fsck", "--strict")
}

// hookCtx is a context that runs hook at its nth look, once.
type hookCtx struct {
	context.Context
	left atomic.Int64
	hook func()
}

func (c *hookCtx) Err() error {
	if c.left.Add(-1) == -1 {
		c.hook()
	}
	return nil
}

// A git gc that packs and removes the same loose objects and packs while
// a compaction runs (a git commit starts one in the background now and
// then) leaves the compaction to finish: at every point of it, git packs
// everything (git repack -a -d -k: every object, reachable or not, into
// one pack, the loose copies and the old packs removed), and the
// compaction still succeeds, every object stays readable by quire and
// git, and git fsck is clean.
func TestCompactBesideGitGC(t *testing.T) {
	t.Parallel()
	// Every point in make test-long; in make test the first three (the
	// packs' opening among them) and every fourth.
	next := func(cut int) int {
		if cut < 2 || os.Getenv("QUIRE_TEST_LONG") != "" {
			return cut + 1
		}
		return cut + 4
	}
	for cut := 0; ; cut = next(cut) {
		dir := t.TempDir()
		v, err := Init(dir, "acme", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		v.SetAutoCompact(false)
		var ids []Hash
		for k, n := range []int{8, 4, 6} {
			ids = append(ids, versions(t, v, n, 2048+k)...)
			if k < 2 {
				if err := v.Compact(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
		}
		ran := false
		ctx := &hookCtx{Context: context.Background(), hook: func() {
			ran = true
			gitOut(t, dir, "repack", "-a", "-d", "-k", "-q")
		}}
		ctx.left.Store(int64(cut))
		if err := v.Compact(ctx); err != nil {
			t.Fatalf("git packed at point %d of the compaction: %v", cut, err)
		}
		for _, id := range ids {
			if _, err := v.objs.readBlob(id); err != nil {
				t.Fatalf("point %d: %v", cut, err)
			}
			gitOut(t, dir, "cat-file", "-e", id.String())
		}
		if n := len(looseFiles(t, dir)); n != 0 {
			t.Fatalf("point %d: %d loose objects left", cut, n)
		}
		gitOut(t, dir, "fsck", "--strict")
		v.Close()
		if !ran {
			if cut < 10 {
				t.Fatalf("the compaction looked at its context only %d times", cut)
			}
			break
		}
	}
}

// An append-only log committed again and again, as a run's log is at its
// boundaries, is packed as the deltas its commits made (each version the
// last one and the lines appended), not read again: and git reads every
// version from the pack as it was committed (git cat-file, git fsck). A
// version that is not the last one grown (a line changed by hand and
// committed, as git allows) is read and packed as any other object.
func TestCompactPacksAnAppendedLogAsItsAppends(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	dir := t.TempDir()
	v, err := Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	v.SetAutoCompact(false)
	const rel = "playbook-runs/r/run.jsonl"
	guard := func(p string) Keep {
		if p == rel {
			return Prefix
		}
		return Free
	}
	v.SetGuard(guard)
	abs := filepath.Join(dir, filepath.FromSlash(rel))
	os.MkdirAll(filepath.Dir(abs), 0o755)
	var log []byte
	var commits []string
	versionsOf := map[string][]byte{}
	for i := 0; i < 80; i++ {
		for n := rng.Intn(3) + 1; n > 0; n-- {
			log = append(log, fmt.Sprintf("{\"event\":\"step_completed\",\"seq\":%d,\"pad\":%q}\n", i, strings.Repeat("x", rng.Intn(60)))...)
		}
		if i == 40 {
			log[3] = 'E' // by hand: the guard refuses it, so the commit is a person's
			v.SetGuard(nil)
		}
		if err := os.WriteFile(abs, log, 0o644); err != nil {
			t.Fatal(err)
		}
		var id string
		if err := v.Locked(func() (err error) {
			id, err = v.Commit([]string{rel}, Signature{Name: "t", When: time.Now()}, "c")
			return err
		}); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
		if i == 40 {
			v.SetGuard(guard)
		}
		commits = append(commits, id)
		versionsOf[id] = append([]byte(nil), log...)
	}
	if n := len(v.objs.known.m); n < 70 {
		t.Fatalf("%d appends known as deltas", n)
	}
	// Each commit's small objects went into a fresh pack of its own.
	if n := len(freshPacks(filepath.Join(dir, ".git"))); n < len(commits) {
		t.Fatalf("%d fresh packs listed for %d commits", n, len(commits))
	}
	if err := v.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The compaction took them as it takes loose objects: one pack left,
	// the log's versions in it as their appends (not 80 whole logs), and
	// the list of fresh packs empty.
	if p := packCounts(t, dir); len(p) != 1 {
		t.Fatalf("packs after the compaction: %v", p)
	}
	if n := len(freshPacks(filepath.Join(dir, ".git"))); n != 0 {
		t.Fatalf("%d fresh packs still listed", n)
	}
	if size, whole := packBytes(t, dir), len(log)*len(commits)/2; size > whole/4 {
		t.Fatalf("the pack holds %d bytes: the log's %d versions were not packed as their appends (%d bytes if whole)", size, len(commits), whole)
	}
	if n := len(v.objs.known.m); n != 0 {
		t.Fatalf("%d known deltas not taken by the compaction", n)
	}
	if n := len(looseFiles(t, dir)); n != 0 {
		t.Fatalf("%d loose objects left", n)
	}
	for _, c := range commits {
		if got := gitOut(t, dir, "cat-file", "blob", c+":"+rel); got != string(versionsOf[c]) {
			t.Fatalf("commit %s: git reads %d bytes of the log, %d were committed", c, len(got), len(versionsOf[c]))
		}
	}
	gitOut(t, dir, "fsck", "--strict", "--full")
}

// packBytes is the size of the pack files in the repository at dir.
func packBytes(t *testing.T, dir string) int {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	n := 0
	for _, p := range m {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		n += int(fi.Size())
	}
	return n
}
