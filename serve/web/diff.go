package web

import "strings"

// diffLine is one line of a diff of two texts: Op is ' ' for a line both
// hold, '-' for one only the first holds, '+' for one only the second.
type diffLine struct {
	Op   string
	Text string
}

// maxDiffCells bounds the table a diff fills (lines of one text times
// lines of the other): past it the two are shown as one taken away and
// the other put in its place.
const maxDiffCells = 4 << 20

// lineDiff is the diff of a and b line by line, by their longest common
// subsequence of lines: the shortest list of lines taken away and put in
// that makes b of a. Lines taken away come before those put in their
// place.
func lineDiff(a, b string) []diffLine {
	x, y := splitLines(a), splitLines(b)
	if len(x)*len(y) > maxDiffCells {
		out := make([]diffLine, 0, len(x)+len(y))
		for _, l := range x {
			out = append(out, diffLine{"-", l})
		}
		for _, l := range y {
			out = append(out, diffLine{"+", l})
		}
		return out
	}
	// lcs[i][j] is the length of the longest common subsequence of x[i:]
	// and y[j:].
	lcs := make([][]int32, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []diffLine
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			out = append(out, diffLine{" ", x[i]})
			i, j = i+1, j+1
		case j == len(y) || i < len(x) && lcs[i+1][j] >= lcs[i][j+1]:
			out = append(out, diffLine{"-", x[i]})
			i++
		default:
			out = append(out, diffLine{"+", y[j]})
			j++
		}
	}
	return out
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
