// Package crashpoint is the crash test's hook: with QUIRE_CRASH_AFTER=n in
// the environment, the process kills itself with SIGKILL just before its
// (n+1)th file-changing operation (a write, rename, truncate, mkdir,
// remove or lock file), so a test can stop a writer at every step of an
// operation and check what the next writer makes of what it left.
//
// Unset, Hit costs one load of a variable read once at start-up.
package crashpoint

import (
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"quire/internal/fsys"
)

// Env is the variable the hook reads.
const Env = "QUIRE_CRASH_AFTER"

var (
	armed bool
	left  atomic.Int64
)

func init() {
	if n, err := strconv.ParseInt(os.Getenv(Env), 10, 64); err == nil && n >= 0 {
		armed = true
		left.Store(n)
	}
}

// Hit marks one file-changing operation about to happen. With the hook
// armed and its count spent, the process dies at once, as a kill -9 would
// leave it: no deferred function runs and no file is closed by Go.
func Hit() {
	if !armed {
		return
	}
	if left.Add(-1) < 0 {
		fsys.KillSelf()
		for {
			time.Sleep(time.Second) // the signal is on its way
		}
	}
}
