package fsys

import (
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// StampOf of an os.Lstat says what Dir.Lstat says of the same entry: its
// kind, size, times and inode (the mode's permission bits with them), for
// a file, an executable, a folder, a link and a socket.
func TestStampOfIsDirLstats(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("Dir.Lstat takes no change time here")
	}
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "file"), []byte("twelve bytes"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "tool"), []byte("#!/bin/sh\n"), 0o755))
	must(os.Mkdir(filepath.Join(dir, "folder"), 0o755))
	must(os.Symlink("file", filepath.Join(dir, "link")))
	l, err := net.Listen("unix", filepath.Join(dir, "sock"))
	must(err)
	defer l.Close()
	d, err := OpenDir(dir)
	must(err)
	defer d.Close()
	for _, name := range []string{"file", "tool", "folder", "link", "sock"} {
		want, ok := d.Lstat(name)
		if !ok {
			t.Fatalf("Dir.Lstat(%s) found nothing", name)
		}
		fi, err := os.Lstat(filepath.Join(dir, name))
		must(err)
		got := StampOf(fi)
		const kindAndPerm = 0xf000 | 0o777
		if got.Size != want.Size || got.MTime != want.MTime || got.CTime != want.CTime || got.Ino != want.Ino ||
			got.Mode&kindAndPerm != want.Mode&kindAndPerm {
			t.Fatalf("%s: StampOf %+v, Dir.Lstat %+v", name, got, want)
		}
		if got.IsDir() != (name == "folder") || got.IsRegular() != (name == "file" || name == "tool") || got.IsSymlink() != (name == "link") {
			t.Fatalf("%s: StampOf's kind %o: dir %v, regular %v, link %v", name, got.Mode, got.IsDir(), got.IsRegular(), got.IsSymlink())
		}
	}
}
