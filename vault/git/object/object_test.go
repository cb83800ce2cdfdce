package object

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
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

// gitRepo makes a repository with the git CLI: three commits of a few
// files, folders and an executable, a file removed, a merge. Its objects
// are loose.
func gitRepo(tb testing.TB) string {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("git is not installed")
	}
	dir := tb.TempDir()
	git(tb, dir, "init", "-q", "-b", "main")
	write := func(rel, s string, mode os.FileMode) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), mode); err != nil {
			tb.Fatal(err)
		}
	}
	write("quire.yaml", "org: acme\n", 0o644)
	write("playbook-runs/close-0001/run.jsonl", "{\"event\":\"run_created\"}\n", 0o644)
	write("playbook-runs/close-0001/thread.md", "# close\n", 0o644)
	write("playbook-runs/close-0001.md", "a file sorted before its folder's name\n", 0o644)
	write("x/run.sh", "echo\n", 0o755)
	git(tb, dir, "add", "-A")
	git(tb, dir, "commit", "-q", "-m", "first")
	git(tb, dir, "checkout", "-q", "-b", "side")
	write("playbook-runs/close-0002/run.jsonl", "{\"event\":\"run_created\"}\n", 0o644)
	git(tb, dir, "add", "-A")
	git(tb, dir, "commit", "-q", "-m", "side")
	git(tb, dir, "checkout", "-q", "main")
	write("playbook-runs/close-0001/run.jsonl", "{\"event\":\"run_created\"}\n{\"event\":\"step_completed\"}\n", 0o644)
	os.Remove(filepath.Join(dir, "x", "run.sh"))
	git(tb, dir, "add", "-A")
	git(tb, dir, "commit", "-q", "-m", "second\n\nwith a body")
	git(tb, dir, "merge", "-q", "--no-edit", "side")
	return dir
}

// gitObjects answers the ids of the repository's objects of type typ.
func gitObjects(tb testing.TB, dir, typ string) []string {
	out := git(tb, dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)")
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if id, t, _ := strings.Cut(line, " "); t == typ {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		tb.Fatalf("git made no %s", typ)
	}
	return ids
}

// Every loose object git writes is read as git reads it, and hashes to
// its name.
func TestReadLooseReadsWhatGitWrites(t *testing.T) {
	dir := gitRepo(t)
	files, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "??", "*"))
	if len(files) < 10 {
		t.Fatalf("%d loose objects", len(files))
	}
	for _, f := range files {
		id := filepath.Base(filepath.Dir(f)) + filepath.Base(f)
		typ, data, err := ReadLooseFile(f)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if got := Sum(typ, data).String(); got != id {
			t.Fatalf("%s hashes as %s", id, got)
		}
		if want := strings.TrimSpace(string(git(t, dir, "cat-file", "-t", id))); typ.String() != want {
			t.Fatalf("%s: type %s, git says %s", id, typ, want)
		}
		if want := git(t, dir, "cat-file", typ.String(), id); !bytes.Equal(data, want) {
			t.Fatalf("%s: read %q, git %q", id, data, want)
		}
		ht, size, err := LooseHeader(f)
		if err != nil || ht != typ || size != int64(len(data)) {
			t.Fatalf("%s: header %s %d %v", id, ht, size, err)
		}
	}
}

// A tree git writes is parsed as git lists it and encoded back to its
// bytes; a commit's tree and parents are git's.
func TestTreesAndCommitsAreGits(t *testing.T) {
	dir := gitRepo(t)
	for _, id := range gitObjects(t, dir, "tree") {
		raw := git(t, dir, "cat-file", "tree", id)
		entries, err := ParseTree(raw)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, e := range entries {
			kind := "blob"
			if e.Mode == Dir {
				kind = "tree"
			}
			fmt.Fprintf(&b, "%06o %s %s\t%s\n", uint32(e.Mode), kind, e.Hash, e.Name)
		}
		if want := string(git(t, dir, "ls-tree", id)); b.String() != want {
			t.Fatalf("tree %s:\n%s\ngit lists\n%s", id, b.String(), want)
		}
		sorted := append([]TreeEntry(nil), entries...)
		SortTree(sorted)
		if !reflect.DeepEqual(sorted, entries) {
			t.Fatalf("tree %s is not in TreeLess's order", id)
		}
		if back := AppendTree(nil, entries); !bytes.Equal(back, raw) || len(back) > TreeSize(entries) {
			t.Fatalf("tree %s encoded as %q, git wrote %q", id, back, raw)
		}
	}
	for _, id := range gitObjects(t, dir, "commit") {
		tree, parents, err := ParseCommit(git(t, dir, "cat-file", "commit", id))
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Fields(string(git(t, dir, "show", "-s", "--format=%T %P", id)))
		got := []string{tree.String()}
		for _, p := range parents {
			got = append(got, p.String())
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("commit %s: %v, git %v", id, got, want)
		}
	}
}

func TestTreeOrderIsGits(t *testing.T) {
	d := func(n string) TreeEntry { return TreeEntry{Name: n, Mode: Dir} }
	f := func(n string) TreeEntry { return TreeEntry{Name: n, Mode: Regular} }
	entries := []TreeEntry{d("a"), f("a-b"), f("a.b"), d("a0"), f("ab"), f("a")}
	SortTree(entries)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name)
	}
	// git: "a" (file) < "a-b" < "a.b" < "a/" (folder) < "a0" < "ab"
	if strings.Join(got, " ") != "a a-b a.b a a0 ab" || entries[3].Mode != Dir {
		t.Fatalf("%v", got)
	}
}

// FindEntry finds every entry of a tree in git's order by its name, files
// and folders whose names sort apart from "name/" alike, answers not found
// for a name the tree lacks, and finds entries added after the sorted ones.
func TestFindEntryFindsEveryName(t *testing.T) {
	rng := rand.New(rand.NewSource(6))
	letters := "a-.0b_"
	for round := 0; round < 200; round++ {
		seen := map[string]bool{}
		var entries []TreeEntry
		for n := rng.Intn(60); n > 0; n-- {
			b := make([]byte, 1+rng.Intn(4))
			for i := range b {
				b[i] = letters[rng.Intn(len(letters))]
			}
			if seen[string(b)] {
				continue
			}
			seen[string(b)] = true
			mode := Regular
			if rng.Intn(2) == 0 {
				mode = Dir
			}
			entries = append(entries, TreeEntry{Name: string(b), Mode: mode})
		}
		SortTree(entries)
		entries = append(entries, TreeEntry{Name: "zz-added", Mode: Regular}, TreeEntry{Name: "a-added", Mode: Dir})
		for i, e := range entries {
			if k, ok := FindEntry(entries, e.Name); !ok || k != i {
				t.Fatalf("round %d: %q at %d found at %d, %v", round, e.Name, i, k, ok)
			}
		}
		if _, ok := FindEntry(entries, "b-absent"); ok {
			t.Fatalf("round %d: found a name the tree lacks", round)
		}
	}
}

func TestParseHash(t *testing.T) {
	h := Sum(Blob, []byte("x"))
	if back, err := ParseHash(h.String()); err != nil || back != h {
		t.Fatalf("%s read back as %s, %v", h, back, err)
	}
	if back, err := ParseHash(strings.ToUpper(h.String())); err != nil || back != h {
		t.Fatalf("upper case: %s, %v", back, err)
	}
	for _, bad := range []string{"", h.String()[:39], h.String() + "0", "g" + h.String()[1:]} {
		if IsHash(bad) {
			t.Fatalf("%q taken for an id", bad)
		}
	}
	// git's id of the empty blob.
	if s := Sum(Blob, nil).String(); s != "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391" {
		t.Fatal(s)
	}
}

// FuzzReadLoose: whatever the bytes, ReadLoose answers an object or an
// error, never a panic, and what it reads it writes back to a stream that
// reads the same (seeds: the loose objects the git CLI writes).
func FuzzReadLoose(f *testing.F) {
	dir := gitRepo(f)
	files, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "??", "*"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		typ, content, err := ReadLoose(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		zw := zlib.NewWriter(&buf)
		if err := WriteLoose(zw, typ, content); err != nil {
			t.Fatal(err)
		}
		zw.Close()
		t2, c2, err := ReadLoose(&buf, int64(buf.Len()))
		if err != nil || t2 != typ || !bytes.Equal(c2, content) {
			t.Fatalf("written back as %s %q (%v), read %s %q", t2, c2, err, typ, content)
		}
	})
}

// FuzzReadLooseToHash: whatever the bytes, the reading of compaction
// answers an object or an error, never a panic; what ReadLoose reads it
// reads the same, and what it reads from stored blocks whose Adler-32 is
// right, ReadLoose reads the same (seeds: git's loose objects, and stored
// ones of one and of several blocks as zlib writes them).
func FuzzReadLooseToHash(f *testing.F) {
	dir := gitRepo(f)
	files, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "??", "*"))
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	for _, n := range []int{0, 40, 70000} {
		var buf bytes.Buffer
		zw, _ := zlib.NewWriterLevel(&buf, zlib.NoCompression)
		WriteLoose(zw, Blob, bytes.Repeat([]byte("seq "), n/4))
		zw.Close()
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		typ, content, err := readLooseToHash(bytes.Clone(data)) // read in place
		t2, c2, err2 := ReadLoose(bytes.NewReader(data), int64(len(data)))
		if err2 == nil && (err != nil || typ != t2 || !bytes.Equal(content, c2)) {
			t.Fatalf("read %s %d bytes (%v), ReadLoose %s %d bytes", typ, len(content), err, t2, len(c2))
		}
		if _, _, ok := readStored(bytes.Clone(data)); ok && err2 != nil {
			var hdr [32]byte
			ad := adler32.New()
			ad.Write(AppendHeader(hdr[:0], typ, len(content)))
			ad.Write(content)
			if binary.BigEndian.Uint32(data[len(data)-4:]) == ad.Sum32() {
				t.Fatalf("stored blocks with a right checksum that ReadLoose refuses: %v", err2)
			}
		}
	})
}

// FuzzParseTree: whatever the bytes, ParseTree answers entries or an
// error, never a panic, and the entries it reads encode to a tree it reads
// the same (seeds: the trees the git CLI writes).
func FuzzParseTree(f *testing.F) {
	dir := gitRepo(f)
	for _, id := range gitObjects(f, dir, "tree") {
		f.Add(git(f, dir, "cat-file", "tree", id))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := ParseTree(data)
		if err != nil {
			return
		}
		again, err := ParseTree(AppendTree(nil, entries))
		if err != nil || !reflect.DeepEqual(again, entries) && len(entries) > 0 {
			t.Fatalf("read %+v, written back and read %+v (%v)", entries, again, err)
		}
	})
}

// FuzzParseCommit: whatever the bytes, ParseCommit answers or errs,
// never panics (seeds: the commits the git CLI writes, a merge among them).
func FuzzParseCommit(f *testing.F) {
	dir := gitRepo(f)
	for _, id := range gitObjects(f, dir, "commit") {
		f.Add(git(f, dir, "cat-file", "commit", id))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tree, parents, err := ParseCommit(data)
		if err == nil && !bytes.HasPrefix(data, []byte("tree ")) {
			t.Fatalf("read tree %s parents %v from %q", tree, parents, data)
		}
	})
}
