package history_test

import (
	"os"
	"path/filepath"
	"testing"

	"quire/ledger/history"
)

// chainOf is the chain over lines, as docs/vault-format.md writes it.
func chainOf(lines ...string) string {
	var c [history.ChainSize]byte
	for _, l := range lines {
		c = history.Link(c, []byte(l[:len(l)-1]))
	}
	return history.ChainString(c)
}

// The chain follows the records: extended by the reads, a record dropped
// by Repair leaves it with the record, and one made anew (its file gone,
// or the history rebuilt) is the same.
func TestTheChainFollowsTheRecords(t *testing.T) {
	f := newFixture(t)
	f.record(runLog, "e1")
	f.record(runLog, "e2")
	e1, e2 := line("step_completed", "e1", "id-1", 1), line("step_completed", "e2", "id-2", 2)
	chain := func(seq int64) string {
		t.Helper()
		c, err := f.history().Chain(seq)
		if err != nil {
			t.Fatal(err)
		}
		return history.ChainString(c)
	}
	if got, want := chain(2), chainOf(e1, e2); got != want {
		t.Fatalf("chain(2) %s, want %s", got, want)
	}
	// A reservation never written whole, dropped, and another line in its
	// place.
	whole := f.size(runLog)
	torn := line("step_completed", "torn", "id-3", 3)
	f.locked(func() error {
		_, err := f.history().Reserve(runLog, whole, len(torn))
		return err
	})
	f.appendRaw(runLog, torn[:10])
	f.history().Page(0, 10)
	f.locked(f.history().Repair)
	f.record(runLog, "e3")
	e3 := line("step_completed", "e3", "id-3", 3)
	if got, want := chain(3), chainOf(e1, e2, e3); got != want {
		t.Fatalf("chain(3) after a repair %s, want %s", got, want)
	}
	if got := chain(0); got != chainOf() {
		t.Fatalf("chain(0) %s", got)
	}
	// The chain file gone, and then the whole history: the same chain.
	os.Remove(filepath.Join(f.dir, ".quire", "history", "finance.chain"))
	if got, want := chain(3), chainOf(e1, e2, e3); got != want {
		t.Fatalf("chain(3) made again %s, want %s", got, want)
	}
	for _, ext := range []string{".seq", ".files", ".chain"} {
		os.Remove(filepath.Join(f.dir, ".quire", "history", "finance"+ext))
	}
	f.s = history.New(f.v, f.src)
	if got, want := chain(3), chainOf(e1, e2, e3); got != want {
		t.Fatalf("chain(3) of a rebuilt history %s, want %s", got, want)
	}
}
