package history

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A kept file answers the file's text whatever changed it: written in
// place (longer, shorter, or of the same length a tick later), made anew
// and renamed over it (git's HEAD), removed; and what the writer says it
// wrote.
func TestAKeptFileAnswersTheFilesText(t *testing.T) {
	p := filepath.Join(t.TempDir(), "stamp")
	var k keptFile
	want := func(text string) {
		t.Helper()
		got, err := k.read(p)
		if err != nil || got != text {
			t.Fatalf("read %q, %v; want %q", got, err, text)
		}
	}
	write := func(text string) {
		t.Helper()
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte(text), 0); err != nil || f.Truncate(int64(len(text))) != nil || f.Close() != nil {
			t.Fatal("write")
		}
	}
	write("HEAD 21 1 2\n")
	want("HEAD 21 1 2\n")
	want("HEAD 21 1 2\n")
	write("HEAD 21 1 22\n")
	want("HEAD 21 1 22\n")
	write("HEAD 2 1 2\n")
	want("HEAD 2 1 2\n")
	// The same length, past the file system clock's tick.
	time.Sleep(30 * time.Millisecond)
	write("HEAD 3 1 2\n")
	want("HEAD 3 1 2\n")
	// Made anew and renamed into place, the same length.
	tmp := p + ".lock"
	if err := os.WriteFile(tmp, []byte("HEAD 4 1 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	want("HEAD 4 1 2\n")
	write("HEAD 5 1 2\n")
	k.wrote(p, "HEAD 5 1 2\n")
	want("HEAD 5 1 2\n")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if _, err := k.read(p); err == nil {
		t.Fatal("a removed file read")
	}
}
