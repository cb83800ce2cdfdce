package fsys

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A symbolic link at the last component is refused, and the refusal is
// told apart; a plain file opens.
func TestOpenNoFollow(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	if f, err := OpenNoFollow(link, os.O_RDONLY, 0); err == nil || !IsLink(err) {
		if f != nil {
			f.Close()
		}
		t.Fatalf("opening a link: %v, want a refusal IsLink tells", err)
	}
	f, err := OpenNoFollow(file, os.O_RDONLY, 0)
	if err != nil || IsLink(err) {
		t.Fatalf("opening a file: %v", err)
	}
	f.Close()
}

// Lock excludes a second open of the same file until Unlock.
func TestLockExcludes(t *testing.T) {
	name := filepath.Join(t.TempDir(), "lock")
	open := func() *os.File {
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := open(), open()
	if err := Lock(a); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- Lock(b) }()
	select {
	case err := <-got:
		t.Fatalf("a second lock was taken while the first was held (%v)", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := Unlock(a); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	Unlock(b)
}

// Map answers the file's bytes, and Stat the file's inode.
func TestMapAndStat(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(name, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := Map(f, 5)
	if err != nil || string(b) != "hello" {
		t.Fatalf("Map: %q, %v", b, err)
	}
	Unmap(b)
	fi, _ := f.Stat()
	if st, ok := Stat(fi); ok && (st.Ino == 0 || st.Ino != Inode(fi) || st.Ctime.IsZero()) {
		t.Fatalf("Stat: %+v", st)
	}
}
