package fsys

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A stat taken in the same tick as the file's last change does not show a
// second change in that tick (where the file system's clock is coarse):
// the bytes taken are then read again and compared, and the file is read
// whole when they differ. This machine's clock may be fine, so the tick is
// made by hand: the stat held is set to the file's stat after the second
// write, taken at the file's own time.
func TestGrownTrustsNoStatTakenInTheTickOfAChange(t *testing.T) {
	name := filepath.Join(t.TempDir(), "list")
	if err := os.WriteFile(name, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var g Grown
	next := func() (int64, string) {
		t.Helper()
		from, data, err := g.Next(f)
		if err != nil {
			t.Fatal(err)
		}
		g.Took(from, data, len(data))
		if data == nil {
			return from, "(nothing)"
		}
		return from, string(data)
	}
	if from, data := next(); from != 0 || data != "a\nb\n" {
		t.Fatalf("first read: %d %q", from, data)
	}
	// Rewritten in place to the same size, in the tick of the stat held.
	if err := os.WriteFile(name, []byte("a\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	held := func(after time.Duration) {
		g.stamp = growStampOf(fi)
		g.at = g.stamp.mtime.Add(after)
		if g.stamp.ctime.After(g.stamp.mtime) {
			g.at = g.stamp.ctime.Add(after)
		}
	}
	held(racyWindow / 2)
	if from, data := next(); from != 0 || data != "a\nc\n" {
		t.Fatalf("rewritten in the tick of the stat held: read from %d %q, want the whole file", from, data)
	}
	// Unchanged, in the tick: the bytes taken are read again, and nothing
	// is answered. Unchanged, the stat held long after: not even read.
	held(0)
	if from, data := next(); from != 4 || data != "" {
		t.Fatalf("unchanged in the tick: read from %d %q", from, data)
	}
	held(racyWindow * 2)
	if from, data := next(); from != 4 || data != "(nothing)" {
		t.Fatalf("unchanged long after: read from %d %q", from, data)
	}
	// Appended: only the tail. Cut and grown past the old end with other
	// bytes: whole.
	fa, _ := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
	fa.WriteString("d\n")
	fa.Close()
	if from, data := next(); from != 4 || data != "a\nc\nd\n"[4:] {
		t.Fatalf("after an append: read from %d %q", from, data)
	}
	if err := os.WriteFile(name, []byte("a\nx\nyy\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if from, data := next(); from != 0 || data != "a\nx\nyy\n" {
		t.Fatalf("after a rewrite: read from %d %q", from, data)
	}
}
