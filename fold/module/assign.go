package module

import (
	"fmt"

	"quire/internal/jsscan"
)

// countAssignments counts, for each function, the assignments to variables
// made in its own body (a function inside it counts its own), and refuses
// a function that makes more than MaxAssignments.
//
// An assignment is an assignment operator (=, +=, …, ??=) whose left side
// is a variable or a destructuring pattern, a declaration with an
// initializer, or ++ or -- of a variable. Writing to a property
// (view.x = 1) is not an assignment to a variable; a type alias's = is none.
//
// A function's body is the { after => or after the parameter list (and
// return type) of a function, a method or a constructor. The count of an
// arrow function with an expression body goes to the function around it.
func countAssignments(toks []jsscan.Token) []problem {
	type frame struct {
		line  int
		name  string
		count int
	}
	var frames []frame // frames[0] is the module itself
	frames = append(frames, frame{name: "the module"})
	var braces []bool // for each open {, whether it opened a function's body
	var parens []int  // for each open (, the index of the token before it
	var closeOf = -1  // index of the last ) of a parameter list
	var ps []problem
	control := map[string]bool{"if": true, "for": true, "while": true, "switch": true, "catch": true, "with": true}
	for k := 0; k < len(toks); k++ {
		t := toks[k]
		prev := jsscan.Token{}
		if k > 0 {
			prev = toks[k-1]
		}
		if t.Kind == jsscan.Punct {
			switch t.Text {
			case "(":
				parens = append(parens, k-1)
			case ")":
				if n := len(parens); n > 0 {
					before := parens[n-1]
					parens = parens[:n-1]
					if before < 0 || !control[toks[before].Text] {
						closeOf = k
						// Skip a return type to the body's {.
						if k+1 < len(toks) && toks[k+1].Text == ":" {
							end := skipType(toks, k+2)
							if end < len(toks) && toks[end].Text == "{" {
								k = end - 1
								continue
							}
						}
					}
				}
			case "{":
				body := prev.Text == "=>" || (k-1 == closeOf && prev.Text == ")") || (closeOf >= 0 && k-1 > closeOf && toks[closeOf+1].Text == ":" && skipType(toks, closeOf+2) == k)
				braces = append(braces, body)
				if body {
					end := closeOf
					if prev.Text == "=>" {
						end = k - 2
					}
					frames = append(frames, frame{line: t.Line, name: functionName(toks, end)})
				}
			case "}":
				if n := len(braces); n > 0 {
					if braces[n-1] && len(frames) > 1 {
						f := frames[len(frames)-1]
						frames = frames[:len(frames)-1]
						if f.count > MaxAssignments {
							ps = append(ps, problem{line: f.line, msg: fmt.Sprintf("In the module, %s makes %d assignments to variables, but a function makes at most %d.", f.name, f.count, MaxAssignments)})
						}
					}
					braces = braces[:n-1]
				}
			case "=", "+=", "-=", "*=", "/=", "%=", "**=", "<<=", ">>=", ">>>=", "&=", "|=", "^=", "&&=", "||=", "??=":
				if isVariable(toks, k-1) || prev.Text == "]" || prev.Text == "}" {
					frames[len(frames)-1].count++
				}
			case "++", "--":
				if isVariable(toks, k-1) || (k+1 < len(toks) && isVariable(toks, k+1) && (k+2 >= len(toks) || toks[k+2].Text != "." && toks[k+2].Text != "[" && toks[k+2].Text != "?.")) {
					frames[len(frames)-1].count++
				}
			}
		}
	}
	return ps
}

// isVariable says whether toks[k] is a bare variable's name: an identifier
// not read as a property and not the name of a type alias.
func isVariable(toks []jsscan.Token, k int) bool {
	if k < 0 || k >= len(toks) || toks[k].Kind != jsscan.Ident {
		return false
	}
	if k > 0 {
		switch toks[k-1].Text {
		case ".", "?.", "type", "#":
			return false
		}
	}
	return true
}

// functionName names the function whose parameters end at toks[end]: a
// ) or, for an arrow function of one parameter, its name.
func functionName(toks []jsscan.Token, end int) string {
	k := end
	if k >= 0 && toks[k].Text == ")" {
		k = jsscan.Matching(toks, k) - 1
	} else {
		k--
	}
	if k >= 0 && toks[k].Text == ">" { // type parameters
		for depth := 0; k >= 0; k-- {
			if toks[k].Text == ">" {
				depth++
			} else if toks[k].Text == "<" {
				depth--
				if depth == 0 {
					k--
					break
				}
			}
		}
	}
	if k >= 0 && toks[k].Kind == jsscan.Ident && toks[k].Text != "function" && toks[k].Text != "async" {
		return "the function " + toks[k].Text
	}
	if k >= 1 && (toks[k].Text == "=" || toks[k].Text == ":") && toks[k-1].Kind == jsscan.Ident {
		return "the function " + toks[k-1].Text
	}
	return "a function"
}
