package fsys

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// OpenFile, Open and ReadFile answer as os's do: the same bytes, the
// same errors, appends where they append, a folder read as a folder.
func TestOpenAnswersAsOsOpens(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 511, 512, 513, 4096, 1 << 20} {
		p := filepath.Join(dir, "f")
		data := bytes.Repeat([]byte("quire\n"), n/6+1)[:n]
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(p)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("ReadFile of %d bytes: %d bytes, %v", n, len(got), err)
		}
	}
	missing := filepath.Join(dir, "missing")
	_, err := Open(missing)
	_, osErr := os.Open(missing)
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || err.Error() != osErr.Error() {
		t.Fatalf("Open of a missing file: %v, os.Open: %v", err, osErr)
	}
	if _, err := ReadFile(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadFile of a missing file: %v", err)
	}
	p := filepath.Join(dir, "log")
	for _, line := range []string{"a\n", "b\n"} {
		f, err := OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(line); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := os.ReadFile(p); string(got) != "a\nb\n" {
		t.Fatalf("appended %q", got)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Fatalf("made with mode %v", fi.Mode())
	}
	if _, err := OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("O_EXCL over a file: %v", err)
	}
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil || len(names) != 2 {
		t.Fatalf("the folder read %v, %v", names, err)
	}
}
