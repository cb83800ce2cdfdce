package fold

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/fastschema/qjs"
	"github.com/tetratelabs/wazero/experimental"
)

//go:embed sandbox.js
var prelude string

// moduleFile is the name the module is loaded under; its lines in an
// error's stack are the transpiled JavaScript's.
const moduleFile = "fold.js"

// bootLine is appended to the module (after its last line, so its lines
// keep their numbers): the module imports its own namespace and hands it
// to the prelude.
const bootLine = "\nimport * as __quire_ns from './" + moduleFile + "'; __quire_boot(__quire_ns);\n"

// worker is one QuickJS runtime, in a worker process, with one program
// loaded and the sandbox sealed. It folds one page at a time. A fold
// that runs past a bound ends the whole worker process (onKill): wazero
// can stop running wasm only when the module is compiled to check for a
// closed context, which makes QuickJS some 60 times slower, so the
// process is the unit that is stopped and replaced.
type worker struct {
	rt      *qjs.Runtime
	driver  *qjs.Value
	mem     *linearMemory // the runtime's wasm memory, as the watchdog reads it
	shared  uint32        // address of the running fold's index in wasm memory
	baseMem uint32        // wasm memory size once loaded
	key     string
}

// kill reasons the watchdog gives.
const (
	killWork   = "work"
	killMemory = "memory"
	killTime   = "time"
)

// killFunc is told the bound a fold ran past, the fold's index (from 1;
// 0 before the first) and the CPU time that fold had spent; it does not
// return.
type killFunc func(reason string, index int, cpu time.Duration)

// guard runs fn on a locked OS thread under the watchdog: a fold that
// spends more CPU than the work bound, grows the wasm memory past the
// memory bound or runs past the timeout is reported to onKill. spent is
// the CPU time earlier tries of the call's first fold spent before they
// ran out of time: that fold may spend only what is left of the work
// bound (pool.go, foldOne). A panic out of qjs (a wasm trap) is recovered
// and returned.
//
// Go's collector cannot stop a thread running compiled wasm (it has no
// safe points), so a collection started while a fold loops would stop the
// world for good, the watchdog with it. The collector is off while fn runs;
// the memory bound keeps what piles up small.
func (w *worker) guard(lim Limits, spent time.Duration, onKill killFunc, fn func()) (trap error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	clock := threadClock()
	// What the watchdog reads of the worker is taken here, on this thread:
	// fn may set the worker's fields (newWorker does), and the memory is
	// read through the atomics of linearMemory, never wazero's slice.
	mem, shared, baseMem := w.mem, w.shared, w.baseMem
	done := make(chan struct{})
	stopped := make(chan struct{})
	ready := make(chan struct{})
	go func() {
		defer close(stopped)
		// Started before fn enters the wasm: a goroutine left runnable
		// behind a processor that runs compiled wasm may never be taken.
		close(ready)
		tick := min(lim.Checkpoint/2, 5*time.Millisecond)
		tick = max(tick, time.Millisecond)
		budget := int64(lim.Checkpoint) * int64(lim.Checkpoints)
		last := uint32(0)
		cpuStart, wallStart := clockCPU(clock), time.Now()
		for {
			// A sleep in the kernel, not a Go timer: the timers of the
			// processor the wasm holds are not run while it holds it.
			watchSleep(tick)
			select {
			case <-done:
				return
			default:
			}
			if shared != 0 {
				if i, ok := mem.ReadUint32(shared); ok && i != last {
					last, cpuStart, wallStart = i, clockCPU(clock), time.Now()
				}
			}
			left := budget
			if last <= 1 {
				left -= int64(spent)
			}
			cpu := clockCPU(clock) - cpuStart
			switch {
			case int64(mem.Size()) > int64(baseMem)+lim.Memory:
				onKill(killMemory, int(last), time.Duration(cpu))
			case cpu > left:
				onKill(killWork, int(last), time.Duration(cpu))
			case time.Since(wallStart) > lim.Timeout:
				onKill(killTime, int(last), time.Duration(cpu))
			}
		}
	}()
	<-ready
	func() {
		defer func() {
			if r := recover(); r != nil {
				trap = fmt.Errorf("%v", r)
			}
		}()
		fn()
	}()
	close(done)
	<-stopped
	return trap
}

// newWorker makes a runtime in dir (an empty folder: the only files the
// runtime's module loader could see), runs the prelude, loads the module
// and seals the sandbox. A module that does not load answers loadErr
// with the error's text; err is a fault of the sandbox itself.
func newWorker(key, js, dir, cacheDir string, lim Limits, onKill killFunc) (w *worker, loadErr *jsError, err error) {
	if name, ok := moduleImport(js); ok {
		return nil, importError(js, name), nil
	}
	w = &worker{key: key, mem: &linearMemory{}}
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("fold: starting QuickJS: %v", r)
			}
		}()
		ctx := experimental.WithMemoryAllocator(context.Background(), w.mem.allocator())
		w.rt, err = qjs.New(qjs.Option{CWD: dir, CacheDir: cacheDir, Context: ctx, QuickJSWasmBytes: quickJS()})
	}()
	if err != nil {
		return nil, nil, err
	}
	w.baseMem = w.rt.Mem().Size()
	var setupErr error
	trap := w.guard(lim, 0, onKill, func() {
		rt := w.rt
		if _, e := rt.Eval("prelude.js", qjs.Code(prelude)); e != nil {
			setupErr = fmt.Errorf("fold: the sandbox's prelude: %w", e)
			return
		}
		if _, e := rt.Eval(moduleFile, qjs.Code(js+bootLine), qjs.TypeModule()); e != nil {
			loadErr = parseJSError(e.Error())
			return
		}
		g := rt.Context().Global()
		w.driver = g.GetPropertyStr("__quire_driver")
		buf := g.GetPropertyStr("__quire_shared")
		h := rt.Call("QJS_GetArrayBuffer", rt.Context().Raw(), buf.Raw())
		addr, _ := rt.Mem().UnpackPtr(h.Raw())
		rt.FreeHandle(h.Raw())
		buf.Free()
		v, e := rt.Eval("seal.js", qjs.Code("__quire_seal()"))
		if e != nil || !v.Bool() {
			setupErr = fmt.Errorf("fold: sealing the sandbox: %v", e)
			return
		}
		v.Free()
		w.shared = addr
		w.baseMem = rt.Mem().Size()
	})
	switch {
	case trap != nil:
		w.close()
		return nil, &jsError{Text: "the module did not load: the sandbox trapped: " + trapText(trap)}, nil
	case loadErr != nil:
		w.close()
		return nil, loadErr, nil
	case setupErr != nil:
		w.close()
		return nil, nil, setupErr
	}
	return w, nil, nil
}

// close ends the runtime; a runtime that trapped may panic on the way out.
func (w *worker) close() {
	if w == nil || w.rt == nil {
		return
	}
	func() {
		defer func() { _ = recover() }()
		w.rt.Close()
	}()
	w.rt = nil
}

// pageHeader is the driver's first line.
type pageHeader struct {
	N     int    `json:"n"`
	Kind  string `json:"kind"`
	Error string `json:"error"`
	Stack string `json:"stack"`
}

// call folds a page in one call of the driver: views, events and times
// are JSON texts (the events' CloudEvents forms and their times in ms);
// spent is what earlier tries of its first fold spent (guard).
// It answers the driver's header and the views' JSON text, or the trap
// that ended the call, after which the worker is not used again.
func (w *worker) call(lim Limits, spent time.Duration, names, views, events, times string, onKill killFunc) (head pageHeader, out string, trap error) {
	var res string
	var callErr error
	c := w.rt.Context()
	var args []*qjs.Value
	trap = func() (trap error) {
		defer func() {
			if r := recover(); r != nil {
				trap = fmt.Errorf("%v", r)
			}
		}()
		args = []*qjs.Value{c.NewString(views), c.NewString(events), c.NewString(times), c.NewString(names), c.NewInt64(int64(lim.ViewsBytes))}
		return nil
	}()
	if trap != nil {
		return head, "", trap
	}
	// The page's own text is not the fold's memory: the bound counts from here.
	w.baseMem = w.rt.Mem().Size()
	trap = w.guard(lim, spent, onKill, func() {
		defer func() {
			for _, a := range args {
				a.Free()
			}
		}()
		v, err := c.Invoke(w.driver, c.NewUndefined(), args...)
		if err != nil {
			callErr = err
			return
		}
		res = v.String()
		v.Free()
	})
	if trap != nil {
		return head, "", trap
	}
	if callErr != nil {
		// The driver itself threw (QuickJS out of memory, or the like).
		return head, "", fmt.Errorf("fold: the driver failed: %w", callErr)
	}
	nl := strings.IndexByte(res, '\n')
	if nl < 0 || json.Unmarshal([]byte(res[:nl]), &head) != nil {
		return head, "", errors.New("fold: the driver answered no header")
	}
	return head, res[nl+1:], nil
}

func trapText(err error) string {
	s := firstLine(err.Error())
	if i := strings.Index(s, "wasm error: "); i >= 0 {
		s = s[i:]
	}
	return s
}

// jsError is an error of the module: its text, and the line of the
// transpiled JavaScript where it was raised (0 if unknown).
type jsError struct {
	Text   string
	JSLine int
}

var stackLine = regexp.MustCompile(`\(?` + regexp.QuoteMeta(moduleFile) + `:(\d+)(?::\d+)?\)?`)

// parseJSError splits qjs's error text ("message\n    at fold (fold.js:12:5)…")
// into its first line and the line of the first frame in the module.
func parseJSError(s string) *jsError {
	e := &jsError{Text: firstLine(s)}
	e.JSLine = stackJSLine(s)
	return e
}

func stackJSLine(stack string) int {
	if m := stackLine.FindStringSubmatch(stack); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}
