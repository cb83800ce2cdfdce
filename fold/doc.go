// Package fold runs a page's module over the playbook's history and keeps
// its views, as spec/page-format.md sets out ("The views" to "As of a
// run", and "Limits"). It knows nothing of the vault: package ledger
// feeds it events (History) and a folder under .quire/ to keep views in.
// Checking and transpiling the module at save is fold/module's.
//
// # API
//
//	NewProgram(js string, lines []int, firstLine int, views map[string]string) *Program
//	NewPool(PoolOptions) (*Pool, error)
//	(*Pool).Fold(ctx, *Program, views json.RawMessage, []Event) (Result, error)
//	(*Pool).Close() error
//	NewKeeper(KeeperOptions) (*Keeper, error)
//	(*Keeper).Register(Page) error; Unregister(id) error; Wake(); Run(ctx) error
//	(*Keeper).CatchUp(ctx, id) (Standing, error)
//	(*Keeper).Await(ctx, id, seq int64, newestAt time.Time, d time.Duration) (json.RawMessage, Standing, error)
//	(*Keeper).Views(id) (json.RawMessage, Standing, error)
//	(*Keeper).AsOf(ctx, id, lastSeq int64) (json.RawMessage, Standing, error)
//	(*Keeper).Reach() int64
//	NewReplay(*Pool, Page) (*Replay, error); (*Replay).Fold(ctx, []Event) error; Copy() *Replay
//
// A Program is the module as JavaScript (an ES module exporting fold),
// with the table from its lines back to the TypeScript's that
// fold/module's TranspileMapped gives, and the document's line of the
// module's first line. An Event is one record: its seq, its CloudEvents
// form as JSON and its time. History's Page answers a HistoryPage of
// records; KeeperOptions.Progress is told a Progress after every page a
// CatchUp reads; a Standing's From is the checkpoint its views were
// folded from (the record's id and the history's chain there, which
// HistoryPage carries), for a view receipt. A Replay folds a page from
// nothing over records its caller reads, keeping nothing: verify_page's.
// What Run cannot do in the background (a history that
// cannot be read, a worker that fails) goes to KeeperOptions.Log, once for
// each error; the next pass tries again.
//
// # The sandbox (sandbox.js, sandbox.go)
//
// QuickJS through github.com/fastschema/qjs v0.0.6. A fresh runtime runs
// the prelude (sandbox.js): it deletes every global the page format says
// is absent (a list of the ones kept, so whatever qjs adds, such as print,
// std, os, navigator, performance or gc, goes too; SharedArrayBuffer and
// Atomics are not kept either, as the type check's library has no shared
// memory), Function's constructors among them, reached through
// (function(){}).constructor and its generator and async kin; it replaces Date with one that reads
// only UTC and whose now is the event's time. Then the module is loaded
// with one line appended (after its last line, so its lines keep their
// numbers) that imports its own namespace and hands it to the prelude;
// then everything reachable from globalThis, the intrinsics no global
// names (iterator, generator, async and iterator-helper prototypes,
// %TypedArray%, Promise.prototype) and the module's exports are frozen.
//
// A page is folded in one call: the events go in as one text, one
// event a line, parsed one at a time. After every fold the driver checks,
// in JavaScript: the views are a plain object; no name data.views does
// not declare; the value is JSON (a walk that refuses a Date, a Map, a
// Set, a class instance, a function, a BigInt, a symbol, NaN, Infinity,
// undefined, a hole, a cycle or nesting deeper than 512 levels, each
// named with its JSON pointer); and the size, against an upper bound of
// the JSON text counted on the walk, stringified and counted in UTF-8
// bytes only when the bound passes 524,288. The same walk makes the copy
// the next fold is given, as JSON would give it back (an object two
// members share is copied twice, -0 is 0, symbol keys and members that
// are not enumerable are left out). In this QuickJS the copy costs about
// what JSON.stringify and JSON.parse cost together, and it is the check
// as well.
//
// The shapes are checked after every fold too, as the page format says,
// in the sandbox beside the JSON walk: sandbox.js's fits functions check
// each view the fold returned, on the copy the walk made, against its
// shape with the rules the shape adds (fields, bounds, names once each, a
// low at most its value and a high at least it, every at in its period's
// form and later than the one before, a row of one cell for each column),
// as words/shape's Check says of the view's JSON text. They read strings
// by index and call no method a module could have replaced before the
// sandbox was sealed. A view they refuse ends the call at that fold, with
// the views that fold returned, and Go's check gives the stall its words
// (shape, at the view's JSON pointer); TestSandboxShapeCheckAgreesWithGo
// holds the two to the same verdict over generated values. Go still
// checks the views a page ends with, once a page. So a view of the wrong
// shape that a later fold of the same page puts right stalls at its
// event, whatever the page's size. Checking in the sandbox costs a walk
// of the views a fold; checking in Go after every fold would cost the
// views' JSON text across the process boundary each fold. make bench
// prints both rates (events/s, and page-check-events/s for the shapes
// checked in Go once a page) and their ratio; see docs/fold-speed.md.
//
// When anything fails (a check, a stall, a worker that was stopped), the
// page is folded again one event at a time, each fold checked in full, so
// the stall is found at its event and the views are those of the fold
// before it.
//
// # Worker processes
//
// wazero stops running wasm only when the module was compiled to check a
// closed context (qjs's CloseOnContextDone), and that build runs QuickJS
// about 60 times slower (measured: 12.9 s for a loop of 10^6 additions
// against 0.2 s). So folds run in worker processes, the executable itself
// started with QUIRE_FOLD_WORKER=1: ServeIfWorker, which the program
// calls first thing in main (a test binary in TestMain), then serves folds
// on stdin and stdout instead of going on with main (child.go). Any binary
// that calls it is thereby its own worker, test binaries included.
// A module that imports anything does not load (imports.go finds its
// imports with esbuild's parser): every qjs runtime has the modules
// qjs:std and qjs:os, with files, clocks and std.evalScript.
// A worker keeps the runtimes of its last two programs, so a page's module
// is loaded once and reused between pages. The runtime's module loader
// sees only an empty folder. wazero's compiled QuickJS is cached in a
// folder (PoolOptions.CacheDir), so a worker starts in tens of ms: the
// module without its DWARF sections, whose source map wazero reads back
// from the cache one system call an entry (quickjs.go).
//
// A watchdog goroutine in the worker ends the process when a fold passes
// a bound; the pool then starts another. Compiled wasm has no safe points
// for Go's scheduler, so the processor running it runs nothing else until
// it returns: the watchdog is started before the wasm is entered, sleeps
// in the kernel (nanosleep) rather than on a Go timer, and the worker
// keeps at least two processors; the collector is off while a fold runs,
// since a collection would wait for ever to stop the wasm's thread. The
// worker runs with GODEBUG=asyncpreemptoff=1: the signals Go would send
// the wasm's thread every few microseconds are all lost, and cost a third
// of a fold's time in the kernel. A panic out of qjs (a wasm trap) is
// recovered and answered, and that worker ends too. The parent kills a
// worker that does not answer within 11 s a fold plus 30 s, and on its
// context's end. The server never dies of a fold.
//
// # The bounds of one fold
//
//   - Work, 500 checkpoints: a checkpoint is 10 ms of CPU time of the
//     thread running the fold (the worker locks it and reads its Linux
//     per-thread CPU clock; elsewhere, wall time). So the bound is 5 s of
//     CPU, whatever else the machine runs. QuickJS's interrupt handler,
//     the natural counter, is not reachable through qjs's wasm build.
//     The bound is the fold's, counted over its tries: a try that runs
//     out of time (below) hands on the CPU it spent, the next may spend
//     only what is left, and the fold stalls as work once its tries
//     together have spent 5 s. A page's call that the watchdog stopped
//     is the first try of the event it stopped at. So a fold that never
//     ends stalls as work at 5 s of CPU whatever the load: on a quarter
//     of a processor, after two or three tries of 10 s, where it waited
//     out twenty before (224 s at a load of 12 to 14 on two cores). The
//     price: a fold that needs nearly all of the bound may stall as work
//     on a loaded machine where a later try would have passed.
//   - Memory, 64 MiB: the growth of the runtime's wasm memory past its
//     size when the page's call began, read from Go by the watchdog every
//     5 ms (memory.go: the worker backs the wasm memory itself and
//     publishes its length with an atomic, so the watchdog never reads
//     wazero's slice while the wasm grows it). qjs's MemoryLimit does not stop an allocation loop.
//   - Time, 10 s of wall time for one fold, from when the driver marks it
//     started (an index in a typed array whose address in wasm memory the
//     watchdog reads). A fold that runs out is tried again in a fresh
//     worker; the views stall as time the 20th time, unless the tries
//     reach the work bound first.
//   - Crash: a worker that ends or traps while folding is replaced and the
//     fold tried again; the views stall as crash the 20th time. QuickJS
//     built for WASI does not check its C stack (which holds about 200
//     frames of JavaScript): a recursion without end traps the wasm. Two
//     such traps (out of bounds memory, invalid table access) at one event
//     are the fold's own, and stall as raised, "Maximum call stack size
//     exceeded". A deep but finite recursion may trap the same way.
//
// # Lines
//
// An error's stack names frames as fold.js:LINE:COL, LINE being the
// transpiled JavaScript's. Program.Lines (fold/module's TranspileMapped,
// read from esbuild's source map) maps it to the module's line; FirstLine
// places that in the definition's document. A stall of kind raised (and
// a module that does not load) carries that line; the others have none.
//
// # Keeping the views (keeper.go, store.go)
//
// The keeper reads the history (History, package ledger's) in pages of
// PageSize records (1,000): records of every kind, those no fold sees
// among them (steps, call records, playbook_page_saved). A HistoryPage
// holds the events among them a fold may see, the seq of the last record
// read (Through), whether the history holds more, and its newest record.
// The page and its end are the history's, never what was left of it: a
// page whose records no fold sees moves the checkpoint like any other,
// and the views are live only once they have read to the newest record.
// CatchUp folds page after page until then (a read without a server
// answers only after it, telling KeeperOptions.Progress how it goes).
//
// A page's views and standing are one JSON file in Dir, replaced whole
// (temporary file, fsync, rename, fsync of the folder) after a page of
// records that folded an event, stalled or made the views live, and when
// the history has nothing more; a page that only read records no filter
// takes is not written, so a restart folds at most one page again (and
// may read again records it folds nothing of). The views are the fold's
// own JSON text (json.RawMessage), keys in the order it wrote them. The
// checkpoint is the seq of the last record read, written as text: an
// opaque cursor; views that stalled have read to the record before the
// event they stalled at. A page registered with another data hash starts
// again from {}; with the same hash (a new version) it keeps its views,
// and a stalled one stays stalled. At most MaxRebuilds pages not yet
// caught up are built at once, the first ones registered; the others
// wait. A page once live advances on every Wake and every pass (Run), and
// on CatchUp.
//
// Await is a read through a server: it wakes Run and waits, at most the
// time it is given, for the views to read the history through a record
// (the one the read found newest, such as the run_succeeded end_run just
// recorded); views that have not by then are answered as rebuilding, with
// the history's newest_record_at and their lag, never as live.
//
// AsOf folds from the start, in memory, a page of PageSize records of the
// history at a time, records no fold sees counted: the page format's
// limit, 10 pages of up to 1,000 records, is ReplayPages pages of 1,000
// records of the history, so a run whose last event is past record 10,000
// is out of reach, however few of those records a fold sees, and whatever
// the keeper's PageSize. Pages begin where the keeper's do.
//
// # Filters
//
// A Page's Filters (quire/words/filter, the page format's
// data.source.events) say which records of the history its fold takes.
package fold
