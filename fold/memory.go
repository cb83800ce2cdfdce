package fold

import (
	"sync/atomic"
	"unsafe"

	"github.com/tetratelabs/wazero/experimental"
)

// linearMemory backs a worker's wasm memory (wazero's experimental
// allocator hook), so that the watchdog can read its size and the running
// fold's index without touching wazero's own slice header, which the
// wasm's thread rewrites when the memory grows (the race go test -race
// found between the watchdog's Size and a fold's memory.grow).
//
// Reallocate is called by wazero on the wasm's thread alone; it publishes
// the new buffer's start and length with atomics, which the watchdog
// loads. A buffer left behind by a growth stays alive while the watchdog
// may hold its start, and holds every address the old length covered.
type linearMemory struct {
	buf  []byte // the wasm's thread only
	base atomic.Pointer[byte]
	size atomic.Uint64
}

func (m *linearMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m.buf)) {
		// append grows the capacity geometrically, as wazero's own does.
		m.buf = append(m.buf, make([]byte, size-uint64(len(m.buf)))...)
	}
	m.buf = m.buf[:size]
	if size > 0 {
		m.base.Store(unsafe.SliceData(m.buf))
	}
	m.size.Store(size)
	return m.buf
}

func (m *linearMemory) Free() { m.buf = nil }

// allocator hands wazero this memory, for the one memory a runtime has.
func (m *linearMemory) allocator() experimental.MemoryAllocator {
	return experimental.MemoryAllocatorFunc(func(capacity, _ uint64) experimental.LinearMemory {
		m.buf = make([]byte, 0, capacity)
		return m
	})
}

// Size is the memory's length in bytes; any goroutine may ask.
func (m *linearMemory) Size() uint64 { return m.size.Load() }

// ReadUint32 reads the little-endian uint32 at addr, which the wasm
// writes (atomically where addr is 4-aligned); any goroutine may ask.
func (m *linearMemory) ReadUint32(addr uint32) (uint32, bool) {
	size := m.size.Load()
	base := m.base.Load()
	if base == nil || uint64(addr)+4 > size {
		return 0, false
	}
	p := unsafe.Add(unsafe.Pointer(base), addr)
	if addr%4 == 0 {
		// wasm memory is little-endian, and so are the machines Go's
		// atomics on byte buffers run on here (amd64, arm64).
		return atomic.LoadUint32((*uint32)(p)), true
	}
	b := unsafe.Slice((*byte)(p), 4)
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24, true
}
