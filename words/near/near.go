// Package near names, for a name that is none of the choices, the one that
// was likely meant, and the choices as a person lists them, so that every
// "there is no X" of every door (a chart kind, a playbook, a definition, an
// operation's argument, a shape, a command, a flag) says what to write
// instead, in one way.
package near

import (
	"fmt"
	"strconv"
	"strings"
)

// Closest is the choice nearest to s, when it is near enough to be what
// was meant: one that s begins (s of two letters or more: "bar" is bars),
// or one at most a third of s's letters away, and one at least (a letter
// wrong, missing, extra, or two swapped counting as one each: "limt" is
// limit, but "pie" is not line); "" when none is. Of several as near,
// the first in choices.
func Closest(s string, choices []string) string {
	best, bestD := "", max(1, len(s)/3)+1
	for _, n := range choices {
		if len(s) >= 2 && strings.HasPrefix(n, s) {
			return n
		}
		if d := editDistance(s, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// Suggest ends a refusal of a name that is none of choices, as every
// "there is no X" does: "; " and the nearest one, asked, then the choices,
// named by what (`; did you mean "finance"? The playbooks are finance and
// ops`), or the choices alone when none is near (`; the playbooks are
// finance and ops`); "" when there are no choices, for the caller to say
// how one is made.
func Suggest(name string, choices []string, what string) string {
	if len(choices) == 0 {
		return ""
	}
	if n := Closest(name, choices); n != "" {
		return fmt.Sprintf("; did you mean %q? %s are %s", n, upper(what), List(choices))
	}
	return fmt.Sprintf("; %s are %s", what, List(choices))
}

func upper(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// maxListed is how many choices List names before it counts the rest.
const maxListed = 20

// List says choices as a sentence lists them, "line, bars and text", and
// past twenty the first twenty and how many more ("…, table and 30
// more"): never Go's [line bars text]. "" for none.
func List(choices []string) string {
	switch n := len(choices); {
	case n == 0:
		return ""
	case n == 1:
		return choices[0]
	case n > maxListed:
		return strings.Join(choices[:maxListed], ", ") + " and " + strconv.Itoa(n-maxListed) + " more"
	default:
		return strings.Join(choices[:n-1], ", ") + " and " + choices[n-1]
	}
}

// editDistance is the optimal string alignment distance of a and b.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
