package index

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gogit "github.com/go-git/go-git/v5/plumbing/format/index"

	"quire/vault/git/object"
)

// git runs the git CLI in dir and answers its output.
func git(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=p", "-c", "user.email=p@x"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// The forms of .git/index git writes, each made by the git CLI: version 2
// (git's default), 3 (an entry with an extended flag), 4 (prefix-compressed
// names), split (the link extension and a shared index), split in
// version 4.
var forms = []struct {
	name string
	set  func(tb testing.TB, dir string)
}{
	{"v2", func(tb testing.TB, dir string) { git(tb, dir, "update-index", "--index-version", "2") }},
	{"v3", func(tb testing.TB, dir string) {
		git(tb, dir, "update-index", "--index-version", "3", "--skip-worktree", "quire.yaml")
	}},
	{"v4", func(tb testing.TB, dir string) { git(tb, dir, "update-index", "--index-version", "4") }},
	{"split", func(tb testing.TB, dir string) {
		git(tb, dir, "update-index", "--index-version", "2")
		git(tb, dir, "update-index", "--split-index")
	}},
	{"split-v4", func(tb testing.TB, dir string) {
		git(tb, dir, "update-index", "--index-version", "4")
		git(tb, dir, "update-index", "--split-index")
	}},
}

// gitIndex makes a repository with the git CLI holding runs run folders of
// three files (names sharing long prefixes, what version 4 compresses), an
// executable, a path added with intent to add and a path removed from the
// index, its index in the given form.
func gitIndex(tb testing.TB, runs int, form func(testing.TB, string)) string {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("git is not installed")
	}
	dir := tb.TempDir()
	git(tb, dir, "init", "-q")
	write := func(rel string, mode os.FileMode) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(rel+"\n"), mode); err != nil {
			tb.Fatal(err)
		}
	}
	for i := 0; i < runs; i++ {
		for _, f := range []string{"run.jsonl", "run.state.json", "thread.md"} {
			write(fmt.Sprintf("playbook-runs/close-019a4012-%04d-2026-11-01/%s", i, f), 0o644)
		}
	}
	write("quire.yaml", 0o644)
	write("x/run.sh", 0o755)
	git(tb, dir, "add", "-A")
	form(tb, dir)
	write("new.md", 0o644)
	git(tb, dir, "add", "-N", "new.md")
	git(tb, dir, "rm", "-q", "--cached", "playbook-runs/close-019a4012-0001-2026-11-01/thread.md")
	return dir
}

// read decodes the repository's .git/index, its shared index read from
// beside it.
func read(tb testing.TB, dir string) (Index, []byte) {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		tb.Fatal(err)
	}
	d, err := Decode(data, true, func(id object.Hash) ([]*Entry, error) {
		shared, err := os.ReadFile(filepath.Join(dir, ".git", "sharedindex."+id.String()))
		if err != nil {
			return nil, err
		}
		return DecodeShared(id, shared, true)
	})
	if err != nil {
		tb.Fatal(err)
	}
	return d, data
}

// list is the index as git ls-files -s lists it.
func list(entries []*Entry) string {
	var b strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&b, "%o %s %d\t%s\n", uint32(e.Mode), e.Hash, e.Stage, e.Name)
	}
	return b.String()
}

// Every form git writes is read as git lists it, and, where go-git's
// decoder reads it (all but the split forms), as go-git reads it, stat and
// flags included.
func TestDecodeReadsEveryFormGitWrites(t *testing.T) {
	for _, form := range forms {
		t.Run(form.name, func(t *testing.T) {
			dir := gitIndex(t, 30, form.set)
			d, data := read(t, dir)
			if got, want := list(d.Entries), git(t, dir, "ls-files", "-s"); got != want {
				t.Fatalf("read:\n%s\ngit lists:\n%s", got, want)
			}
			if split := strings.HasPrefix(form.name, "split"); split != (d.Shared != nil) {
				t.Fatalf("split %v, read a shared index: %v", split, d.Shared != nil)
			}
			if d.Shared != nil {
				return
			}
			var idx gogit.Index
			if err := gogit.NewDecoder(bytes.NewReader(data)).Decode(&idx); err != nil {
				t.Fatal(err)
			}
			if len(idx.Entries) != len(d.Entries) {
				t.Fatalf("go-git reads %d entries, we %d", len(idx.Entries), len(d.Entries))
			}
			for i, g := range idx.Entries {
				e := d.Entries[i]
				want := Entry{Name: g.Name, Hash: object.Hash(g.Hash), Mode: object.Mode(g.Mode), CreatedAt: g.CreatedAt, ModifiedAt: g.ModifiedAt,
					Dev: g.Dev, Inode: g.Inode, UID: g.UID, GID: g.GID, Size: g.Size, Stage: uint8(g.Stage), SkipWorktree: g.SkipWorktree, IntentToAdd: g.IntentToAdd}
				if !Same(e, &want) {
					t.Fatalf("entry %d: go-git %+v, we %+v", i, want, *e)
				}
			}
		})
	}
}

// What Encode, EncodeV4 and EncodeSplit write, git reads: the entries of
// every form, written whole, and split against the shared index git wrote
// with an entry changed, one added and one removed; in versions 2 (3) and
// 4 alike, which git then says it is.
func TestGitReadsWhatEncodeWrites(t *testing.T) {
	for _, form := range forms {
		for _, v4 := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/v4=%v", form.name, v4), func(t *testing.T) { gitReads(t, form.set, v4) })
		}
	}
}

func gitReads(t *testing.T, set func(tb testing.TB, dir string), v4 bool) {
	dir := gitIndex(t, 30, set)
	d, _ := read(t, dir)
	want := git(t, dir, "ls-files", "-s")
	path := filepath.Join(dir, ".git", "index")
	whole := Encode(nil, d.Entries)
	if v4 {
		whole = EncodeV4(nil, d.Entries)
	}
	if err := os.WriteFile(path, whole, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := git(t, dir, "ls-files", "-s"); got != want {
		t.Fatalf("git lists what Encode wrote as\n%s\nnot\n%s", got, want)
	}
	if again, _ := read(t, dir); v4 && again.Version != 4 {
		t.Fatalf("EncodeV4 wrote version %d", again.Version)
	}
	if d.Shared == nil {
		return
	}
	cur := slices.Clone(d.Entries)
	changed := *cur[3]
	changed.Hash = object.Sum(object.Blob, []byte("changed\n"))
	changed.ModifiedAt = changed.ModifiedAt.Add(1)
	cur[3] = &changed
	cur = slices.Delete(cur, 7, 8)
	cur = append(cur, &Entry{Name: "zz.md", Hash: object.Sum(object.Blob, nil), Mode: object.Regular})
	s := Diff(d.Shared, cur)
	if len(s.Replace) != 1 || len(s.Delete) < 1 || len(s.Added) < 1 {
		t.Fatalf("diff %+v", s)
	}
	if err := os.WriteFile(path, EncodeSplit(nil, s, d.SharedID, v4), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := git(t, dir, "ls-files", "-s"), list(cur); got != want {
		t.Fatalf("git lists what EncodeSplit wrote as\n%s\nnot\n%s", got, want)
	}
	if again, _ := read(t, dir); list(again.Entries) != list(cur) {
		t.Fatalf("read back as\n%s", list(again.Entries))
	}
}

// A corrupt index is refused, never read as something else.
func TestDecodeRefusesDamage(t *testing.T) {
	dir := gitIndex(t, 3, forms[0].set)
	_, data := read(t, dir)
	for i := 0; i < len(data); i += 7 {
		bad := append([]byte(nil), data...)
		bad[i] ^= 0x40
		if _, err := Decode(bad, true, noShared); err == nil {
			t.Fatalf("a flipped byte at %d was read", i)
		}
	}
	if _, err := Decode(data[:len(data)-1], true, noShared); err == nil {
		t.Fatal("a cut index was read")
	}
}

func noShared(object.Hash) ([]*Entry, error) { return nil, os.ErrNotExist }

// An index whose checksum is twenty zero bytes (git 2.40 and later under
// index.skipHash) reads as the same index in both readers when they
// check checksums; a wrong checksum is still refused.
func TestAnIndexWithoutItsChecksumReads(t *testing.T) {
	dir := gitIndex(t, 3, forms[0].set)
	want, data := read(t, dir)
	skipped := append([]byte(nil), data...)
	copy(skipped[len(skipped)-20:], make([]byte, 20))
	got, err := Decode(skipped, true, noShared)
	if err != nil || len(got.Entries) != len(want.Entries) || got.Entries[0].Name != want.Entries[0].Name {
		t.Fatalf("Decode: %v, %d entries, want %d", err, len(got.Entries), len(want.Entries))
	}
	if m, err := ReadMain(skipped, true); err != nil || m.Whole == nil || m.Whole.Len() != len(want.Entries) {
		t.Fatalf("ReadMain: %v", err)
	}
	wrong := append([]byte(nil), data...)
	wrong[len(wrong)-1] ^= 1
	if _, err := Decode(wrong, true, noShared); err == nil {
		t.Fatal("a wrong checksum was taken")
	}
	if _, err := ReadMain(wrong, true); err == nil {
		t.Fatal("ReadMain took a wrong checksum")
	}
}

// The root of git's cache-tree is read when git left it valid (after a
// commit it is HEAD's tree), and not when git invalidated it (a path
// staged since).
func TestCacheTreeRootIsGits(t *testing.T) {
	dir := gitIndex(t, 3, forms[0].set)
	git(t, dir, "rm", "-q", "--cached", "new.md") // intent to add leaves the root invalid
	git(t, dir, "commit", "-q", "-m", "a person's commit")
	if d, _ := read(t, dir); d.CacheTree.String() != strings.TrimSpace(git(t, dir, "rev-parse", "HEAD^{tree}")) {
		t.Fatalf("cache-tree root %s", d.CacheTree)
	}
	os.WriteFile(filepath.Join(dir, "x", "run.sh"), []byte("changed"), 0o755)
	git(t, dir, "add", "x/run.sh")
	if d, _ := read(t, dir); !d.CacheTree.IsZero() {
		t.Fatalf("a cache-tree git invalidated is read as %s", d.CacheTree)
	}
}

// Any set of positions written as git's EWAH bitmap reads back as the same
// bits: runs of empty words, words full of bits, a lone last bit.
func TestEWAHRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 500; round++ {
		n := rng.Intn(3000)
		var set []int
		density := rng.Float64()
		for i := 0; i < n; i++ {
			if rng.Float64() < density*density {
				set = append(set, i)
			}
		}
		if round%7 == 0 && n > 0 {
			set = append(set, n+rng.Intn(100000)) // after a long empty run
		}
		data := appendEWAH(nil, set)
		if len(data) > ewahRoom(set) {
			t.Fatalf("round %d: %d bytes written, %d said to be the most", round, len(data), ewahRoom(set))
		}
		bits, read, err := decodeEWAH(data)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if read != len(data) {
			t.Fatalf("round %d: read %d of %d bytes", round, read, len(data))
		}
		var got []int
		for i, b := range bits {
			if b {
				got = append(got, i)
			}
		}
		if !slices.Equal(got, set) {
			t.Fatalf("round %d: wrote %v, read %v", round, set, got)
		}
	}
}

// A split index's head written into the last one's buffer allocates
// nothing: a boundary writes it at every commit, and at 100,000 runs its
// bitmaps and a list of its entries were 0.7 MB a boundary for the
// collector. What it writes is what a buffer of its own gets.
func TestASplitHeadInItsLastRoomAllocatesNothing(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	var s Split
	for i := 0; i < 600000; i++ {
		switch r := rng.Intn(100); {
		case r < 2:
			s.Replace = append(s.Replace, i)
			s.Replaced = append(s.Replaced, &Entry{Name: fmt.Sprintf("playbook-runs/r-%07d/run.jsonl", i), Mode: 0o100644})
		case r < 3:
			s.Delete = append(s.Delete, i)
		}
	}
	for i := 0; i < 50; i++ {
		s.Added = append(s.Added, &Entry{Name: fmt.Sprintf("playbook-runs/s-%07d/run.jsonl", i), Mode: 0o100644})
	}
	var shared object.Hash
	shared[0] = 7
	for _, v4 := range []bool{false, true} {
		want := EncodeSplitHead(nil, s, shared, v4)
		buf := EncodeSplitHead(nil, s, shared, v4)
		if allocs := testing.AllocsPerRun(5, func() { buf = EncodeSplitHead(buf[:0], s, shared, v4) }); allocs != 0 {
			t.Errorf("v4 %v: %.0f allocations a write into the last one's room", v4, allocs)
		}
		if !bytes.Equal(buf, want) {
			t.Fatalf("v4 %v: written into the last room, the head differs", v4)
		}
		whole := EncodeSplitExt(nil, s, shared, v4)
		if !bytes.Equal(whole[:len(want)], want) || !bytes.Equal(whole[len(want):], Sum(want)) {
			t.Fatalf("v4 %v: the whole file is not its head and checksum", v4)
		}
	}
}

// seeds answers the fuzz seeds: each form git writes, with its shared
// index (empty when whole).
func seeds(tb testing.TB) [][2][]byte {
	var out [][2][]byte
	for _, form := range forms {
		data, err := os.ReadFile(filepath.Join("testdata", form.name))
		if err != nil {
			tb.Fatalf("the fuzz seed of %s is missing (QUIRE_WRITE_SEEDS=1 go test -run TestSeeds writes them): %v", form.name, err)
		}
		shared, _ := os.ReadFile(filepath.Join("testdata", form.name+".shared"))
		out = append(out, [2][]byte{data, shared})
	}
	return out
}

// TestSeeds keeps the fuzz seeds (testdata/<form> and, for a split index,
// testdata/<form>.shared) what git writes: each is read whole. With
// QUIRE_WRITE_SEEDS set it writes them anew with the git CLI.
func TestSeeds(t *testing.T) {
	if os.Getenv("QUIRE_WRITE_SEEDS") != "" {
		os.MkdirAll("testdata", 0o755)
		for _, form := range forms {
			dir := gitIndex(t, 3, form.set)
			d, data := read(t, dir)
			os.WriteFile(filepath.Join("testdata", form.name), data, 0o644)
			if d.Shared != nil {
				shared, _ := os.ReadFile(filepath.Join(dir, ".git", "sharedindex."+d.SharedID.String()))
				os.WriteFile(filepath.Join("testdata", form.name+".shared"), shared, 0o644)
			}
		}
	}
	for i, s := range seeds(t) {
		d, err := decodeSeed(s[0], s[1])
		if err != nil || len(d.Entries) < 10 || (len(s[1]) > 0) != (d.Shared != nil) {
			t.Fatalf("seed %s: %d entries, %v", forms[i].name, len(d.Entries), err)
		}
	}
}

// decodeSeed decodes an index whose shared index, if any, is shared.
func decodeSeed(data, shared []byte) (Index, error) {
	return Decode(data, false, func(id object.Hash) ([]*Entry, error) {
		return DecodeShared(id, shared, false)
	})
}

// FuzzDecode: whatever the bytes of an index and its shared index, Decode
// answers entries or an error, never a panic; what it reads Encode writes
// back to a file it reads the same, and a split index it reads it writes
// back split against the same shared index, read the same (seeds: the
// forms the git CLI writes, testdata/).
func FuzzDecode(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, data, shared []byte) {
		d, err := decodeSeed(data, shared)
		if err != nil {
			return
		}
		for _, e := range d.Entries {
			if e.Stage != 0 || strings.Contains(e.Name, "\x00") {
				return // the vault refuses these before writing
			}
		}
		same := func(what string, back []byte, shared []byte) {
			again, err := decodeSeed(back, shared)
			if err != nil {
				t.Fatalf("%s: our own index is refused: %v", what, err)
			}
			if len(again.Entries) != len(d.Entries) {
				t.Fatalf("%s: %d entries written, %d read back", what, len(d.Entries), len(again.Entries))
			}
			for i := range again.Entries {
				a, b := *again.Entries[i], *d.Entries[i]
				if a.Name != b.Name || a.Hash != b.Hash || a.Mode != b.Mode || a.Size != b.Size || !a.ModifiedAt.Equal(b.ModifiedAt) || a.SkipWorktree != b.SkipWorktree || a.IntentToAdd != b.IntentToAdd {
					t.Fatalf("%s: entry %d: wrote %+v, read %+v", what, i, b, a)
				}
			}
		}
		same("whole", Encode(nil, d.Entries), nil)
		same("whole, version 4", EncodeV4(nil, d.Entries), nil)
		if d.Shared != nil && sorted(d.Shared) {
			same("split", EncodeSplit(nil, Diff(d.Shared, d.Entries), d.SharedID, false), shared)
			same("split, version 4", EncodeSplit(nil, Diff(d.Shared, d.Entries), d.SharedID, true), shared)
		}
	})
}

func sorted(entries []*Entry) bool {
	for i := 1; i < len(entries); i++ {
		if entries[i-1].Name >= entries[i].Name {
			return false
		}
	}
	return true
}
