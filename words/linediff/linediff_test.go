package linediff

import (
	"math/rand"
	"strings"
	"testing"
)

// Any diff, applied, gives the second text of the first: its ' ' and '-'
// lines are the first text, its ' ' and '+' lines the second, and no
// shorter diff exists than the one by the longest common subsequence.
func TestDiffMakesTheSecondOfTheFirst(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	words := []string{"a", "b", "c", "d", "e"}
	text := func() string {
		var ls []string
		for range rng.Intn(12) {
			ls = append(ls, words[rng.Intn(len(words))])
		}
		if len(ls) == 0 {
			return ""
		}
		return strings.Join(ls, "\n") + "\n"
	}
	for range 2000 {
		a, b := text(), text()
		var left, right []string
		same := 0
		for _, l := range Diff(a, b) {
			if l.Op != "+" {
				left = append(left, l.Text)
			}
			if l.Op != "-" {
				right = append(right, l.Text)
			}
			if l.Op == " " {
				same++
			}
		}
		if strings.Join(left, "\n") != strings.Join(splitLines(a), "\n") || strings.Join(right, "\n") != strings.Join(splitLines(b), "\n") {
			t.Fatalf("diff of %q and %q does not make them", a, b)
		}
		if want := lcsLen(splitLines(a), splitLines(b)); same != want {
			t.Fatalf("diff of %q and %q keeps %d lines, the longest common subsequence %d", a, b, same, want)
		}
	}
}

func lcsLen(x, y []string) int {
	if len(x) == 0 || len(y) == 0 {
		return 0
	}
	if x[0] == y[0] {
		return 1 + lcsLen(x[1:], y[1:])
	}
	return max(lcsLen(x[1:], y), lcsLen(x, y[1:]))
}
