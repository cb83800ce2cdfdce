package fold

import (
	"bytes"
	"sync"
	_ "unsafe" // go:linkname, below
)

// A worker's start is wazero's compiled QuickJS read from the cache
// folder (PoolOptions.CacheDir). qjs's qjs.wasm carries a few DWARF
// sections (.debug_*, some 7 KB of its 1 MB), and a module with DWARF is
// compiled by wazero with a source map, an entry for each of some 75,000
// instructions, which its cache reads back eight bytes to a read system
// call (wazevo's deserializeCompiledModule reads the cache file
// unbuffered): 150,000 reads, some 0.25 s of CPU a worker start, where
// the rest of it is some 50 ms. The map only adds source lines to a
// trap's Go stack trace, which no fold shows. So the workers run qjs's
// module without its DWARF sections (qjs.Option.QuickJSWasmBytes), and
// wazero compiles and caches that module instead (its cache is keyed by
// the module's bytes). Measured on the 2-core machine: qjs.New with a
// warm cache 82-89 ms and 0.05 s of CPU, against 490-570 ms and 0.27 s.

// qjsWasm is qjs's embedded QuickJS module. qjs (pinned at v0.0.6)
// exports no way to read it; a link to its variable is the one way that
// does not copy its 1 MB into this repository. Were qjs to rename it, this
// would be empty: the workers would run qjs's own module (qjs takes empty
// bytes as none), and TestTheWorkersQuickJSIsQjssWithoutDWARF fails.
//
//go:linkname qjsWasm github.com/fastschema/qjs.wasmBytes
var qjsWasm []byte

// quickJS is qjs's QuickJS module without its DWARF sections.
var quickJS = sync.OnceValue(func() []byte { return withoutDebugSections(qjsWasm) })

// withoutDebugSections answers the WebAssembly module b without its custom
// sections named .debug_* (DWARF), every other section as it lies, in
// order; b itself when it is not a module this reads whole (a header, then
// sections each of an id, a LEB128 size within the module and, for a
// custom section, a name within it).
func withoutDebugSections(b []byte) []byte {
	if len(b) < 8 || !bytes.Equal(b[:4], []byte("\x00asm")) {
		return b
	}
	out := make([]byte, 0, len(b))
	out = append(out, b[:8]...)
	for i := 8; i < len(b); {
		start := i
		id := b[i]
		size, n := uleb(b[i+1:])
		if n == 0 || size > uint64(len(b)-i-1-n) {
			return b
		}
		body := b[i+1+n : i+1+n+int(size)]
		i += 1 + n + int(size)
		if id == 0 {
			nameLen, m := uleb(body)
			if m == 0 || nameLen > uint64(len(body)-m) {
				return b
			}
			if bytes.HasPrefix(body[m:m+int(nameLen)], []byte(".debug_")) {
				continue
			}
		}
		out = append(out, b[start:i]...)
	}
	return out
}

// uleb reads an unsigned LEB128 of at most 32 bits (a section's size, a
// name's length) from the start of b: its value and its length, 0 when b
// does not start with one.
func uleb(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 5; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}
