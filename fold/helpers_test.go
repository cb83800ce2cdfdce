package fold

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// jsProgram is a program written in JavaScript, its lines its own.
func jsProgram(js string, views map[string]string) *Program {
	return NewProgram(js, nil, 1, views)
}

// sharedPool is the pool the tests share: the page format's limits, its
// workers kept warm from test to test. A worker process starts in some
// half a second of CPU; a program loads into a warm one in tens of
// milliseconds. TestMain closes it.
var sharedPool struct {
	once sync.Once
	pool *Pool
	err  error
}

// newTestPool answers the shared pool to a test that takes the page
// format's limits, and a pool of its own to a test of other limits and to
// a benchmark (which measures its own workers).
func newTestPool(t testing.TB, lim Limits) *Pool {
	t.Helper()
	if _, isTest := t.(*testing.T); isTest && lim == (Limits{}) {
		sharedPool.once.Do(func() { sharedPool.pool, sharedPool.err = NewPool(PoolOptions{}) })
		if sharedPool.err != nil {
			t.Fatal(sharedPool.err)
		}
		return sharedPool.pool
	}
	p, err := NewPool(PoolOptions{Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// event makes a run_succeeded event of the history.
func event(seq int64, at time.Time, data string) Event {
	j := fmt.Sprintf(`{"specversion":"1.0","id":"ev-%d","type":"run_succeeded","source":"playbooks/social","subject":"workflow/morning-social-content","time":%q,"data":%s}`,
		seq, at.UTC().Format(time.RFC3339Nano), data)
	return Event{Seq: seq, JSON: []byte(j), Time: at}
}

func foldAll(t testing.TB, p *Pool, prog *Program, events []Event) Result {
	t.Helper()
	r, err := p.Fold(context.Background(), prog, nil, events)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestMain(m *testing.M) {
	if os.Getenv(unaskedEnv) == "" {
		ServeIfWorker()
	} else if os.Getenv(workerEnv) == "1" {
		// A worker of the program that did not ask (child_test.go):
		// it must never have been started.
		os.Exit(7)
	}
	code := m.Run()
	if sharedPool.pool != nil {
		sharedPool.pool.Close()
	}
	os.Exit(code)
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
