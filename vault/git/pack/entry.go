package pack

import (
	"bytes"
	"compress/zlib"
	"io"
	"sync"
)

// The types of a pack's entries (gitformat-pack(5), "Object types"):
// object.Commit to object.Tag for whole objects, and two deltas.
const (
	OfsDelta = 6 // a delta whose base is this pack's entry so many bytes back
	RefDelta = 7 // a delta whose base is named by its id
)

// AppendEntryHeader appends the header of a pack entry: its type and size
// (the size of the object, or of the delta, before compression) in git's
// size encoding, and for a delta by offset, how far back its base starts
// in git's offset encoding.
func AppendEntryHeader(b []byte, typ byte, size int64, rel int64) []byte {
	c := typ<<4 | byte(size&15)
	size >>= 4
	for size != 0 {
		b = append(b, c|0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	b = append(b, c)
	if typ == OfsDelta {
		var r [10]byte
		i := len(r) - 1
		r[i] = byte(rel & 127)
		for rel >>= 7; rel != 0; rel >>= 7 {
			rel--
			i--
			r[i] = 128 | byte(rel&127)
		}
		b = append(b, r[i:]...)
	}
	return b
}

// ParseEntryHeader reads the header of a pack entry: its type, size, for a
// delta by offset how far back its base is, and the header's length (0
// when b does not hold a whole header, or one of sizes past 2^56).
func ParseEntryHeader(b []byte) (typ byte, size, back int64, n int) {
	if len(b) == 0 {
		return 0, 0, 0, 0
	}
	c := b[0]
	n = 1
	typ = (c >> 4) & 7
	size = int64(c & 15)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if n == len(b) || shift > 56 {
			return 0, 0, 0, 0
		}
		c = b[n]
		n++
		size |= int64(c&0x7f) << shift
	}
	if typ != OfsDelta {
		return typ, size, 0, n
	}
	if n == len(b) {
		return 0, 0, 0, 0
	}
	c = b[n]
	n++
	back = int64(c & 127)
	for c&128 != 0 {
		if n == len(b) || back > 1<<55 {
			return 0, 0, 0, 0
		}
		c = b[n]
		n++
		back = (back+1)<<7 | int64(c&127)
	}
	return typ, size, back, n
}

// zlibRatio is the most zlib inflates one byte into.
const zlibRatio = 1032

var zlibReaders sync.Pool

// inflate inflates the size bytes that src's zlib stream begins with.
func inflate(src []byte, size int64) ([]byte, error) {
	if size < 0 || size > int64(len(src))*zlibRatio+64 {
		return nil, errBad
	}
	br := bytes.NewReader(src)
	var zr io.ReadCloser
	if z, ok := zlibReaders.Get().(io.ReadCloser); ok {
		if err := z.(zlib.Resetter).Reset(br, nil); err != nil {
			return nil, err
		}
		zr = z
	} else {
		var err error
		if zr, err = zlib.NewReader(br); err != nil {
			return nil, err
		}
	}
	defer zlibReaders.Put(zr)
	out := make([]byte, size)
	if _, err := io.ReadFull(zr, out); err != nil {
		return nil, err
	}
	return out, nil
}
