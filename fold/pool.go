package fold

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"quire/internal/fsys"
	"quire/words/shape"
)

// PoolOptions configure a Pool.
type PoolOptions struct {
	// Workers is how many pages fold at once (2 if 0).
	Workers int
	// Idle is how many loaded runtimes are kept between pages (8 if 0).
	Idle int
	// Limits of each fold; a zero field takes the page format's value.
	Limits Limits
	// Check checks a view against its shape; nil is words/shape's Check.
	Check ShapeChecker

	// CacheDir keeps wazero's compiled QuickJS between processes, so a
	// worker starts in some 70 ms rather than 700 ("" for CompiledCache's
	// folder, falling back to one under the system's temporary folder).
	CacheDir string

	// crash, for tests: a fold of an event it answers true for crashes.
	crash func(Event) bool
	// shapesOncePerPage, for the benchmark that measures what checking
	// the shapes after every fold costs: the sandbox leaves the shapes
	// alone, and Go checks them on the views a page ends with, as quire
	// did before (so a view of the wrong shape that a later fold of the
	// same page mends goes unseen).
	shapesOncePerPage bool
	// unfused, for the tests that hold the sandbox's fused walk to the
	// copy and check it replaces, and for the benchmark of what it
	// saves: the sandbox copies each view and then checks its shape.
	unfused bool
}

// Pool folds pages of events in worker processes, each with a QuickJS
// runtime per program, kept loaded between pages. It is safe for
// concurrent use.
type Pool struct {
	opts  PoolOptions
	lim   Limits
	check ShapeChecker
	sem   chan struct{}
	dir   string

	mu     sync.Mutex
	idle   []*proc
	closed bool
}

// CompiledCache is the folder of wazero's compiled QuickJS that every
// vault of the user shares: quire/qjs under the user's cache directory
// (os.UserCacheDir, beside quire/tools), made private to the user. The
// compiled code is the same for every vault (wazero keys it by the wasm's
// hash under a folder of its own version, and writes each entry to a
// temporary file renamed into place, so processes may share it), and
// compiling it costs seconds of CPU (tens under the race detector): with
// a folder a vault, each new vault and each clone paid for it again at
// its first fold. fallback is the folder used when there is no user cache
// directory or it cannot be written.
func CompiledCache(fallback string) string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return fallback
	}
	dir = filepath.Join(dir, "quire", "qjs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fallback
	}
	f, err := os.CreateTemp(dir, "probe-")
	if err != nil {
		return fallback
	}
	f.Close()
	os.Remove(f.Name())
	return dir
}

// NewPool makes a pool. Close it to end its runtimes.
func NewPool(opts PoolOptions) (*Pool, error) {
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.Idle <= 0 {
		opts.Idle = 8
	}
	check := opts.Check
	if check == nil {
		check = shape.Check
	}
	if opts.CacheDir == "" {
		opts.CacheDir = CompiledCache(filepath.Join(os.TempDir(), "quire-fold-qjs-cache"))
	}
	sweepPoolDirs(os.TempDir())
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", poolDirPrefix, os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("fold: a folder for the sandbox: %w", err)
	}
	return &Pool{opts: opts, lim: opts.Limits.withDefaults(), check: check, sem: make(chan struct{}, opts.Workers), dir: dir}, nil
}

// poolDirPrefix begins the name of a pool's folder in the temporary
// folder, followed by its process's id and a dash.
const poolDirPrefix = "quire-fold-"

// sweepPoolDirs removes from tmp the pools' folders of processes that are
// gone: a process killed while it folds never closes its pool (635 were
// left here by killed test processes). A folder whose process lives, or
// whose name carries no process id (the compiled modules' cache, a pool's
// of an older quire), is left.
func sweepPoolDirs(tmp string) {
	names, err := filepath.Glob(filepath.Join(tmp, poolDirPrefix+"*-*"))
	if err != nil {
		return
	}
	for _, d := range names {
		pid, _, ok := strings.Cut(strings.TrimPrefix(filepath.Base(d), poolDirPrefix), "-")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil || n <= 0 || n == os.Getpid() || !fsys.Gone(n) {
			continue
		}
		os.RemoveAll(d)
	}
}

// Limits are the pool's limits, with their defaults filled in.
func (p *Pool) Limits() Limits { return p.lim }

// Close ends every idle runtime.
func (p *Pool) Close() error {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, w := range idle {
		w.stop()
	}
	return os.RemoveAll(p.dir)
}

// Result is what folding a run of events gave.
type Result struct {
	// Views are the views after the last event folded, as the fold's JSON
	// text, keys in the order the fold wrote them.
	Views json.RawMessage
	// Folded is how many of the events were folded before the stall.
	Folded int
	// Stall, when not nil, is why the views stopped at events[Folded].
	Stall *Stall
}

// Fold folds events, in order, over views ({} when empty) with prog. The
// error is for the caller's context and faults of the runtime alone; a
// fold that fails answers a Result with a Stall.
//
// The page is folded in one call into the sandbox, which checks after
// every fold what JSON carries, the declared names, the size and the
// shapes; Go checks the shapes once more on the views the page ends with.
// When anything fails, the page is folded again one event at a time, each
// checked in full, so the stall (and a time or crash, with its retries in
// fresh runtimes) is found at its event.
func (p *Pool) Fold(ctx context.Context, prog *Program, views json.RawMessage, events []Event) (Result, error) {
	prog.init()
	if len(views) == 0 {
		views = json.RawMessage(`{}`)
	}
	res := Result{Views: views}
	if len(events) == 0 {
		return res, nil
	}
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return res, ctx.Err()
	}
	defer func() { <-p.sem }()

	h, out, err := p.call(ctx, prog, views, events, 0)
	if err != nil {
		return res, err
	}
	if h.Load != nil {
		res.Stall = stallAt(events[0], KindRefused, h.Load.Text, prog.DocLine(h.Load.JSLine))
		return res, nil
	}
	if h.Killed == "" && h.Trap == "" && h.Kind == "" && h.N == len(events) && p.checkShapes(prog, out) == "" {
		return Result{Views: out, Folded: len(events)}, nil
	}
	// A fold the watchdog stopped for work or time was the first try of
	// its event: the one-by-one folding counts it, and does not spend
	// the work bound on that event again.
	var first *try
	if (h.Killed == killWork || h.Killed == killTime) && h.Index >= 1 && h.Index <= len(events) {
		first = &try{index: h.Index - 1, killed: h.Killed, cpu: h.CPU}
	}
	return p.oneByOne(ctx, prog, views, events, first)
}

// try is a try of one event's fold that the watchdog stopped: the
// event's index in the page, the bound it ran past and the CPU it spent.
type try struct {
	index  int
	killed string
	cpu    time.Duration
}

// call folds events in one call into a worker process.
// spent is the CPU time earlier tries of the first event's fold spent.
func (p *Pool) call(ctx context.Context, prog *Program, views json.RawMessage, events []Event, spent time.Duration) (childHeader, json.RawMessage, error) {
	w, err := p.get(prog)
	if err != nil {
		return childHeader{}, nil, err
	}
	crash := false
	if p.opts.crash != nil {
		for _, ev := range events {
			crash = crash || p.opts.crash(ev)
		}
	}
	// The worker stops its own folds; this is for a worker that hangs, and
	// leaves every fold of the page its whole time.
	backstop := time.Duration(len(events))*(p.lim.Timeout+time.Second) + 30*time.Second
	shapes := prog.shapes
	switch {
	case p.opts.shapesOncePerPage || p.opts.Check != nil:
		shapes = prog.unshaped // Go checks them, as the pool's Check says
	case p.opts.unfused:
		shapes = prog.unfused
	}
	h, out, err := w.fold(ctx, prog, shapes, p.lim, spent, views, events, crash, backstop)
	p.put(w)
	if err != nil {
		return h, nil, err
	}
	if h.Fault != "" {
		return h, nil, errors.New(h.Fault)
	}
	return h, out, nil
}

// oneByOne folds events one call each, checking each fold in full;
// first, when not nil, is a try of one of them already made.
func (p *Pool) oneByOne(ctx context.Context, prog *Program, views json.RawMessage, events []Event, first *try) (Result, error) {
	res := Result{Views: views}
	for i, ev := range events {
		var tried *try
		if first != nil && first.index == i {
			tried = first
		}
		st, next, err := p.foldOne(ctx, prog, res.Views, ev, tried)
		if err != nil {
			return res, err
		}
		if st != nil {
			res.Stall = st
			return res, nil
		}
		res.Views = next
		res.Folded = i + 1
	}
	return res, nil
}

// foldOne folds one event, trying again in a fresh runtime when the fold
// timed out or the worker crashed; tried, when not nil, is its first try,
// made already.
//
// The work bound is the fold's, not a try's: each try that runs out of
// its time hands on the CPU time it spent, and the next may spend only
// what is left of the bound. So a fold that never ends stalls as work
// once it has spent the bound's CPU, however many tries that takes: on a
// machine so loaded that a try gets a quarter of a processor, in four
// tries of 10 s rather than twenty. It stalls as time only where twenty
// tries together had less than the bound of CPU.
func (p *Pool) foldOne(ctx context.Context, prog *Program, views json.RawMessage, ev Event, tried *try) (*Stall, json.RawMessage, error) {
	stackTraps := 0
	budget := p.lim.Checkpoint * time.Duration(p.lim.Checkpoints)
	var spent time.Duration
	work := func(tries int) *Stall {
		text := fmt.Sprintf("the fold did more work than one fold may: %d checkpoints (%v of CPU each)", p.lim.Checkpoints, p.lim.Checkpoint)
		if tries > 1 {
			text += fmt.Sprintf(", counted over %d tries", tries)
		}
		return stallAt(ev, KindWork, text, 0)
	}
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		var h childHeader
		var out json.RawMessage
		var err error
		if attempt == 1 && tried != nil {
			h.Killed, h.CPU = tried.killed, tried.cpu
		} else {
			h, out, err = p.call(ctx, prog, views, []Event{ev}, spent)
		}
		switch {
		case err != nil:
			return nil, nil, err
		case h.Load != nil:
			return stallAt(ev, KindRefused, h.Load.Text, prog.DocLine(h.Load.JSLine)), nil, nil
		case h.Killed == killWork:
			return work(attempt), nil, nil
		case h.Killed == killMemory:
			return stallAt(ev, KindMemory, fmt.Sprintf("the fold used more memory than its sandbox: %d MiB", p.lim.Memory>>20), 0), nil, nil
		case h.Killed == killTime:
			if spent += h.CPU; spent >= budget {
				return work(attempt), nil, nil
			}
			if attempt < p.lim.Attempts {
				continue
			}
			return stallAt(ev, KindTime, fmt.Sprintf("the fold ran out of its %v %d times", p.lim.Timeout, attempt), 0), nil, nil
		case h.Trap != "":
			if isStackTrap(h.Trap) {
				// QuickJS built for WASI does not check its stack: a
				// recursion without end traps the wasm. It does so every
				// time, so a second trap in a fresh runtime is the fold's.
				stackTraps++
				if stackTraps >= 2 {
					return stallAt(ev, KindRaised, "RangeError: Maximum call stack size exceeded (the fold's stack overflowed the sandbox: "+h.Trap+")", 0), nil, nil
				}
			}
			if attempt < p.lim.Attempts {
				continue
			}
			return stallAt(ev, KindCrash, fmt.Sprintf("the worker crashed at this event %d times: %s", attempt, h.Trap), 0), nil, nil
		case h.Kind == kindShapeCheck:
			// The sandbox's check refused the views this fold returned:
			// Go's check words why (and, were the two ever to differ, it
			// is the one that decides).
			if why := p.checkShapes(prog, out); why != "" {
				return stallAt(ev, KindShape, why, 0), nil, nil
			}
			return nil, out, nil
		case h.Kind != "":
			line := 0
			if h.Kind == KindRaised {
				line = prog.DocLine(stackJSLine(h.Stack))
			}
			return stallAt(ev, h.Kind, h.Error, line), nil, nil
		}
		if why := p.checkShapes(prog, out); why != "" {
			return stallAt(ev, KindShape, why, 0), nil, nil
		}
		return nil, out, nil
	}
}

// IsStackTrap says whether a worker's trap is its stack overflowing: a
// caller that tries a program once (try_code) words such a crash as the
// recursion it is.
func IsStackTrap(s string) bool { return isStackTrap(s) }

func isStackTrap(s string) bool {
	return strings.Contains(s, "out of bounds memory access") || strings.Contains(s, "invalid table access") ||
		strings.Contains(s, "stack overflow") || strings.Contains(s, "call stack exhausted")
}

// checkShapes checks every view of the views' JSON text against its
// declared shape; it answers "" when all match.
func (p *Pool) checkShapes(prog *Program, views json.RawMessage) string {
	var byName map[string]json.RawMessage
	if err := json.Unmarshal(views, &byName); err != nil {
		return "the views are not an object: " + err.Error()
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		shapeName, ok := prog.Views[name]
		if !ok {
			return fmt.Sprintf("the fold returned a view named %q, which data.views does not declare", name)
		}
		if issues := p.check(shapeName, byName[name]); len(issues) > 0 {
			parts := make([]string, 0, len(issues))
			for _, is := range issues {
				parts = append(parts, "/"+name+strings.TrimSuffix(is.Path, "/")+": "+is.Message)
			}
			return "view " + name + " does not match " + shapeName + ": " + strings.Join(parts, "; ")
		}
	}
	return ""
}

// get takes an idle worker process, one with prog loaded if there is
// one, or starts one.
func (p *Pool) get(prog *Program) (*proc, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errors.New("fold: the pool is closed")
	}
	pick := -1
	for i := len(p.idle) - 1; i >= 0; i-- {
		if p.idle[i].keys[prog.key] {
			pick = i
			break
		}
	}
	if pick < 0 {
		pick = len(p.idle) - 1
	}
	if pick >= 0 {
		w := p.idle[pick]
		p.idle = append(p.idle[:pick], p.idle[pick+1:]...)
		p.mu.Unlock()
		return w, nil
	}
	p.mu.Unlock()
	return startProc(p.dir, p.opts.CacheDir)
}

// put keeps a live worker for the next page, or lets a dead one go.
func (p *Pool) put(w *proc) {
	if w.dead {
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		w.stop()
		return
	}
	p.idle = append(p.idle, w)
	var evict *proc
	if len(p.idle) > p.opts.Idle {
		evict = p.idle[0]
		p.idle = p.idle[1:]
	}
	p.mu.Unlock()
	if evict != nil {
		evict.stop()
	}
}
