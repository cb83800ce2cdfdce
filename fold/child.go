package fold

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The worker process. The pool runs its folds in processes of the
// program's own executable (os.Executable), started with workerEnv set:
// the program's main calls ServeIfWorker first, which sees it and serves
// folds on stdin and stdout instead of going on with main. So any binary
// that does can be its own worker, the test binaries included.
const (
	workerEnv = "QUIRE_FOLD_WORKER"
	dirEnv    = "QUIRE_FOLD_DIR"
	cacheEnv  = "QUIRE_FOLD_CACHE"
)

// ServeIfWorker makes this process a fold worker when a pool started it
// as one: it then folds what the pool asks until its standard input ends,
// and exits; it does not return. In any other process it returns at once.
//
// A program that folds (through a Pool, or a ledger that keeps views)
// calls it first thing in main, and a test binary first thing in
// TestMain, before anything reads flags, files or standard input: a
// worker is that same program started again, and must not run main. A
// pool in a program that has not called it starts no worker and refuses
// the fold, rather than run the program again as one.
func ServeIfWorker() {
	if os.Getenv(workerEnv) == "1" {
		os.Exit(serveWorker(os.Stdin, os.Stdout))
	}
	asked.Store(true)
}

// asked is whether ServeIfWorker ran in this process (and returned).
var asked atomic.Bool

var unaskedOnce sync.Once

// workerExecutable is the program a pool starts as a worker: this one,
// once its main has called ServeIfWorker. Otherwise the fold is refused,
// and standard error says why once: a fold in the background (a Keeper)
// would show it only as views that never come.
func workerExecutable() (string, error) {
	if !asked.Load() {
		err := errors.New("this program's main does not call fold.ServeIfWorker first, so a worker would run main instead of folding")
		unaskedOnce.Do(func() { fmt.Fprintln(os.Stderr, "fold:", err) })
		return "", err
	}
	return os.Executable()
}

// A message is a count of parts, then each part's length and bytes, all
// lengths as little-endian uint32.
func writeParts(w *bufio.Writer, parts ...[]byte) error {
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(parts)))
	w.Write(n[:])
	for _, p := range parts {
		binary.LittleEndian.PutUint32(n[:], uint32(len(p)))
		w.Write(n[:])
		w.Write(p)
	}
	return w.Flush()
}

func readParts(r *bufio.Reader) ([][]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	count := binary.LittleEndian.Uint32(n[:])
	if count > 16 {
		return nil, errors.New("fold: a message of too many parts")
	}
	parts := make([][]byte, count)
	for i := range parts {
		if _, err := io.ReadFull(r, n[:]); err != nil {
			return nil, err
		}
		parts[i] = make([]byte, binary.LittleEndian.Uint32(n[:]))
		if _, err := io.ReadFull(r, parts[i]); err != nil {
			return nil, err
		}
	}
	return parts, nil
}

// A request's parts.
const (
	reqKey = iota
	reqJS
	reqNames
	reqViews
	reqEvents
	reqTimes
	reqLimits
	reqCrash
	reqSpent // the CPU time (ns, in decimal) earlier tries of the first fold spent
	reqParts
)

// childHeader is the first part of the worker's answer; the second is the
// views' JSON text.
type childHeader struct {
	pageHeader
	Killed string `json:"killed,omitempty"` // the bound a fold ran past; the process ended
	Index  int    `json:"index,omitempty"`  // the fold (from 1) running when it was killed
	// CPU is the CPU time (ns) the fold running when it was killed had
	// spent in this try.
	CPU   time.Duration `json:"cpu,omitempty"`
	Trap  string        `json:"trap,omitempty"`  // the sandbox trapped; the process ended
	Load  *jsError      `json:"load,omitempty"`  // the module did not load
	Fault string        `json:"fault,omitempty"` // the sandbox could not be made
}

// serveWorker folds what the pool asks until stdin ends. It keeps the
// runtimes of the last two programs loaded. A fold past a bound or a
// trap is answered, and the process ends: the pool starts another.
func serveWorker(stdin io.Reader, stdout io.Writer) int {
	// The watchdog needs a processor of its own while a fold holds one:
	// compiled wasm cannot be preempted.
	runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0)))
	in := bufio.NewReaderSize(stdin, 1<<20)
	out := bufio.NewWriterSize(stdout, 1<<20)
	var outMu sync.Mutex
	answer := func(h childHeader, views string) {
		hb, _ := json.Marshal(h)
		outMu.Lock()
		defer outMu.Unlock()
		if err := writeParts(out, hb, []byte(views)); err != nil {
			os.Exit(5)
		}
	}
	onKill := func(reason string, index int, cpu time.Duration) {
		answer(childHeader{Killed: reason, Index: index, CPU: cpu}, "")
		os.Exit(3)
	}
	dir := os.Getenv(dirEnv)
	if dir == "" {
		dir = os.TempDir()
	}
	cache := os.Getenv(cacheEnv)
	var loaded []*worker
	for {
		parts, err := readParts(in)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return 0
			}
			fmt.Fprintln(os.Stderr, "fold worker:", err)
			return 2
		}
		if len(parts) != reqParts {
			fmt.Fprintln(os.Stderr, "fold worker: a request of", len(parts), "parts")
			return 2
		}
		var lim Limits
		if err := json.Unmarshal(parts[reqLimits], &lim); err != nil {
			return 2
		}
		lim = lim.withDefaults()
		key := string(parts[reqKey])
		var w *worker
		for i, l := range loaded {
			if l.key == key {
				w = l
				loaded = append(loaded[:i], loaded[i+1:]...)
				break
			}
		}
		if w == nil {
			nw, loadErr, err := newWorker(key, string(parts[reqJS]), dir, cache, lim, onKill)
			if err != nil {
				answer(childHeader{Fault: err.Error()}, "")
				return 4
			}
			if loadErr != nil {
				answer(childHeader{Load: loadErr}, "")
				continue
			}
			w = nw
		}
		loaded = append(loaded, w)
		if len(loaded) > 2 {
			loaded[0].close()
			loaded = loaded[1:]
		}
		if string(parts[reqCrash]) == "1" {
			answer(childHeader{Trap: "a crash the test asked for"}, "")
			return 4
		}
		spent, _ := strconv.ParseInt(string(parts[reqSpent]), 10, 64)
		head, views, trap := w.call(lim, time.Duration(spent), string(parts[reqNames]), string(parts[reqViews]), string(parts[reqEvents]), string(parts[reqTimes]), onKill)
		if trap != nil {
			answer(childHeader{Trap: trapText(trap)}, "")
			return 4
		}
		answer(childHeader{pageHeader: head}, views)
		if int64(w.rt.Mem().Size()) > int64(w.baseMem)+lim.Memory/2 {
			// Do not keep a runtime a fold has bloated.
			w.close()
			loaded = loaded[:len(loaded)-1]
		}
	}
}
