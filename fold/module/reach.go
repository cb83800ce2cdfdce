package module

import (
	"regexp"
	"strings"

	"quire/internal/jsscan"
)

// The type check must read the module's own text and the runtime's
// declarations, nothing else. tsc follows a triple-slash reference
// (path, types, lib), an import or export from a path, require and
// import() to files anywhere, and reports what it finds there: so a
// module that names another file is refused before tsc runs (the rules
// refuse import and require too, but tsc would run first), and tsc runs
// with noResolve, no types and no lib, with nothing to resolve.

// tripleSlash is a directive tsc reads from a comment line.
var tripleSlash = regexp.MustCompile(`^\s*///\s*<\s*(reference|amd-module|amd-dependency)\b`)

// reaches answers the problems of the module's triple-slash directives,
// and whether it names another file at all: those directives, or the
// tokens import, require( and from "path" (which the rules refuse).
func reaches(src string, toks []jsscan.Token) (ps []problem, names bool) {
	for i, line := range strings.Split(src, "\n") {
		if tripleSlash.MatchString(line) {
			ps = append(ps, problem{line: i + 1, msg: "A triple-slash directive is refused: a module stands alone and references no file."})
		}
	}
	for k, t := range toks {
		if t.Kind != jsscan.Ident || k > 0 && (toks[k-1].Text == "." || toks[k-1].Text == "?.") {
			continue
		}
		var next jsscan.Token
		if k+1 < len(toks) {
			next = toks[k+1]
		}
		switch {
		case t.Text == "import" && next.Text != ".",
			t.Text == "require" && next.Text == "(",
			t.Text == "from" && next.Kind == jsscan.String: // export ... from "path"
			names = true
		}
	}
	return ps, names || len(ps) > 0
}
