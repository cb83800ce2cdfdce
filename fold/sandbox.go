package fold

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fastschema/qjs"
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

// worker is one QuickJS runtime with one program loaded and the sandbox
// sealed. It folds one page at a time; once a call into it was stopped or
// trapped it is dead and is never used again.
type worker struct {
	rt      *qjs.Runtime
	cancel  context.CancelFunc
	driver  *qjs.Value
	shared  uint32 // address of the running fold's index in wasm memory
	baseMem uint32 // wasm memory size once loaded
	key     string
	dead    bool
}

// kill reasons the watchdog records.
const (
	killWork     = "work"
	killMemory   = "memory"
	killTime     = "time"
	killCanceled = "canceled"
)

// callOutcome is how one call into a worker ended.
type callOutcome struct {
	killed string // a kill reason, or ""
	trap   error  // a panic out of qjs (wasm trap, closed module), or nil
	index  int    // the fold (from 1) running when it was killed, 0 if unknown
}

// guard runs fn on a locked OS thread under the watchdog: a fold that
// spends more CPU than the work bound, grows the wasm memory past the
// memory bound or runs past the timeout has its runtime closed. Panics out
// of qjs are recovered; the process never dies of a fold.
func (w *worker) guard(ctx context.Context, lim Limits, fn func()) (out callOutcome) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	clock := threadClock()
	var killed atomic.Value
	var index atomic.Int64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := lim.Checkpoint / 2
		if tick > 5*time.Millisecond {
			tick = 5 * time.Millisecond
		}
		if tick < time.Millisecond {
			tick = time.Millisecond
		}
		t := time.NewTicker(tick)
		defer t.Stop()
		budget := int64(lim.Checkpoint) * int64(lim.Checkpoints)
		last := uint32(0)
		cpuStart, wallStart := clockCPU(clock), time.Now()
		kill := func(why string) {
			killed.Store(why)
			index.Store(int64(last))
			w.cancel()
		}
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				kill(killCanceled)
				return
			case <-t.C:
			}
			mem := w.rt.Mem()
			if mem == nil {
				return
			}
			if i, err := mem.ReadUint32(w.shared); err == nil && i != last {
				last, cpuStart, wallStart = i, clockCPU(clock), time.Now()
			}
			if int64(mem.Size()) > int64(w.baseMem)+lim.Memory {
				kill(killMemory)
				return
			}
			if cpu := clockCPU(clock); cpu >= 0 && cpu-cpuStart > budget {
				kill(killWork)
				return
			}
			if time.Since(wallStart) > lim.Timeout {
				kill(killTime)
				return
			}
		}
	}()
	func() {
		defer func() {
			if r := recover(); r != nil {
				out.trap = fmt.Errorf("%v", r)
			}
		}()
		fn()
	}()
	close(done)
	<-stopped
	if k, ok := killed.Load().(string); ok {
		out.killed, out.index = k, int(index.Load())
		w.dead = true
	}
	if out.trap != nil {
		w.dead = true
	}
	return out
}

// newWorker makes a runtime in dir (an empty folder: the only files the
// runtime's module loader could see), runs the prelude, loads the program
// and seals the sandbox. A module that does not load answers loadErr with
// the error's text; err is a fault of the runtime itself.
func newWorker(ctx context.Context, prog *Program, dir string, lim Limits) (w *worker, loadErr *jsError, err error) {
	rctx, cancel := context.WithCancel(context.Background())
	w = &worker{cancel: cancel, key: prog.key}
	var rt *qjs.Runtime
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("fold: starting QuickJS: %v", r)
			}
		}()
		rt, err = qjs.New(qjs.Option{CWD: dir, Context: rctx, CloseOnContextDone: true})
	}()
	if err != nil {
		cancel()
		return nil, nil, err
	}
	w.rt = rt
	// The prelude and the driver's address: the runtime's own fault if they fail.
	var setupErr error
	out := w.guard(ctx, lim, func() {
		if _, e := rt.Eval("prelude.js", qjs.Code(prelude)); e != nil {
			setupErr = fmt.Errorf("fold: the sandbox's prelude: %w", e)
			return
		}
		if _, e := rt.Eval(moduleFile, qjs.Code(prog.JS+bootLine), qjs.TypeModule()); e != nil {
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
		w.shared = addr
		v, e := rt.Eval("seal.js", qjs.Code("__quire_seal()"))
		if e != nil || !v.Bool() {
			setupErr = fmt.Errorf("fold: sealing the sandbox: %v", e)
			return
		}
		v.Free()
		w.baseMem = rt.Mem().Size()
	})
	switch {
	case out.killed == killCanceled:
		w.close()
		return nil, nil, ctx.Err()
	case out.killed != "":
		w.close()
		return nil, &jsError{Text: "the module did not load: it ran out of its " + out.killed + " bound"}, nil
	case out.trap != nil:
		w.close()
		return nil, &jsError{Text: "the module did not load: the sandbox trapped: " + firstLine(out.trap.Error())}, nil
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
	if w == nil {
		return
	}
	w.dead = true
	w.cancel()
	if w.rt != nil {
		func() {
			defer func() { _ = recover() }()
			w.rt.Close()
		}()
		w.rt = nil
	}
}

// pageHeader is the driver's first line.
type pageHeader struct {
	N     int    `json:"n"`
	Kind  string `json:"kind"`
	Error string `json:"error"`
	Stack string `json:"stack"`
}

// pageOut is what one call of the driver answered.
type pageOut struct {
	pageHeader
	views json.RawMessage
}

// call folds events over views in one call into the sandbox.
func (w *worker) call(ctx context.Context, lim Limits, names string, views json.RawMessage, events []Event, crash func(Event) bool) (pageOut, callOutcome) {
	var b strings.Builder
	var t strings.Builder
	b.Grow(len(events) * 256)
	b.WriteByte('[')
	t.WriteByte('[')
	for i, ev := range events {
		if i > 0 {
			b.WriteByte(',')
			t.WriteByte(',')
		}
		b.Write(ev.JSON)
		t.WriteString(strconv.FormatInt(ev.Time.UnixMilli(), 10))
	}
	b.WriteByte(']')
	t.WriteByte(']')
	var res string
	var callErr error
	out := w.guard(ctx, lim, func() {
		if crash != nil {
			for _, ev := range events {
				if crash(ev) {
					panic("fold: a crash the test asked for")
				}
			}
		}
		c := w.rt.Context()
		args := []*qjs.Value{c.NewString(string(views)), c.NewString(b.String()), c.NewString(t.String()), c.NewString(names), c.NewInt64(int64(lim.ViewsBytes))}
		defer func() {
			for _, a := range args {
				a.Free()
			}
		}()
		undef := c.NewUndefined()
		v, err := c.Invoke(w.driver, undef, args...)
		if err != nil {
			callErr = err
			return
		}
		res = v.String()
		v.Free()
	})
	if out.killed != "" || out.trap != nil {
		return pageOut{}, out
	}
	if callErr != nil {
		// The driver itself threw: out of memory inside QuickJS, or the
		// like. Count it as a crash of the worker.
		w.dead = true
		out.trap = callErr
		return pageOut{}, out
	}
	nl := strings.IndexByte(res, '\n')
	var po pageOut
	if nl < 0 || json.Unmarshal([]byte(res[:nl]), &po.pageHeader) != nil {
		w.dead = true
		out.trap = errors.New("fold: the driver answered no header")
		return pageOut{}, out
	}
	po.views = json.RawMessage(res[nl+1:])
	if w.rt != nil && int64(w.rt.Mem().Size()) > int64(w.baseMem)+lim.Memory/2 {
		w.dead = true // do not keep a runtime a fold has bloated
	}
	return po, out
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
