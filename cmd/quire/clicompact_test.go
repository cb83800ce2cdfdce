package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire/internal/fsys"
	"quire/internal/gittest"
)

// dirSize is the bytes of the files under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// Writes through quire commands, each its own short-lived process, are
// compacted: a thread appended to call by call (each commit stores the
// whole thread.md again, as a boundary does) writes more than 64 MiB of
// loose objects over some 45 commands, none of which alone writes 3 MiB;
// once they passed the threshold, a compaction started by one of them
// packs .git to a few times the thread's size, and git fsck finds the
// vault whole. Before, the count of loose bytes was each process's own
// and never passed the threshold: .git kept every copy.
func TestCLIWritesAreCompacted(t *testing.T) {
	t.Parallel()
	dir, v, runID := newCloseRun(t)
	if code, out, errs := quire(t, "", v, "call", "end_run", "--args",
		fmt.Sprintf(`{"playbook":"finance","run_id":%q,"status":"failed","actor":"agent-7"}`, runID)); code != 0 {
		t.Fatalf("end_run: %d %s %s", code, out, errs)
	}
	var line strings.Builder
	for line.Len() < 63<<10 {
		fmt.Fprintf(&line, "- checked entry %d of the ledger against the bank's statement\n", line.Len())
	}
	thread := filepath.Join(dir, "playbook-runs")
	start := time.Now()
	calls := 0
	for ; calls < 60 && dirSize(filepath.Join(dir, ".git", "objects"))-dirSize(filepath.Join(dir, ".git", "objects", "pack")) < 66<<20; calls++ {
		args, _ := json.Marshal(map[string]string{"playbook": "finance", "run_id": runID, "actor": "agent-7", "text": fmt.Sprintf("## %d\n%s", calls, line.String())})
		if code, out, errs := quire(t, "", v, "call", "append_thread", "--args", string(args)); code != 0 {
			t.Fatalf("append_thread %d: %d %s %s", calls, code, out, errs)
		}
	}
	took := time.Since(start)
	size := dirSize(thread)
	deadline := time.Now().Add(60 * time.Second)
	// What a compaction packed is a few times the thread's size; the
	// loose objects and the fresh packs (a commit's small objects,
	// vault/git/pack) written after the last one wait for the next.
	for {
		packs, packed := compactedPacks(dir)
		if packs > 0 && packed < 3*size+(2<<20) {
			t.Logf("%d appends in %v; the thread %d bytes, .git %d bytes, %d bytes in %d packs of compactions, %d loose objects, %v after the last append",
				calls, took.Round(time.Millisecond), size, dirSize(filepath.Join(dir, ".git")), packed, packs, looseCount(dir), time.Since(start.Add(took)).Round(time.Millisecond))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d appends: the thread is %d bytes and the compactions' %d packs %d bytes, %d loose objects, a minute after the last",
				calls, size, packs, packed, looseCount(dir))
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The worker is done once the compaction's lock is free (and the
	// vault's folder may then be removed under it).
	for {
		f, err := os.OpenFile(filepath.Join(dir, ".git", "quire-compact.lock"), os.O_RDWR, 0)
		if err != nil {
			t.Fatalf("no compaction's lock: %v", err)
		}
		ok, err := fsys.TryLock(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the compaction still holds its lock a minute after the last append")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Another worker, started by one of the last appends, may take the
	// lock after that one: git fsck holds it, as a person's script does.
	if out, err := gittest.Fsck(dir, "--no-dangling"); err != nil {
		t.Fatalf("git fsck: %v %s", err, out)
	}
	if code, out, errs := quire(t, "", v, "check"); code != 0 {
		t.Fatalf("quire check: %d %s %s", code, out, errs)
	}
	// The count the compactions took off is what they packed: what is
	// left is what was written since, under the threshold.
	var loose, failed int64
	if b, err := os.ReadFile(filepath.Join(dir, ".git", "quire-loose")); err != nil {
		t.Fatal(err)
	} else if n, _ := fmt.Sscan(string(b), &loose, &failed); n != 2 || loose >= 64<<20 || failed != 0 {
		t.Fatalf(".git/quire-loose after the compaction: %q", b)
	}
}

// compactedPacks counts the packs of .git/objects/pack that compactions
// wrote (not on .git/quire-fresh's list of a commit's fresh packs) and
// their bytes.
func compactedPacks(dir string) (int, int64) {
	list, _ := os.ReadFile(filepath.Join(dir, ".git", "quire-fresh"))
	fresh := map[string]bool{}
	for _, n := range strings.Fields(string(list)) {
		fresh[n] = true
	}
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*.pack"))
	n, size := 0, int64(0)
	for _, p := range packs {
		if fresh[strings.TrimSuffix(filepath.Base(p), ".pack")] {
			continue
		}
		if fi, err := os.Stat(p); err == nil {
			n++
			size += fi.Size()
		}
	}
	return n, size
}
