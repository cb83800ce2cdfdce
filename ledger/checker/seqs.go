package checker

import (
	"math/bits"
	"sort"
	"strconv"
)

// seqSet is the seqs a playbook's lines carry, as the check counts them:
// a bit a seq up to denseSeqs (a vault's seqs are 1 to its count of
// events, 100,000 runs' a million bits, 125 kB), a map for any beyond (a
// seq written by hand). A map of a million seqs cost the check after one
// boundary a tenth of its time at 100,000 runs.
type seqSet struct {
	dense  []uint64
	sparse map[int64]bool
	n      int
}

// denseSeqs bounds the dense part: 2 MB of bits.
const denseSeqs = 1 << 24

// add adds seq (> 0) and says whether it was not there yet.
func (s *seqSet) add(seq int64) bool {
	if seq > 0 && seq <= denseSeqs {
		w, b := int(seq>>6), uint64(1)<<(seq&63)
		if w >= len(s.dense) {
			s.dense = append(s.dense, make([]uint64, w+1-len(s.dense)+len(s.dense)/2)...)
		}
		if s.dense[w]&b != 0 {
			return false
		}
		s.dense[w] |= b
		s.n++
		return true
	}
	if s.sparse[seq] {
		return false
	}
	if s.sparse == nil {
		s.sparse = map[int64]bool{}
	}
	s.sparse[seq] = true
	s.n++
	return true
}

// beyond answers the seqs greater than n, in decimal, sorted as strings
// (as the check's message has always listed them).
func (s *seqSet) beyond(n int64) []string {
	var out []string
	for w, word := range s.dense {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			word &^= 1 << b
			if seq := int64(w)<<6 | int64(b); seq > n {
				out = append(out, strconv.FormatInt(seq, 10))
			}
		}
	}
	for seq := range s.sparse {
		if seq > n {
			out = append(out, strconv.FormatInt(seq, 10))
		}
	}
	sort.Strings(out)
	return out
}
