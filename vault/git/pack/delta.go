package pack

import (
	"bytes"
	"encoding/binary"
	"errors"
)

var errBad = errors.New("a malformed pack entry or delta")

// AffixDelta is a git delta (the pack's ofs-delta body) that makes target
// from base by copying their common prefix and suffix and inserting what
// lies between. An object quire writes again at each boundary differs from
// the one before at one place (a tree at the entries of one run folder, a
// log at its end), so this is as small as a delta gets, found by comparing
// bytes, where go-git's DiffDelta first indexes the whole base (half of a
// compaction's time at 20,000 runs, with a 1.6 MB playbook-runs/ tree a
// boundary). It answers nil, having allocated nothing, when more than most
// bytes lie between (the caller then falls back to DiffDelta): compaction
// tries each object against every one in its window, and a delta built only
// to be dropped was most of its garbage.
func AffixDelta(base, target []byte, most int) []byte {
	n := min(len(base), len(target))
	p := commonPrefix(base[:n], target[:n])
	s := commonSuffix(base[p:], target[p:])
	mid := target[p : len(target)-s]
	if len(mid) > most {
		return nil
	}
	d := make([]byte, 0, 32+len(mid)+len(mid)/127+(p+s)/DeltaCopyMax*8)
	d = appendDeltaSize(d, len(base))
	d = appendDeltaSize(d, len(target))
	d = appendDeltaCopy(d, 0, p)
	d = appendDeltaInsert(d, mid)
	return appendDeltaCopy(d, len(base)-s, s)
}

// ReplaceDelta is a git delta that makes target from a base of the same
// length which differs from it only in the ranges changed ([start, end)
// pairs, sorted, apart): the base copied around target's bytes there. The
// writer of a tree that changed a few entries' hashes knows where, and
// needs no comparison (vault/bigtree.go).
func ReplaceDelta(target []byte, changed [][2]int) []byte {
	d := make([]byte, 0, 16+len(target)/DeltaCopyMax*8+len(changed)*32)
	d = appendDeltaSize(d, len(target))
	d = appendDeltaSize(d, len(target))
	at := 0
	for _, c := range changed {
		d = appendDeltaCopy(d, at, c[0]-at)
		d = appendDeltaInsert(d, target[c[0]:c[1]])
		at = c[1]
	}
	return appendDeltaCopy(d, at, len(target)-at)
}

// SparseDelta is a git delta that makes target from a base of the same
// length where they differ only here and there (two versions of a large
// tree some boundaries apart: each changed a few entries' hashes), found
// by comparing them affixChunk bytes at a time: ReplaceDelta over the
// ranges where they differ, two ranges less than sparseGap apart taken as
// one. It answers nil when their lengths differ or the ranges hold more
// than most bytes.
func SparseDelta(base, target []byte, most int) []byte {
	if len(base) != len(target) {
		return nil
	}
	var ranges [][2]int
	held := 0
	for p := 0; p < len(target); p += affixChunk {
		end := min(p+affixChunk, len(target))
		if bytes.Equal(base[p:end], target[p:end]) {
			continue
		}
		for j := p; j < end; j++ {
			if base[j] == target[j] {
				continue
			}
			if n := len(ranges); n > 0 && j-ranges[n-1][1] < sparseGap {
				held += j + 1 - ranges[n-1][1]
				ranges[n-1][1] = j + 1
			} else {
				held++
				ranges = append(ranges, [2]int{j, j + 1})
			}
		}
		if held > most {
			return nil
		}
	}
	return ReplaceDelta(target, ranges)
}

// sparseGap is the least run of equal bytes a SparseDelta copies from the
// base rather than inserts: a copy instruction takes up to eight bytes.
const sparseGap = 16

// AppendDelta is a git delta that makes target from its first n bytes, as
// an append-only file grows (a run's log between two boundaries).
func AppendDelta(target []byte, n int) []byte {
	d := make([]byte, 0, 16+n/DeltaCopyMax*8+len(target)-n+(len(target)-n)/127+1)
	d = appendDeltaSize(d, n)
	d = appendDeltaSize(d, len(target))
	d = appendDeltaCopy(d, 0, n)
	return appendDeltaInsert(d, target[n:])
}

// appendDeltaInsert appends the instructions that insert b.
func appendDeltaInsert(d, b []byte) []byte {
	for len(b) > 0 {
		k := min(len(b), 127)
		d = append(d, byte(k))
		d = append(d, b[:k]...)
		b = b[k:]
	}
	return d
}

// affixChunk is how many bytes commonPrefix and commonSuffix compare at
// once (with bytes.Equal, which compares words at a time) before looking
// for the first byte that differs: a byte at a time, comparing two 7 MB
// versions of a tree was a third of a compaction at 100,000 runs.
const affixChunk = 256

// commonPrefix is how many bytes a and b, of one length, share at their start.
func commonPrefix(a, b []byte) int {
	p := 0
	for p+affixChunk <= len(a) && bytes.Equal(a[p:p+affixChunk], b[p:p+affixChunk]) {
		p += affixChunk
	}
	for p < len(a) && a[p] == b[p] {
		p++
	}
	return p
}

// commonSuffix is how many bytes a and b share at their end, at most the
// shorter one's length.
func commonSuffix(a, b []byte) int {
	n := min(len(a), len(b))
	a, b = a[len(a)-n:], b[len(b)-n:]
	s := 0
	for s+affixChunk <= n && bytes.Equal(a[n-s-affixChunk:n-s], b[n-s-affixChunk:n-s]) {
		s += affixChunk
	}
	for s < n && a[n-1-s] == b[n-1-s] {
		s++
	}
	return s
}

// DeltaCopyMax is the most one copy instruction takes here (git's own
// limit is 16 MiB - 1; 64 KiB is what every reader accepts).
const DeltaCopyMax = 0x10000

func appendDeltaSize(d []byte, n int) []byte {
	for n >= 0x80 {
		d = append(d, byte(n)|0x80)
		n >>= 7
	}
	return append(d, byte(n))
}

// appendDeltaCopy appends the instructions that copy n bytes of the base
// from off: a command byte whose low bits say which bytes of the offset
// (four) and size (three) follow, little-endian, zero bytes left out.
func appendDeltaCopy(d []byte, off, n int) []byte {
	for n > 0 {
		k := min(n, DeltaCopyMax)
		cmd, at := byte(0x80), len(d)
		d = append(d, 0)
		for i := 0; i < 4; i++ {
			if b := byte(off >> (8 * i)); b != 0 {
				cmd |= 1 << i
				d = append(d, b)
			}
		}
		size := k
		if size == DeltaCopyMax {
			size = 0 // 0x10000 is written as no size bytes
		}
		for i := 0; i < 3; i++ {
			if b := byte(size >> (8 * i)); b != 0 {
				cmd |= 1 << (4 + i)
				d = append(d, b)
			}
		}
		d[at] = cmd
		off += k
		n -= k
	}
	return d
}

// ApplyDelta makes the object a delta describes from its base: the base's
// size and the target's, each in git's little-endian varint, then
// instructions, each a copy of a run of the base (a command byte with the
// high bit set, whose low bits say which bytes of the offset and size
// follow) or an insert of the next 1 to 127 bytes of the delta
// (gitformat-pack(5), "Deltified representation"; git's patch-delta.c).
// It answers an error, never a panic, for any delta.
func ApplyDelta(base, delta []byte) ([]byte, error) {
	bad := errBad
	varint := func() (int, bool) {
		v, n := binary.Uvarint(delta)
		if n <= 0 {
			return 0, false
		}
		delta = delta[n:]
		return int(v), true
	}
	srcSize, ok1 := varint()
	dstSize, ok2 := varint()
	// Each byte of the delta makes at most 64 KiB of the target (a copy
	// command byte alone): a larger target is refused before it is made.
	if !ok1 || !ok2 || srcSize != len(base) || dstSize < 0 || dstSize/DeltaCopyMax > len(delta) {
		return nil, bad
	}
	out := make([]byte, 0, dstSize)
	for len(delta) > 0 {
		cmd := delta[0]
		delta = delta[1:]
		switch {
		case cmd&0x80 != 0:
			var off, n int
			for k := 0; k < 4; k++ {
				if cmd&(1<<k) != 0 {
					if len(delta) == 0 {
						return nil, bad
					}
					off |= int(delta[0]) << (8 * k)
					delta = delta[1:]
				}
			}
			for k := 0; k < 3; k++ {
				if cmd&(0x10<<k) != 0 {
					if len(delta) == 0 {
						return nil, bad
					}
					n |= int(delta[0]) << (8 * k)
					delta = delta[1:]
				}
			}
			if n == 0 {
				n = DeltaCopyMax
			}
			if off+n > len(base) || len(out)+n > dstSize {
				return nil, bad
			}
			out = append(out, base[off:off+n]...)
		case cmd != 0:
			n := int(cmd)
			if n > len(delta) || len(out)+n > dstSize {
				return nil, bad
			}
			out = append(out, delta[:n]...)
			delta = delta[n:]
		default:
			return nil, bad
		}
	}
	if len(out) != dstSize {
		return nil, bad
	}
	return out, nil
}
