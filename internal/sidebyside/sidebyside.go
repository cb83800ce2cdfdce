// Package sidebyside runs the items of a list on as many cores as there
// are, up to four: the reads of a vault's many small files (quire check's
// run folders, the work tree's status) that wait on the kernel as much as
// they compute.
package sidebyside

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Most is the most goroutines Each runs at once.
const Most = 4

// Each calls fn with each index of [0, n), on min(GOMAXPROCS, Most, n)
// goroutines taking the next index as they finish one, and returns when
// every call has. fn's calls must be safe side by side; each keeps what
// it finds at its own index, so the caller takes the findings in order
// however the calls interleave.
func Each(n int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), Most, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}
