package fsys

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A stat taken in the same tick as the file's last change does not show a
// second change in that tick (where the file system's clock is coarse): the
// file is then read whole, not trusted unchanged. The clock of this
// machine may be fine, so the tick is made by hand: the stat held is said
// to have been taken at the file's own time.
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
	from, data, err := g.Next(f)
	if err != nil || from != 0 || string(data) != "a\nb\n" {
		t.Fatalf("first read: %d %q %v", from, data, err)
	}
	g.Took(from, data, len(data))
	for _, c := range []struct {
		at    time.Duration // the stat held taken this long after the change
		whole bool
	}{{0, true}, {racyWindow / 2, true}, {racyWindow * 2, false}} {
		g.at = g.stamp.mtime.Add(c.at)
		if g.stamp.ctime.After(g.stamp.mtime) {
			g.at = g.stamp.ctime.Add(c.at)
		}
		from, data, err := g.Next(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := data != nil; got != c.whole || from != 0 && c.whole {
			t.Fatalf("stat held %v after the change: read from %d %q, want whole %v", c.at, from, data, c.whole)
		}
		g.Took(from, data, len(data))
	}
	// Appended: only the tail. Cut and grown again past the old end with
	// other bytes: whole.
	fa, _ := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
	fa.WriteString("c\n")
	fa.Close()
	if from, data, _ := g.Next(f); from != 4 || string(data) != "c\n" {
		t.Fatalf("after an append: read from %d %q", from, data)
	} else {
		g.Took(from, data, len(data))
	}
	if err := os.WriteFile(name, []byte("a\nx\nyy\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if from, data, _ := g.Next(f); from != 0 || string(data) != "a\nx\nyy\n" {
		t.Fatalf("after a rewrite: read from %d %q", from, data)
	}
}
