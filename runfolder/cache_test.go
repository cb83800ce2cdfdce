package runfolder

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
	"weak"

	"quire/vault"
)

// The cache holds at most its budget, the runs read least recently going
// first, and never a state larger than the whole budget.
func TestStateCacheIsBounded(t *testing.T) {
	st := &State{RunID: "01a23279-a44d-754f-a2ed-4df0d3994c48", State: Active, Status: "started", StepsSeen: []string{"do/0/work"}}
	one := entryOverhead + len("/v/run-00/run.jsonl") + st.size()
	c := newStateCache(10 * one)
	log := func(i int) string { return fmt.Sprintf("/v/run-%02d/run.jsonl", i) }
	for i := range 10 {
		c.store(log(i), int64(i), st)
	}
	if _, _, ok := c.load(log(0)); !ok { // run 0 is now the most recent
		t.Fatal("run 0 is not kept")
	}
	for i := 10; i < 30; i++ {
		c.store(log(i), int64(i), st)
		if c.bytes > c.max {
			t.Fatalf("after %d runs the cache holds %d bytes, past %d", i+1, c.bytes, c.max)
		}
	}
	if len(c.byLog) != 10 || c.order.Len() != 10 {
		t.Fatalf("%d runs kept (%d in order)", len(c.byLog), c.order.Len())
	}
	for i := range 30 {
		_, _, ok := c.load(log(i))
		if want := i >= 20; ok != want {
			t.Errorf("run %d kept: %v", i, ok)
		}
	}
	// Storing a run again replaces it and counts it once.
	c.store(log(29), 99, st)
	if stamp, got, ok := c.load(log(29)); !ok || stamp != 99 || got == st || got.RunID != st.RunID || len(c.byLog) != 10 || c.bytes != 10*one {
		t.Fatalf("%d %+v %v: %d runs, %d bytes", stamp, got, ok, len(c.byLog), c.bytes)
	}
	big := &State{Output: json.RawMessage(`"` + strings.Repeat("x", 10*one) + `"`)}
	c.store(log(29), 100, big)
	if _, _, ok := c.load(log(29)); ok || len(c.byLog) != 9 {
		t.Fatalf("a state past the budget is kept: %v, %d runs", ok, len(c.byLog))
	}
	c.update(log(28), big)
	if _, _, ok := c.load(log(28)); ok {
		t.Fatal("a state past the budget is kept by update")
	}
}

// Each vault has its cache, and it goes with the vault.
func TestStateCacheIsTheVaults(t *testing.T) {
	open := func() *vault.Vault {
		v, err := vault.Init(t.TempDir(), "acme", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	a, b := open(), open()
	defer a.Close()
	defer b.Close()
	if first, again := cacheOf(a), cacheOf(a); first != again || first == cacheOf(b) {
		t.Fatal("two vaults share a cache, or one has two")
	}
	c := open()
	cacheOf(c).store("/c/run.jsonl", 1, &State{})
	key := weak.Make(c)
	c.Close()
	c = nil
	for deadline := time.Now().Add(10 * time.Second); ; {
		runtime.GC()
		if _, ok := caches.Load(key); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the cache of a vault gone is still kept")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A state kept reads as the state it was: an empty list of steps stays
// empty, not null (the run facts name a state by its JSON, and a search
// rendered a run's headline again at every list while the first read and
// the cached ones disagreed).
func TestStateCacheKeepsTheStateAsItWas(t *testing.T) {
	c := newStateCache(1 << 20)
	for _, st := range []*State{
		{RunID: "01a23279-a44d-754f-a2ed-4df0d3994c48", StepsSeen: []string{}},
		{RunID: "01a23279-a44d-754f-a2ed-4df0d3994c48"},
		{RunID: "01a23279-a44d-754f-a2ed-4df0d3994c48", StepsSeen: []string{"do/0/work"}},
	} {
		c.store("/v/run/run.jsonl", 1, st)
		_, got, _ := c.load("/v/run/run.jsonl")
		want, _ := json.Marshal(st)
		if b, _ := json.Marshal(got); string(b) != string(want) {
			t.Errorf("kept %s, read back %s", want, b)
		}
	}
}
