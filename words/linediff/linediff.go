// Package linediff is the diff of two texts line by line, by their longest
// common subsequence: the source diff of a definition's versions on its
// page (serve/web), and the Markdown diff of two renders of a page
// (diff_page).
package linediff

import "strings"

// Line is one line of a diff of two texts: Op is " " for a line both
// hold, "-" for one only the first holds, "+" for one only the second.
type Line struct {
	Op   string `json:"op"`
	Text string `json:"text"`
}

// maxDiffCells bounds the table a diff fills (lines of one text times
// lines of the other): past it the two are shown as one taken away and
// the other put in its place.
const maxDiffCells = 4 << 20

// Diff is the diff of a and b line by line, by their longest common
// subsequence of lines: the shortest list of lines taken away and put in
// that makes b of a. Lines taken away come before those put in their
// place.
func Diff(a, b string) []Line {
	x, y := splitLines(a), splitLines(b)
	if len(x)*len(y) > maxDiffCells {
		out := make([]Line, 0, len(x)+len(y))
		for _, l := range x {
			out = append(out, Line{"-", l})
		}
		for _, l := range y {
			out = append(out, Line{"+", l})
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
	var out []Line
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			out = append(out, Line{" ", x[i]})
			i, j = i+1, j+1
		case j == len(y) || i < len(x) && lcs[i+1][j] >= lcs[i][j+1]:
			out = append(out, Line{"-", x[i]})
			i++
		default:
			out = append(out, Line{"+", y[j]})
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
