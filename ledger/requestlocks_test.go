package ledger

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// Calls with one request id take turns; the locks of ids no call holds
// are forgotten, so a long-lived server does not keep every id it saw.
func TestRequestLocksTakeTurnsAndForget(t *testing.T) {
	var r requestLocks
	unlock := r.lock("finance\x00a")
	got := make(chan string, 2)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer r.lock("finance\x00a")()
		got <- "second"
	}()
	time.Sleep(20 * time.Millisecond)
	got <- "first"
	unlock()
	wg.Wait()
	if a, b := <-got, <-got; a != "first" || b != "second" {
		t.Fatalf("the second call with the same id did not wait: %s, %s", a, b)
	}
	for i := 0; i < 1000; i++ {
		r.lock(fmt.Sprintf("finance\x00%d", i))()
	}
	if len(r.m) != 0 {
		t.Fatalf("%d locks kept after their calls ended", len(r.m))
	}
}
