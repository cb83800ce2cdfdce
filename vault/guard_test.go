package vault

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The guard, for any committed log and any change made to it by hand
// before quire's next commit: Kept, the commit and HandEdits refuse
// exactly when a committed byte changed (lines appended after HEAD's are
// taken), name the first line that differs, and RestoreCommitted puts
// back HEAD's part followed by the lines past HEAD's count, keeping the
// edited copy.
func TestGuardKeepsTheCommittedPart(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	dir := t.TempDir()
	v, err := Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	const rel = "playbook-runs/r/run.jsonl"
	v.SetGuard(func(p string) Keep {
		if p == rel {
			return Prefix
		}
		return Free
	})
	abs := filepath.Join(dir, filepath.FromSlash(rel))
	os.MkdirAll(filepath.Dir(abs), 0o755)
	var committed []byte
	commit := func() error {
		return v.Locked(func() error {
			_, err := v.Commit([]string{rel}, Signature{Name: "t", When: time.Now()}, "c")
			return err
		})
	}
	rounds := 60
	if os.Getenv("QUIRE_TEST_LONG") != "" {
		rounds = 600
	}
	for i := 0; i < rounds; i++ {
		// Grow the log by a few lines and commit it.
		for n := rng.Intn(3) + 1; n > 0; n-- {
			committed = append(committed, fmt.Sprintf("{\"n\":%d,\"x\":%q}\n", i, bytes.Repeat([]byte("a"), rng.Intn(20)))...)
		}
		if err := os.WriteFile(abs, committed, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := commit(); err != nil {
			t.Fatalf("round %d: commit of a grown log: %v", i, err)
		}
		// A change by hand: an append, or a byte changed somewhere.
		edited := append([]byte(nil), committed...)
		appended := []byte(fmt.Sprintf("{\"after\":%d}\n", i))
		changedAt := -1
		switch rng.Intn(3) {
		case 0:
			edited = append(edited, appended...)
		case 1:
			changedAt = rng.Intn(len(committed))
			edited[changedAt] ^= 0x20
			edited = append(edited, appended...)
		case 2:
			changedAt = rng.Intn(len(committed))
			edited = edited[:changedAt]
		}
		os.WriteFile(abs, edited, 0o644)
		var he *HandEdit
		err := v.Locked(func() error { return v.Kept([]string{"playbook-runs/r"}) })
		if changedAt < 0 {
			if err != nil {
				t.Fatalf("round %d: an append refused: %v", i, err)
			}
			if err := commit(); err != nil {
				t.Fatalf("round %d: commit of an append: %v", i, err)
			}
			committed = edited
			continue
		}
		if !errors.As(err, &he) {
			t.Fatalf("round %d: a change at byte %d not refused: %v", i, changedAt, err)
		}
		if want := bytes.Count(committed[:changedAt], []byte{'\n'}) + 1; he.Line != want || he.Path != rel {
			t.Fatalf("round %d: refused at %s:%d, want line %d", i, he.Path, he.Line, want)
		}
		if err := commit(); !errors.As(err, &he) {
			t.Fatalf("round %d: the commit took the edit: %v", i, err)
		}
		var edits []*HandEdit
		v.Locked(func() error { edits, err = v.HandEdits(); return err })
		if len(edits) != 1 || edits[0].Line != he.Line {
			t.Fatalf("round %d: HandEdits %v, want line %d", i, edits, he.Line)
		}
		var kept string
		v.Locked(func() error { kept, err = v.RestoreCommitted(edits[0]); return err })
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(abs)
		want := committed
		if n := bytes.Count(edited, []byte{'\n'}); n > bytes.Count(committed, []byte{'\n'}) {
			want = append(append([]byte(nil), committed...), appended...)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("round %d: restored\n%s\nwant\n%s", i, got, want)
		}
		if k, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(kept))); !bytes.Equal(k, edited) {
			t.Fatalf("round %d: the edited copy %s is not kept whole", i, kept)
		}
		committed = want
		if err := commit(); err != nil {
			t.Fatalf("round %d: commit after the restore: %v", i, err)
		}
	}
}

// KeptLines, the rule of an append-only file that the guard holds at a
// write and quire check --history proves of each commit: the old version's
// complete lines a byte prefix of the new, a torn last line never
// committed, and otherwise the first line where they differ.
func TestKeptLines(t *testing.T) {
	for _, c := range []struct {
		old, cur string
		line     int
	}{
		{"", "", 0},
		{"", "a\n", 0},
		{"a\nb\n", "a\nb\n", 0},
		{"a\nb\n", "a\nb\nc\n", 0},
		{"a\nb\n", "a\nb\nc", 0},
		{"a\nb\nto", "a\nb\n", 0},       // a torn last line was never committed
		{"a\nb\nto", "a\nb\ntorn\n", 0}, // nor is it kept
		{"a\nb\n", "a\nB\n", 2},         // a line changed
		{"a\nb\n", "a\n", 2},            // a line removed
		{"a\nb\nc\n", "a\n", 2},         // lines removed
		{"a\nb\n", "", 1},               // all of them
		{"a\nb\n", "x\nb\n", 1},         // the first
		{"a\nbb\n", "a\nb", 2},          // a committed line cut short
		{"a\nb\n", "a\nb", 2},           // its newline gone
	} {
		if got := KeptLines([]byte(c.old), []byte(c.cur)); got != c.line {
			t.Errorf("KeptLines(%q, %q) = %d, want %d", c.old, c.cur, got, c.line)
		}
	}
	if got := string(CommittedLines([]byte("a\nb\ntorn"))); got != "a\nb\n" {
		t.Errorf("CommittedLines = %q", got)
	}
}
