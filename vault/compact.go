package vault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"quire/internal/fsys"
	"quire/vault/git/object"
	"quire/vault/git/pack"
)

// Compaction: every boundary writes the trees along its paths whole as loose
// objects (about 140 KB at 5,000 runs in one folder). When the loose objects
// pass a threshold, they are packed with deltas, which brings a boundary down
// to a few KB, and the loose copies are removed. What a compaction packs and
// how (streaming, the geometric progression of packs, its safety beside git)
// is vault/git/pack's; when it runs is here.
//
// When. Like git's gc --auto, the loose objects are counted in one fan-out
// folder (objects/17) times 256. git's gc.auto is 6,700; quire's threshold
// is 1,024, since its loose objects are large (whole trees of thousands of
// entries) and a pack of them is a few percent of their size. git's
// gc.autoPackLimit (50) is kept as a second trigger: more packs than that,
// made by anything, start a compaction even with few loose objects, and so
// do 16 fresh packs (a group's small objects, freshlist.go). Another:
// 64 MiB of loose objects written by quire since the last compaction,
// whichever processes wrote them (a large tree, stored uncompressed, is
// 1.6 MB at 20,000 runs: objects.go; a thread of 16 MiB committed again at
// each boundary is more). Each commit adds its loose bytes to the count in
// .git/quire-loose, which a compaction lowers by what it packed; the count
// of one process alone never passed the threshold in a short-lived CLI
// process, so a vault written through the CLI was never compacted.
//
// Where. One compaction at a time for the whole vault, whatever process:
// it holds .git/quire-compact.lock (flock), and a process that finds it
// held starts none. A long-lived process (quire serve, mcp, the resident)
// runs it in its background, without the write lock, under its context
// (SetCompactContext); Close waits for it. A short-lived one (a CLI
// command) hands it to another process (SetCompactBy), which the CLI
// starts detached, as git's gc --auto detaches: the command answers at
// once and does not wait for the compaction.
const (
	compactThreshold = 1024
	compactPackLimit = 50
	compactRetry     = 10 * time.Minute // after a compaction that failed
)

// compactLooseBytes: loose bytes written since the last compaction, by any
// process, that start a compaction (a variable for the tests).
var compactLooseBytes int64 = 64 << 20

// The files of compaction in .git: the count of loose bytes and the lock.
const (
	looseFile       = "quire-loose"
	compactLockFile = "quire-compact.lock"
)

// SetAutoCompact turns the background compaction after commits on (the
// default) or off; with it off, the owner calls Compact itself.
func (v *Vault) SetAutoCompact(on bool) {
	v.compactMu.Lock()
	v.noAutoCompact = !on
	v.compactMu.Unlock()
}

// SetCompactContext sets the context background compactions run under
// (context.Background until set): when it ends, a compaction under way is
// abandoned, leaving the repository as it found it, and none starts.
func (v *Vault) SetCompactContext(ctx context.Context) {
	v.compactMu.Lock()
	v.compactCtx = ctx
	v.compactMu.Unlock()
}

// SetCompactBy makes start what starts a compaction that is due, instead
// of a goroutine of this process (nil: the goroutine again): for a
// short-lived process, whose Close would otherwise wait for it. start
// should start another process that calls CompactIfDue, and return.
func (v *Vault) SetCompactBy(start func() error) {
	v.compactMu.Lock()
	v.compactBy = start
	v.compactMu.Unlock()
}

// maybeCompact, after a commit: counts its loose bytes, and starts a
// compaction when one is due and none is under way.
func (v *Vault) maybeCompact() {
	v.compactMu.Lock()
	off, ctx, by := v.noAutoCompact, v.compactCtx, v.compactBy
	v.compactMu.Unlock()
	if off {
		return
	}
	loose, failed := v.addLoose(v.objs.looseBytes.Swap(0))
	if ctx == nil {
		ctx = context.Background()
	}
	if ctx.Err() != nil || time.Since(failed) < compactRetry || !v.compactDue(loose) {
		return
	}
	if by != nil {
		if v.compactUnderWay() {
			return
		}
		if err := by(); err != nil && v.log != nil {
			v.log.Warn("vault: a compaction could not be started", "err", err)
		}
		return
	}
	v.compactMu.Lock()
	if v.busy {
		v.compactMu.Unlock()
		return
	}
	v.busy = true
	v.compactMu.Unlock()
	v.compacting.Add(1)
	go func() {
		defer v.compacting.Done()
		defer func() { v.compactMu.Lock(); v.busy = false; v.compactMu.Unlock() }()
		if err := v.CompactIfDue(ctx); err != nil && v.log != nil {
			v.log.Warn("vault: compaction stopped; it is tried again in 10 minutes", "err", err)
		}
	}()
}

// compactDue says whether a compaction is due, with loose bytes written
// since the last one.
func (v *Vault) compactDue(loose int64) bool {
	return loose >= compactLooseBytes || freshListed(v.gitDir) >= freshPacksDue ||
		v.looseEstimate() >= compactThreshold || v.packCount() > compactPackLimit
}

// CompactIfDue compacts when a compaction is due and no other is under
// way in any process. A compaction that fails for another reason than
// ctx's end or another's work is recorded, and none is started for
// compactRetry after it.
func (v *Vault) CompactIfDue(ctx context.Context) error {
	f, err := fsys.OpenFile(filepath.Join(v.gitDir, compactLockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if ok, err := fsys.TryLock(f); err != nil || !ok {
		return err
	}
	defer fsys.Unlock(f)
	loose, failed := v.addLoose(0)
	if time.Since(failed) < compactRetry || !v.compactDue(loose) {
		return nil
	}
	err = v.compact(ctx)
	// A loose object gone is another program's compaction at work (git gc).
	if err == nil || ctx.Err() != nil || errors.Is(err, os.ErrNotExist) {
		return nil
	}
	v.updateLoose(func(n, _ int64) (int64, int64) { return n, time.Now().Unix() })
	return err
}

// compactUnderWay says whether a process holds the compaction's lock.
func (v *Vault) compactUnderWay() bool {
	f, err := fsys.OpenFile(filepath.Join(v.gitDir, compactLockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return false
	}
	defer f.Close()
	ok, err := fsys.TryLock(f)
	if ok {
		fsys.Unlock(f)
	}
	return err == nil && !ok
}

// addLoose adds n to the loose bytes counted in .git/quire-loose and
// answers the count and when a compaction last failed.
func (v *Vault) addLoose(n int64) (loose int64, failed time.Time) {
	var at int64
	v.updateLoose(func(old, f int64) (int64, int64) {
		loose, at = old+n, f
		return loose, f
	})
	if at > 0 {
		failed = time.Unix(at, 0)
	}
	return loose, failed
}

// updateLoose changes .git/quire-loose, "<loose bytes> <unix time of the
// last failed compaction>", under the file's own lock: any process may,
// at any time. It is a count that starts compactions, not data: a fault
// in reading or writing it loses nothing but its count.
func (v *Vault) updateLoose(fn func(loose, failed int64) (int64, int64)) {
	lockedFile(filepath.Join(v.gitDir, looseFile), os.O_RDWR|os.O_CREATE, func(f *os.File) {
		var buf [64]byte
		k, _ := f.ReadAt(buf[:], 0)
		var loose, failed int64
		fmt.Sscan(string(buf[:k]), &loose, &failed)
		nl, nf := fn(max(loose, 0), failed)
		if nl == loose && nf == failed && k > 0 {
			return
		}
		line := fmt.Sprintf("%d %d\n", max(nl, 0), nf)
		if _, err := f.WriteAt([]byte(line), 0); err == nil && len(line) < k {
			f.Truncate(int64(len(line)))
		}
	})
}

func (v *Vault) looseEstimate() int {
	ents, err := os.ReadDir(filepath.Join(v.gitDir, "objects", "17"))
	if err != nil {
		return 0
	}
	return len(ents) * 256
}

// packCount is the count of packs, as it was at most a second ago: a
// listing of the pack folder at every boundary, where each boundary adds
// a fresh pack, cost a quarter of a millisecond. The fresh packs start a
// compaction by their own count (freshPacksDue); this one is for the
// packs anything else made.
func (v *Vault) packCount() int {
	v.compactMu.Lock()
	defer v.compactMu.Unlock()
	if time.Since(v.packsAt) >= time.Second {
		idxs, _ := filepath.Glob(filepath.Join(v.gitDir, "objects", "pack", "pack-*.idx"))
		v.packs, v.packsAt = len(idxs), time.Now()
	}
	return v.packs
}

// Compact packs the vault's loose objects, with the packs the geometric
// progression needs rolled up (pack.Compact), and removes what it packed,
// now: after a compaction of another process under way, if there is one.
// It stops, leaving everything as it was, when ctx ends.
func (v *Vault) Compact(ctx context.Context) error {
	f, err := fsys.OpenFile(filepath.Join(v.gitDir, compactLockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := fsys.Lock(f); err != nil {
		return err
	}
	defer fsys.Unlock(f)
	return v.compact(ctx)
}

// compact is Compact under the compaction's lock: the loose bytes counted
// before it began are taken off the count once it is done.
func (v *Vault) compact(ctx context.Context) error {
	before, _ := v.addLoose(v.objs.looseBytes.Swap(0))
	packed, err := pack.Compact(ctx, filepath.Join(v.gitDir, "objects"), func(id object.Hash) ([]byte, object.Type, error) {
		return v.objs.readRaw(id)
	}, v.objs.known.known, freshOf(v.gitDir))
	pruneFresh(v.gitDir)
	if packed {
		v.objs.mu.Lock()
		v.objs.reopen()
		v.objs.mu.Unlock()
	}
	if err == nil {
		v.updateLoose(func(n, _ int64) (int64, int64) { return n - before, 0 })
	}
	return err
}

// freshOf says which packs are fresh: the list's, read once.
func freshOf(gitDir string) func(name string) bool {
	names := freshPacks(gitDir)
	return func(name string) bool { return names[name] }
}
