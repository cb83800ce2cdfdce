package pack

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// AffixDelta's deltas make the target from the base, as go-git's reader
// applies them (git's patch-delta reads the same instructions), for bases
// and targets that share a prefix and a suffix of every length, across the
// 64 KiB a copy instruction takes, and for ones that share nothing.
func TestAffixDeltaMakesTheTarget(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	sizes := []int{0, 1, 127, 128, 0xffff, 0x10000, 0x10001, 200000}
	tried, refused := 0, 0
	for i := 0; i < 400; i++ {
		base := make([]byte, sizes[rng.Intn(len(sizes))]+rng.Intn(3))
		rng.Read(base)
		target := append([]byte(nil), base...)
		switch rng.Intn(4) {
		case 0: // a change inside
			if len(target) > 0 {
				at := rng.Intn(len(target))
				mid := make([]byte, rng.Intn(300))
				rng.Read(mid)
				target = append(append(append([]byte(nil), target[:at]...), mid...), target[min(len(target), at+rng.Intn(50)):]...)
			}
		case 1: // appended
			extra := make([]byte, rng.Intn(70000))
			rng.Read(extra)
			target = append(target, extra...)
		case 2: // nothing shared
			target = make([]byte, rng.Intn(1000))
			rng.Read(target)
		}
		if len(target) < 32 || len(base) < len(target)>>4 || len(target) < len(base)>>4 {
			continue // packLoose deltifies only these (and go-git reads no delta of an empty base)
		}
		tried++
		most := rng.Intn(len(target) + 1)
		d := AffixDelta(base, target, most)
		if d == nil {
			// Refused: more than most bytes lie between. It still makes
			// a delta with no bound, and that is checked below.
			refused++
			d = AffixDelta(base, target, len(target))
		} else if len(d) > 32+most+most/127+(len(base)+len(target))/DeltaCopyMax*8 {
			t.Fatalf("case %d: a delta of %d bytes within a bound of %d inserted", i, len(d), most)
		}
		got, err := packfile.PatchDelta(base, d)
		if err != nil || !bytes.Equal(got, target) {
			t.Fatalf("case %d: base %d bytes, target %d: patched %d bytes, %v", i, len(base), len(target), len(got), err)
		}
	}
	if tried < 100 || refused == 0 || refused == tried {
		t.Fatalf("%d cases tried, %d refused: the bound was not exercised both ways", tried, refused)
	}
}

// commonPrefix and commonSuffix, which compare in chunks, answer what a
// byte at a time answers, wherever the first difference is.
func TestCommonAffixesAreByteExact(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for i := 0; i < 2000; i++ {
		a := make([]byte, rng.Intn(3*affixChunk))
		rng.Read(a)
		b := append([]byte(nil), a...)
		if len(b) > 0 && rng.Intn(4) > 0 {
			b[rng.Intn(len(b))]++
		}
		if rng.Intn(3) == 0 {
			b = append(b[:0:0], b[rng.Intn(len(b)+1):]...) // a shorter one, for the suffix
		}
		p := 0
		for n := min(len(a), len(b)); p < n && a[p] == b[p]; p++ {
		}
		s := 0
		for n := min(len(a), len(b)); s < n && a[len(a)-1-s] == b[len(b)-1-s]; s++ {
		}
		if n := min(len(a), len(b)); commonPrefix(a[:n], b[:n]) != p || commonSuffix(a, b) != s {
			t.Fatalf("case %d: prefix %d (want %d), suffix %d (want %d)", i, commonPrefix(a[:n], b[:n]), p, commonSuffix(a, b), s)
		}
	}
}

// ReplaceDelta's deltas make the target from a base that differs from it
// in the ranges given, wherever they are (across the 64 KiB a copy takes,
// at the ends, next to each other).
func TestReplaceDeltaMakesTheTarget(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for i := 0; i < 300; i++ {
		base := make([]byte, 1+rng.Intn(300000))
		rng.Read(base)
		target := append([]byte(nil), base...)
		var ranges [][2]int
		for at := 0; at < len(target); {
			at += rng.Intn(len(target)/3 + 1)
			end := min(len(target), at+rng.Intn(300))
			if rng.Intn(3) == 0 || end <= at {
				at = end + 1
				continue
			}
			rng.Read(target[at:end])
			ranges = append(ranges, [2]int{at, end})
			at = end
		}
		got, err := packfile.PatchDelta(base, ReplaceDelta(target, ranges))
		if err != nil || !bytes.Equal(got, target) {
			t.Fatalf("case %d: %d bytes, %d ranges: patched %d bytes, %v", i, len(base), len(ranges), len(got), err)
		}
	}
}

// AppendDelta's deltas make the target from its first n bytes, for every n.
func TestAppendDeltaMakesTheTarget(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	for i := 0; i < 300; i++ {
		target := make([]byte, rng.Intn(200000))
		rng.Read(target)
		n := rng.Intn(len(target) + 1)
		got, err := packfile.PatchDelta(target[:n:n], AppendDelta(target, n))
		if n == 0 {
			continue // go-git reads no delta of an empty base; packLoose makes none
		}
		if err != nil || !bytes.Equal(got, target) {
			t.Fatalf("case %d: %d of %d bytes: patched %d bytes, %v", i, n, len(target), len(got), err)
		}
	}
}

// SparseDelta's deltas make the target from a base of its length that
// differs from it here and there (runs of changed bytes at random places,
// next to each other, at the start and the end, across a copy's 64 KiB),
// as go-git's reader applies them; they stay within the bytes changed
// plus the instructions' own, and a base of another length, or changes
// past most, are refused.
func TestSparseDeltaMakesTheTarget(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	refused := 0
	for i := 0; i < 300; i++ {
		base := make([]byte, []int{1, 255, 256, 257, 4096, 70000, 300000}[rng.Intn(7)])
		rng.Read(base)
		target := bytes.Clone(base)
		changed := 0
		for k := rng.Intn(12); k >= 0; k-- {
			at := rng.Intn(len(target))
			switch rng.Intn(4) {
			case 0:
				at = 0
			case 1:
				at = len(target) - 1
			}
			for j := at; j < min(len(target), at+1+rng.Intn(24)); j++ {
				target[j] ^= byte(1 + rng.Intn(255))
				changed++
			}
		}
		most := len(target)
		if rng.Intn(4) == 0 {
			most = rng.Intn(changed + 1)
		}
		d := SparseDelta(base, target, most)
		if d == nil {
			if most >= changed+16*13 {
				t.Fatalf("case %d: refused %d changed bytes within %d", i, changed, most)
			}
			refused++
			continue
		}
		got, err := packfile.PatchDelta(base, d)
		if err != nil || !bytes.Equal(got, target) {
			t.Fatalf("case %d: %d bytes, patched %d: %v", i, len(target), len(got), err)
		}
		if len(d) > 16+len(target)/DeltaCopyMax*8+changed*(sparseGap+10) {
			t.Fatalf("case %d: a delta of %d bytes for %d changed", i, len(d), changed)
		}
	}
	if refused == 0 {
		t.Fatal("no change was refused: the bound was not exercised")
	}
	if SparseDelta(make([]byte, 10), make([]byte, 11), 100) != nil {
		t.Fatal("a base of another length makes a delta")
	}
}
