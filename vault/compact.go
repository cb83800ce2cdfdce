package vault

import (
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// Compaction: every boundary writes the trees along its paths whole as loose
// objects (about 140 KB at 5,000 runs in one folder). When the loose objects
// pass a threshold, they are packed with deltas, which brings a boundary down
// to a few KB, and the loose copies are removed. Like git's own auto-gc, the
// count is estimated from one fan-out folder (objects/17) times 256.
//
// Packing runs in the background, without the write lock: it packs only the
// loose objects it listed, and removes only those, once the pack and its
// index are in place, so objects written meanwhile are untouched and every
// object stays readable throughout. Close waits for it.
const compactThreshold = 1024

// SetAutoCompact turns the background compaction after commits on (the
// default) or off; with it off, the owner calls Compact itself.
func (v *Vault) SetAutoCompact(on bool) {
	v.compactMu.Lock()
	v.noAutoCompact = !on
	v.compactMu.Unlock()
}

func (v *Vault) maybeCompact() {
	v.compactMu.Lock()
	off := v.noAutoCompact
	v.compactMu.Unlock()
	if off || v.looseEstimate() < compactThreshold {
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
		_ = v.Compact()
	}()
}

func (v *Vault) looseEstimate() int {
	ents, err := os.ReadDir(filepath.Join(v.gitDir, "objects", "17"))
	if err != nil {
		return 0
	}
	return len(ents) * 256
}

// Compact packs the vault's loose objects and removes them.
func (v *Vault) Compact() error {
	objDir := filepath.Join(v.gitDir, "objects")
	var hashes []plumbing.Hash
	var files []string
	dirs, err := os.ReadDir(objDir)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		if !d.IsDir() || len(d.Name()) != 2 {
			continue
		}
		ents, err := os.ReadDir(filepath.Join(objDir, d.Name()))
		if err != nil {
			continue
		}
		for _, e := range ents {
			h := d.Name() + e.Name()
			if len(h) == 40 && plumbing.IsHash(h) {
				hashes = append(hashes, plumbing.NewHash(h))
				files = append(files, filepath.Join(objDir, d.Name(), e.Name()))
			}
		}
	}
	if len(hashes) == 0 {
		return nil
	}
	o := newObjects(v.gitDir)
	w, err := o.store.PackfileWriter()
	if err != nil {
		return err
	}
	enc := packfile.NewEncoder(w, o.store, false)
	if _, err := enc.Encode(hashes, 10); err != nil {
		w.Close()
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	// The pack and its index are in place: every listed object is readable
	// from it, so the loose copies can go.
	for _, f := range files {
		os.Remove(f)
	}
	return nil
}
