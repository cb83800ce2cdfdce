package vault

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

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
// made by anything, start a compaction even with few loose objects. A third:
// the process wrote 256 MiB of loose objects since it last started one (a
// large tree, stored uncompressed, is 1.6 MB at 20,000 runs: objects.go).
// It runs in the background, without the write lock, under the vault's
// context (SetCompactContext); Close waits for it.
const (
	compactThreshold = 1024
	compactPackLimit = 50
	compactRetry     = 10 * time.Minute // after a compaction that failed
)

// compactLooseBytes: loose bytes written by this process that start a
// compaction (a variable for the tests).
var compactLooseBytes int64 = 256 << 20

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

func (v *Vault) maybeCompact() {
	v.compactMu.Lock()
	off, ctx, failed := v.noAutoCompact, v.compactCtx, v.compactFailed
	v.compactMu.Unlock()
	if ctx == nil {
		ctx = context.Background()
	}
	if off || ctx.Err() != nil || time.Since(failed) < compactRetry ||
		(v.looseEstimate() < compactThreshold && v.packCount() <= compactPackLimit && v.objs.looseBytes.Load() < compactLooseBytes) {
		return
	}
	v.compactMu.Lock()
	if v.busy {
		v.compactMu.Unlock()
		return
	}
	v.busy = true
	v.compactMu.Unlock()
	v.objs.looseBytes.Store(0)
	v.compacting.Add(1)
	go func() {
		defer v.compacting.Done()
		defer func() { v.compactMu.Lock(); v.busy = false; v.compactMu.Unlock() }()
		// A loose object gone is another process's compaction at work.
		err := v.Compact(ctx)
		if err == nil || ctx.Err() != nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		v.compactMu.Lock()
		v.compactFailed = time.Now()
		v.compactMu.Unlock()
		if v.log != nil {
			v.log.Warn("vault: compaction stopped; it is tried again in 10 minutes", "err", err)
		}
	}()
}

func (v *Vault) looseEstimate() int {
	ents, err := os.ReadDir(filepath.Join(v.gitDir, "objects", "17"))
	if err != nil {
		return 0
	}
	return len(ents) * 256
}

func (v *Vault) packCount() int {
	idxs, _ := filepath.Glob(filepath.Join(v.gitDir, "objects", "pack", "pack-*.idx"))
	return len(idxs)
}

// Compact packs the vault's loose objects, with the packs the geometric
// progression needs rolled up (pack.Compact), and removes what it packed.
// It stops, leaving everything as it was, when ctx ends.
func (v *Vault) Compact(ctx context.Context) error {
	packed, err := pack.Compact(ctx, filepath.Join(v.gitDir, "objects"), func(id object.Hash) ([]byte, object.Type, error) {
		return v.objs.readRaw(id)
	})
	if packed {
		v.objs.mu.Lock()
		v.objs.reopen()
		v.objs.mu.Unlock()
	}
	return err
}
