package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

// The ledger's long work (reindex, check --history, janitor) reports
// through the same meter: nothing before a second, then about once a
// second with the time left, and once at the end.
func TestTaskProgress(t *testing.T) {
	var errb strings.Builder
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	p := taskProgress(&errb, func() time.Time { return at })
	p("check --history: proving the commits", "commits", 1, 400)
	at = at.Add(500 * time.Millisecond)
	p("check --history: proving the commits", "commits", 50, 400)
	if errb.Len() != 0 {
		t.Fatalf("before a second: %q", errb.String())
	}
	at = at.Add(1500 * time.Millisecond)
	p("check --history: proving the commits", "commits", 100, 400)
	at = at.Add(100 * time.Millisecond)
	p("check --history: proving the commits", "commits", 110, 400)
	at = at.Add(6 * time.Second)
	p("check --history: proving the commits", "commits", 400, 400)
	want := "quire: check --history: proving the commits: 100 of 400 commits, 50 commits/s, about 6s left\n" +
		"quire: check --history: proving the commits: 400 of 400 commits, 49 commits/s\n"
	if errb.String() != want {
		t.Fatalf("progress\n%q\nwant\n%q", errb.String(), want)
	}
}

// Progress is for a person at a terminal: standard error that is a file or
// a pipe gets none.
func TestProgressOnlyOnATerminal(t *testing.T) {
	if isTerminal(&bytes.Buffer{}) {
		t.Fatal("a buffer is a terminal")
	}
	f, err := os.CreateTemp(t.TempDir(), "err")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Fatal("a file is a terminal")
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		if !isTerminal(tty) {
			t.Fatal("/dev/tty is not a terminal")
		}
	}
}
