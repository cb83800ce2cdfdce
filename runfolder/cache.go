package runfolder

import (
	"container/list"
	"runtime"
	"sync"
	"weak"

	"quire/vault"
)

// The state of each run as LoadState last saw it, so that reading a run
// whose run.state.json did not change since costs a stat rather than a
// read of run.state.json, definition.md and a line of run.jsonl (a list
// of runs, a glance over a definition's runs, every write to a run).
//
// Each vault has its own cache, dropped when the vault is (a process that
// opens many vaults, as the tests do, keeps none of the closed ones), and
// a cache holds at most maxCachedBytes of states, about 30,000 runs of
// ordinary states: past that the runs read least recently go first. A
// state larger than the whole budget (an output of megabytes) is not kept.
const maxCachedBytes = 32 << 20

// entryOverhead is about what an entry takes besides its key and its
// text and JSON: the State itself, its list element and its map slot.
const entryOverhead = 768

var caches sync.Map // weak.Pointer[vault.Vault] → *stateCache

// cacheOf is the vault's cache of states.
func cacheOf(v *vault.Vault) *stateCache {
	key := weak.Make(v)
	if c, ok := caches.Load(key); ok {
		return c.(*stateCache)
	}
	c, loaded := caches.LoadOrStore(key, newStateCache(maxCachedBytes))
	if !loaded && v != nil {
		runtime.AddCleanup(v, func(k weak.Pointer[vault.Vault]) { caches.Delete(k) }, key)
	}
	return c.(*stateCache)
}

// stateCache is a cache of states bounded by their size, least recently
// used first out. Its methods are safe for concurrent use.
type stateCache struct {
	mu    sync.Mutex
	max   int
	bytes int
	byLog map[string]*list.Element // abs path of run.jsonl → *cacheEntry
	order list.List                // most recently used first
}

type cacheEntry struct {
	log   string
	stamp int64 // run.state.json's mtime and size, as LoadState makes it
	st    *State
	size  int
}

func newStateCache(max int) *stateCache {
	return &stateCache{max: max, byLog: map[string]*list.Element{}}
}

// load answers a copy of the state kept for the run and its stamp.
func (c *stateCache) load(log string) (stamp int64, st *State, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byLog[log]
	if !ok {
		return 0, nil, false
	}
	c.order.MoveToFront(el)
	e := el.Value.(*cacheEntry)
	return e.stamp, e.st.clone(), true
}

// store keeps a copy of the state with its stamp, replacing what was kept
// for the run, and drops the runs used least recently until the cache
// holds at most its budget.
func (c *stateCache) store(log string, stamp int64, st *State) {
	e := &cacheEntry{log: log, stamp: stamp, st: st.clone(), size: entryOverhead + len(log) + st.size()}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(log)
	if e.size > c.max {
		return
	}
	c.byLog[log] = c.order.PushFront(e)
	c.bytes += e.size
	for c.bytes > c.max {
		c.dropLocked(c.order.Back().Value.(*cacheEntry).log)
	}
}

// update replaces the state kept for the run, if any, keeping its stamp:
// the run.state.json it was stamped by still holds what it says up to its
// log_bytes.
func (c *stateCache) update(log string, st *State) {
	if stamp, _, ok := c.load(log); ok {
		c.store(log, stamp, st)
	}
}

// drop forgets the run's state.
func (c *stateCache) drop(log string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(log)
}

func (c *stateCache) dropLocked(log string) {
	if el, ok := c.byLog[log]; ok {
		c.bytes -= el.Value.(*cacheEntry).size
		c.order.Remove(el)
		delete(c.byLog, log)
	}
}

// size is about how many bytes the state's text and JSON take.
func (s *State) size() int {
	n := len(s.RunID) + len(s.Playbook) + len(s.Type) + len(s.Name) + len(s.State) + len(s.Status) +
		len(s.Executor) + len(s.AuthorizedBy) + len(s.LastEventAt) + len(s.Started) + len(s.Ended) +
		len(s.Output) + len(s.OutputShape) + len(s.Reason) + len(s.Kind) + len(s.Detail) + len(s.ArchivedWhy) + len(s.Paused)
	if s.CurrentStep != nil {
		n += 16 + len(*s.CurrentStep)
	}
	for _, step := range s.StepsSeen {
		n += 16 + len(step)
	}
	for _, is := range s.Issues {
		n += 48 + len(is.Path) + len(is.Message)
	}
	return n
}
