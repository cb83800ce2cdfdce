package fold

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
)

// PoolOptions configure a Pool.
type PoolOptions struct {
	// Workers is how many pages fold at once (2 if 0).
	Workers int
	// Idle is how many loaded runtimes are kept between pages (8 if 0).
	Idle int
	// Limits of each fold; a zero field takes the page format's value.
	Limits Limits
	// Check checks a view against its shape; nil checks no shapes (only
	// the names, the size and what JSON carries).
	Check ShapeChecker

	// crash, for tests: a fold of an event it answers true for crashes.
	crash func(Event) bool
}

// Pool folds pages of events in QuickJS runtimes, one per worker, kept
// loaded between pages. It is safe for concurrent use.
type Pool struct {
	opts PoolOptions
	lim  Limits
	sem  chan struct{}
	dir  string

	mu     sync.Mutex
	idle   []*worker
	closed bool
}

// NewPool makes a pool. Close it to end its runtimes.
func NewPool(opts PoolOptions) (*Pool, error) {
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.Idle <= 0 {
		opts.Idle = 8
	}
	dir, err := os.MkdirTemp("", "quire-fold-")
	if err != nil {
		return nil, fmt.Errorf("fold: a folder for the sandbox: %w", err)
	}
	return &Pool{opts: opts, lim: opts.Limits.withDefaults(), sem: make(chan struct{}, opts.Workers), dir: dir}, nil
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
		w.close()
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
// every fold what JSON carries, the declared names and the size; the
// shapes are checked once, on the views the page ends with. When anything
// fails, the page is folded again one event at a time, each checked in
// full, so the stall (and a time or crash, with its retries in fresh
// runtimes) is found at its event.
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

	w, st, err := p.get(ctx, prog, events[0])
	if err != nil || st != nil {
		res.Stall = st
		return res, err
	}
	out, oc := w.call(ctx, p.lim, prog.names, views, events, p.opts.crash)
	if oc.killed == killCanceled {
		w.close()
		return res, ctx.Err()
	}
	if oc.killed == "" && oc.trap == nil && out.Kind == "" && out.N == len(events) {
		if p.checkShapes(prog, out.views) == "" {
			p.put(w)
			return Result{Views: out.views, Folded: len(events)}, nil
		}
	}
	p.put(w)
	return p.oneByOne(ctx, prog, views, events)
}

// oneByOne folds events one call each, checking each fold in full.
func (p *Pool) oneByOne(ctx context.Context, prog *Program, views json.RawMessage, events []Event) (Result, error) {
	res := Result{Views: views}
	for i, ev := range events {
		st, next, err := p.foldOne(ctx, prog, res.Views, ev)
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
// timed out or the worker crashed.
func (p *Pool) foldOne(ctx context.Context, prog *Program, views json.RawMessage, ev Event) (*Stall, json.RawMessage, error) {
	stackTraps := 0
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		w, st, err := p.get(ctx, prog, ev)
		if err != nil || st != nil {
			return st, nil, err
		}
		out, oc := w.call(ctx, p.lim, prog.names, views, []Event{ev}, p.opts.crash)
		p.put(w)
		switch {
		case oc.killed == killCanceled:
			return nil, nil, ctx.Err()
		case oc.killed == killWork:
			return stallAt(ev, KindWork, fmt.Sprintf("the fold did more work than one fold may: %d checkpoints (%v of CPU each)", p.lim.Checkpoints, p.lim.Checkpoint), 0), nil, nil
		case oc.killed == killMemory:
			return stallAt(ev, KindMemory, fmt.Sprintf("the fold used more memory than its sandbox: %d MiB", p.lim.Memory>>20), 0), nil, nil
		case oc.killed == killTime:
			if attempt < p.lim.Attempts {
				continue
			}
			return stallAt(ev, KindTime, fmt.Sprintf("the fold ran out of its %v %d times", p.lim.Timeout, attempt), 0), nil, nil
		case oc.trap != nil:
			if isStackTrap(oc.trap) {
				// QuickJS built for WASI does not check its stack: a
				// recursion without end traps the wasm. It does so every
				// time, so a second trap in a fresh runtime is the fold's.
				stackTraps++
				if stackTraps >= 2 {
					return stallAt(ev, KindRaised, "RangeError: Maximum call stack size exceeded (the fold's stack overflowed the sandbox: "+trapText(oc.trap)+")", 0), nil, nil
				}
			}
			if attempt < p.lim.Attempts {
				continue
			}
			return stallAt(ev, KindCrash, fmt.Sprintf("the worker crashed at this event %d times: %s", attempt, trapText(oc.trap)), 0), nil, nil
		case out.Kind != "":
			line := 0
			if out.Kind == KindRaised {
				line = prog.DocLine(stackJSLine(out.Stack))
			}
			return stallAt(ev, out.Kind, out.Error, line), nil, nil
		}
		if why := p.checkShapes(prog, out.views); why != "" {
			return stallAt(ev, KindShape, why, 0), nil, nil
		}
		return nil, out.views, nil
	}
}

func isStackTrap(err error) bool {
	s := err.Error()
	return strings.Contains(s, "out of bounds memory access") || strings.Contains(s, "invalid table access") ||
		strings.Contains(s, "stack overflow") || strings.Contains(s, "call stack exhausted")
}

func trapText(err error) string {
	s := firstLine(err.Error())
	if i := strings.Index(s, "wasm error: "); i >= 0 {
		s = s[i:]
	}
	return s
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
		shape, ok := prog.Views[name]
		if !ok {
			return fmt.Sprintf("the fold returned a view named %q, which data.views does not declare", name)
		}
		if p.opts.Check == nil {
			continue
		}
		var v any
		if err := json.Unmarshal(byName[name], &v); err != nil {
			return fmt.Sprintf("view %s: %v", name, err)
		}
		if issues := p.opts.Check(shape, v); len(issues) > 0 {
			parts := make([]string, 0, len(issues))
			for _, is := range issues {
				parts = append(parts, "/"+name+strings.TrimSuffix(is.Path, "/")+": "+is.Message)
			}
			return "view " + name + " does not match " + shape + ": " + strings.Join(parts, "; ")
		}
	}
	return ""
}

// get takes an idle worker with prog loaded, or makes one. A module that
// does not load answers a refused stall at ev.
func (p *Pool) get(ctx context.Context, prog *Program, ev Event) (*worker, *Stall, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, nil, errors.New("fold: the pool is closed")
	}
	for i := len(p.idle) - 1; i >= 0; i-- {
		if w := p.idle[i]; w.key == prog.key {
			p.idle = append(p.idle[:i], p.idle[i+1:]...)
			p.mu.Unlock()
			return w, nil, nil
		}
	}
	p.mu.Unlock()
	w, loadErr, err := newWorker(ctx, prog, p.dir, p.lim)
	if err != nil {
		return nil, nil, err
	}
	if loadErr != nil {
		return nil, stallAt(ev, KindRefused, loadErr.Text, prog.DocLine(loadErr.JSLine)), nil
	}
	return w, nil, nil
}

// put keeps a live worker for the next page, or ends a dead one.
func (p *Pool) put(w *worker) {
	if w.dead {
		w.close()
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		w.close()
		return
	}
	p.idle = append(p.idle, w)
	var evict *worker
	if len(p.idle) > p.opts.Idle {
		evict = p.idle[0]
		p.idle = p.idle[1:]
	}
	p.mu.Unlock()
	evict.close()
}
