package checker

import (
	"reflect"
	"testing"
)

func TestSeqSetCountsEachSeqOnce(t *testing.T) {
	var s seqSet
	for _, seq := range []int64{1, 2, 3, 64, 65, 2, denseSeqs, denseSeqs + 1, 1 << 40, 1 << 40, -4, 12} {
		s.add(seq)
	}
	if s.n != 10 {
		t.Errorf("n = %d, want 10 distinct seqs", s.n)
	}
	if s.add(64) || !s.add(66) {
		t.Error("add says whether the seq was new")
	}
	want := []string{"1099511627776", "16777216", "16777217", "64", "65", "66"}
	if got := s.beyond(12); !reflect.DeepEqual(got, want) {
		t.Errorf("beyond(12) = %v, want %v", got, want)
	}
}
