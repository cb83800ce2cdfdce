package pack

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire/vault/git/object"
)

// git runs the git CLI in dir and answers its output.
func git(tb testing.TB, dir string, args ...string) []byte {
	tb.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=p", "-c", "user.email=p@x"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// gitPacked makes a repository with the git CLI, a log and a folder grown
// over a dozen commits, and packs it whole with git repack (deltas by
// offset, or by id when byID): the pack's path without extension.
func gitPacked(tb testing.TB, byID bool) (dir, name string) {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("git is not installed")
	}
	dir = tb.TempDir()
	git(tb, dir, "init", "-q")
	var log strings.Builder
	for i := 0; i < 12; i++ {
		fmt.Fprintf(&log, `{"event":"step_completed","step":"do/%d/review","seq":%d}`+"\n", i*7%5, i)
		os.MkdirAll(filepath.Join(dir, "runs", fmt.Sprint(i)), 0o755)
		os.WriteFile(filepath.Join(dir, "run.jsonl"), []byte(log.String()), 0o644)
		os.WriteFile(filepath.Join(dir, "runs", fmt.Sprint(i), "run.jsonl"), []byte(log.String()[:40+i]), 0o644)
		git(tb, dir, "add", "-A")
		git(tb, dir, "commit", "-q", "-m", fmt.Sprintf("step %d", i))
	}
	git(tb, dir, "-c", fmt.Sprintf("repack.useDeltaBaseOffset=%v", !byID), "repack", "-adq", "--window=10", "--depth=50")
	idxs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*.idx"))
	if len(idxs) != 1 {
		tb.Fatalf("git made %d packs", len(idxs))
	}
	return dir, strings.TrimSuffix(idxs[0], ".idx")
}

// Every object of a pack git writes, its deltas by offset or by id, is read
// as git reads it.
func TestReaderReadsWhatGitPacks(t *testing.T) {
	for _, byID := range []bool{false, true} {
		t.Run(fmt.Sprintf("by id %v", byID), func(t *testing.T) {
			dir, _ := gitPacked(t, byID)
			r := NewReader(filepath.Join(dir, ".git", "objects"))
			defer r.Close()
			out := git(t, dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)")
			n := 0
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				hex, typ, _ := strings.Cut(line, " ")
				id, _ := object.ParseHash(hex)
				t2, data, err := r.Object(id)
				if err != nil {
					t.Fatalf("%s: %v", hex, err)
				}
				if t2.String() != typ || !bytes.Equal(data, git(t, dir, "cat-file", typ, hex)) || object.Sum(t2, data) != id {
					t.Fatalf("%s: read a %s that is not git's %s", hex, t2, typ)
				}
				n++
			}
			if n < 40 || r.Deltas() == 0 || r.Packs() != 1 {
				t.Fatalf("%d objects, %d deltas, %d packs", n, r.Deltas(), r.Packs())
			}
			if _, _, err := r.Object(object.Sum(object.Blob, []byte("in no pack"))); err != ErrNotFound {
				t.Fatalf("an object in no pack: %v", err)
			}
		})
	}
}

// The index EncodeIndex writes of a pack is the one git wrote of it, byte
// for byte.
func TestEncodeIndexIsGits(t *testing.T) {
	_, name := gitPacked(t, false)
	data, err := os.ReadFile(name + ".idx")
	if err != nil {
		t.Fatal(err)
	}
	x, err := ParseIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	var entries []IndexEntry
	for i := x.Len() - 1; i >= 0; i-- {
		entries = append(entries, IndexEntry{ID: x.ID(i), Offset: uint64(x.Offset(i)), CRC: x.CRC(i)})
	}
	var sum object.Hash
	copy(sum[:], data[len(data)-40:])
	var b bytes.Buffer
	if err := EncodeIndex(&b, entries, sum); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), data) {
		t.Fatalf("encoded %d bytes, git wrote %d, differing", b.Len(), len(data))
	}
	// Offsets past 2 GiB go in the table of large offsets.
	entries = append(entries[:0], IndexEntry{ID: object.Sum(object.Blob, nil), Offset: 5 << 30, CRC: 7}, IndexEntry{ID: object.Sum(object.Blob, []byte("x")), Offset: 12})
	b.Reset()
	EncodeIndex(&b, entries, sum)
	y, err := ParseIndex(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if off := y.Find(e.ID); off != int64(e.Offset) {
			t.Fatalf("%s at %d, read %d", e.ID, e.Offset, off)
		}
	}
}

// newFuzzReader is a reader of one pack given by its bytes, in an object
// store of nothing else.
func newFuzzReader(t *testing.T, packData, idxData []byte) (*Reader, error) {
	x, err := ParseIndex(idxData)
	if err != nil {
		return nil, err
	}
	r := &Reader{objDir: t.TempDir(), cache: map[cacheKey]*resolved{}, limit: 1 << 20}
	r.packs = []*pack{{name: "fuzz", data: packData, idx: x}}
	return r, nil
}

// FuzzReader: whatever the bytes of a pack and its index, the reader
// answers each object the index names or an error, never a panic (seeds:
// the packs git repack writes, with deltas by offset and by id).
func FuzzReader(f *testing.F) {
	for _, byID := range []bool{false, true} {
		_, name := gitPacked(f, byID)
		p, _ := os.ReadFile(name + ".pack")
		x, _ := os.ReadFile(name + ".idx")
		f.Add(p, x)
	}
	f.Fuzz(func(t *testing.T, packData, idxData []byte) {
		r, err := newFuzzReader(t, packData, idxData)
		if err != nil {
			return
		}
		for i := 0; i < min(r.packs[0].idx.Len(), 200); i++ {
			r.Object(r.packs[0].idx.ID(i))
		}
	})
}

// gitDeltas answers the deltas of a pack git wrote, each with its base.
func gitDeltas(tb testing.TB) [][2][]byte {
	dir, _ := gitPacked(tb, false)
	r := NewReader(filepath.Join(dir, ".git", "objects"))
	defer r.Close()
	p := r.packs[0]
	var out [][2][]byte
	for i := 0; i < p.idx.Len(); i++ {
		off := p.idx.Offset(i)
		typ, size, back, n := ParseEntryHeader(p.data[off:])
		if typ != OfsDelta {
			continue
		}
		_, base, err := r.at(p, off-back, 0)
		if err != nil {
			tb.Fatal(err)
		}
		delta, err := inflate(p.data[off+int64(n):], size)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, [2][]byte{base, delta})
	}
	if len(out) == 0 {
		tb.Fatal("git wrote no delta")
	}
	return out
}

// FuzzDelta: whatever the base and the delta, ApplyDelta answers the
// target or an error, never a panic; and the delta AffixDelta makes of the
// base and that target makes the target (seeds: the deltas git repack
// writes, with their bases).
func FuzzDelta(f *testing.F) {
	for _, s := range gitDeltas(f) {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, base, delta []byte) {
		target, err := ApplyDelta(base, delta)
		if err != nil {
			return
		}
		d := AffixDelta(base, target, len(target))
		again, err := ApplyDelta(base, d)
		if err != nil || !bytes.Equal(again, target) {
			t.Fatalf("AffixDelta's delta makes %q (%v), not %q", again, err, target)
		}
	})
}

// The versions of a large tree a boundary writes again (playbook-runs/ at
// 100,000 runs: 7 MB, most of one size, each changed at one entry) are
// packed in the order they were written, each a small delta of the one
// before: in any other order two versions differ at many places, and an
// object this large is not tried with DiffDelta.
func TestCompactPacksATreesVersionsInTheirOrder(t *testing.T) {
	objDir := filepath.Join(t.TempDir(), "objects")
	const size, versions = 3 << 20, 12
	data := make([]byte, size)
	rng := rand.New(rand.NewSource(7))
	rng.Read(data)
	at := time.Now().Add(-time.Hour)
	for v := 0; v < versions; v++ {
		data = bytes.Clone(data)
		copy(data[rng.Intn(size-20):], fmt.Sprintf("version %12d", v))
		id := object.Sum(object.Blob, data)
		var buf bytes.Buffer
		zw, _ := zlib.NewWriterLevel(&buf, zlib.BestSpeed)
		object.WriteLoose(zw, object.Blob, data)
		zw.Close()
		file := filepath.Join(objDir, id.String()[:2], id.String()[2:])
		os.MkdirAll(filepath.Dir(file), 0o755)
		if err := os.WriteFile(file, buf.Bytes(), 0o444); err != nil {
			t.Fatal(err)
		}
		at = at.Add(time.Second)
		os.Chtimes(file, at, at)
	}
	if ok, err := Compact(context.Background(), objDir, nil, nil, nil); !ok || err != nil {
		t.Fatalf("compacted %v: %v", ok, err)
	}
	packs, _ := filepath.Glob(filepath.Join(objDir, "pack", "pack-*.pack"))
	if len(packs) != 1 {
		t.Fatalf("%d packs", len(packs))
	}
	fi, _ := os.Stat(packs[0])
	if fi.Size() > size+size/4 {
		t.Fatalf("a pack of %d versions of %d bytes is %d bytes: not deltas of each other in turn", versions, size, fi.Size())
	}
}

// A compaction removes the temporary files a process that died left: its
// packs' in objects/pack and its loose objects' in objects (the vault's
// writes of a large tree beside its commit), and no living process's, nor
// git's (tmp_pack_ and six of mkstemp's letters and digits, which can all
// be digits and so read as a pid).
func TestACompactionRemovesTheTemporaryFilesOfTheDead(t *testing.T) {
	objDir := filepath.Join(t.TempDir(), "objects")
	os.MkdirAll(filepath.Join(objDir, "pack"), 0o755)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	gone, mine := dead.Process.Pid, os.Getpid()
	files := map[string]bool{ // kept?
		filepath.Join(objDir, "pack", fmt.Sprintf("%s%d_1", tmpPackPrefix, gone)): false,
		filepath.Join(objDir, "pack", fmt.Sprintf("%s%d_2", tmpPackPrefix, mine)): true,
		filepath.Join(objDir, "pack", fmt.Sprintf("%s%d_1", tmpIdxPrefix, gone)):  false,
		filepath.Join(objDir, "pack", fmt.Sprintf("%s%d_2", tmpIdxPrefix, mine)):  true,
		// git's own, at work: six of mkstemp's letters and digits, here
		// all digits, which read as a pid that is gone.
		filepath.Join(objDir, "pack", fmt.Sprintf("%s%06d", tmpPackPrefix, gone%1000000)): true,
		filepath.Join(objDir, "pack", fmt.Sprintf("%s%06d", tmpIdxPrefix, gone%1000000)):  true,
		filepath.Join(objDir, "pack", fmt.Sprintf("%s%d_x", tmpPackPrefix, gone)):         true,
		filepath.Join(objDir, fmt.Sprintf("%s%d_3", TmpObjectPrefix, gone)):               false,
		filepath.Join(objDir, fmt.Sprintf("%s%d_4", TmpObjectPrefix, mine)):               true,
	}
	for f := range files {
		if err := os.WriteFile(f, []byte("partial"), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Compact(context.Background(), objDir, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	for f, kept := range files {
		if _, err := os.Stat(f); (err == nil) != kept {
			t.Errorf("%s: kept %v, want %v", filepath.Base(f), err == nil, kept)
		}
	}
}

// A person's git gc that runs while quire places a pack takes nothing from
// it: git gc removes an objects/pack/*.idx with no .pack beside it as
// garbage, which a pack's index under its temporary name once was. And a
// pack written again with the same objects (the same pack to the byte)
// leaves the one in place whole, even when its own index goes missing:
// it was renamed over the one in place, and removed, with every object
// in it, when its index could not follow. Found by quire-bench, whose
// vault lost the commits its compaction had packed when git's gc --auto
// ran beside it.
func TestGitGcBesideAPackBeingPlacedTakesNothing(t *testing.T) {
	dir, _ := gitPacked(t, false)
	objDir := filepath.Join(dir, ".git", "objects")
	var objs []Object
	for i := range 3 {
		data := []byte(fmt.Sprintf("a blob quire wrote, %d\n", i))
		objs = append(objs, Object{ID: object.Sum(object.Blob, data), Type: object.Blob, Data: data})
	}
	defer func() { beforePlaced = nil }()
	for _, beside := range []struct {
		what string
		do   func()
	}{
		{"git gc", func() { git(t, dir, "gc", "-q") }},
		{"the same pack written again, its index taken", func() {
			tmps, _ := filepath.Glob(filepath.Join(objDir, "pack", tmpIdxPrefix+"*"))
			if len(tmps) != 1 {
				t.Fatalf("%d temporary indexes", len(tmps))
			}
			os.Remove(tmps[0])
		}},
	} {
		ran := false
		beforePlaced = func() { ran = true; beside.do() }
		name, err := WriteFresh(objDir, objs)
		if err != nil {
			t.Fatalf("%s: %v", beside.what, err)
		}
		if !ran {
			t.Fatalf("%s: not done beside the write", beside.what)
		}
		for _, ext := range []string{".pack", ".idx"} {
			if _, err := os.Stat(name + ext); err != nil {
				t.Fatalf("%s: %v", beside.what, err)
			}
		}
		for _, o := range objs {
			if got := git(t, dir, "cat-file", "blob", o.ID.String()); !bytes.Equal(got, o.Data) {
				t.Fatalf("%s: git reads %s as %q, want %q", beside.what, o.ID, got, o.Data)
			}
		}
		git(t, dir, "fsck", "--no-dangling")
		if tmps, _ := filepath.Glob(filepath.Join(objDir, "pack", "tmp_*")); len(tmps) != 0 {
			t.Fatalf("%s: temporary files left: %v", beside.what, tmps)
		}
	}
}

// A pack listed and gone when the reader opens it was replaced: the
// reader lists the packs again and reads the object from the pack that
// holds it now. Found by CI: a blob a vault had just committed, in its
// fresh pack, read as missing while a compaction put the pack replacing
// it in place and removed it between the reader's listing and its open.
func TestAReaderFindsThePackThatReplacedOneListed(t *testing.T) {
	objDir := filepath.Join(t.TempDir(), "objects")
	os.MkdirAll(filepath.Join(objDir, "pack"), 0o755)
	r := NewReader(objDir)
	defer r.Close()
	blob := func(s string) Object {
		return Object{ID: object.Sum(object.Blob, []byte(s)), Type: object.Blob, Data: []byte(s)}
	}
	want := blob("a line just committed\n")
	fresh, err := WriteFresh(objDir, []Object{want})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { afterListed = nil }()
	replaced := false
	afterListed = func() {
		if replaced {
			return
		}
		replaced = true
		// A compaction's order: the new pack in place, then the old gone.
		if _, err := WriteFresh(objDir, []Object{blob("an older object\n"), want}); err != nil {
			t.Fatal(err)
		}
		for _, ext := range []string{".idx", ".pack"} {
			os.Remove(fresh + ext)
		}
	}
	typ, data, err := r.Object(want.ID)
	if !replaced {
		t.Fatal("the pack was not replaced between the listing and the open")
	}
	if err != nil || typ != object.Blob || !bytes.Equal(data, want.Data) {
		t.Fatalf("read %v %q, %v; want the blob %q", typ, data, err, want.Data)
	}
	if !r.Has(want.ID) {
		t.Fatal("Has: not found")
	}
}

// An index left without its pack (a writer that died between the two, or
// a pack removed by hand) is gone at every open: the reader lists the
// packs again once, finds the same, and answers a missing object as
// missing without listing them over and over.
func TestAnIndexWithoutItsPackIsListedOnce(t *testing.T) {
	objDir := filepath.Join(t.TempDir(), "objects")
	os.MkdirAll(filepath.Join(objDir, "pack"), 0o755)
	r := NewReader(objDir)
	defer r.Close()
	kept := Object{ID: object.Sum(object.Blob, []byte("kept\n")), Type: object.Blob, Data: []byte("kept\n")}
	if _, err := WriteFresh(objDir, []Object{kept}); err != nil {
		t.Fatal(err)
	}
	lost, err := WriteFresh(objDir, []Object{{ID: object.Sum(object.Blob, []byte("lost\n")), Type: object.Blob, Data: []byte("lost\n")}})
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(lost + ".pack")
	defer func() { afterListed = nil }()
	listings := 0
	afterListed = func() { listings++ }
	if _, data, err := r.Object(kept.ID); err != nil || !bytes.Equal(data, kept.Data) {
		t.Fatalf("read %q, %v", data, err)
	}
	listings = 0
	missing := object.Sum(object.Blob, []byte("never written\n"))
	if _, _, err := r.Object(missing); err != ErrNotFound {
		t.Fatalf("a missing object: %v", err)
	}
	if listings > 4 {
		t.Fatalf("a missing object listed the packs %d times", listings)
	}
}
