package module

import (
	"fmt"
	"strings"
)

// problem is one broken module rule, at a line of the module text.
type problem struct {
	line int
	msg  string
	// untypable: the compiler cannot check a module holding this, so Check
	// refuses the module on the rules' word without running it.
	untypable bool
}

// MaxAssignments is the most assignments to variables one function makes.
const MaxAssignments = 500

// FoldSignature is the one signature fold may have.
const FoldSignature = "export function fold(view: View, event: Event): View"

// statementStart are the words that begin a top-level statement when they
// open a line.
var statementStart = map[string]bool{
	"type": true, "interface": true, "export": true, "import": true, "function": true, "let": true,
	"const": true, "var": true, "class": true, "declare": true, "enum": true, "namespace": true,
	"module": true, "async": true, "abstract": true,
}

// continues are tokens after which a line break does not end a statement.
var continues = map[string]bool{
	"=": true, "|": true, "&": true, ",": true, ":": true, "?": true, "=>": true, ".": true, "?.": true,
	"<": true, "(": true, "[": true, "{": true, "extends": true, "keyof": true, "typeof": true,
	"infer": true, "is": true, "in": true, "as": true, "+": true, "-": true, "*": true, "&&": true,
	"||": true, "??": true, "new": true, "readonly": true, "unique": true,
}

// declared are the types the runtime declares for the module.
var declared = map[string]struct{}{
	"View": {}, "Event": {}, "Json": {}, "Series": {}, "Categories": {}, "Table": {}, "Text": {},
}

type function struct {
	name       string
	line       int
	generator  bool
	params     []token // between the parentheses
	result     []token // the return type, without its colon
	bodyOpen   int     // index of the body's {
	exported   bool
	hasTypeArg bool
}

// checkRules reads the tokens of the module and says which rules it breaks.
func checkRules(toks []token) []problem {
	var ps []problem
	add := func(line int, format string, args ...any) {
		ps = append(ps, problem{line: line, msg: fmt.Sprintf(format, args...)})
	}
	var fold *function
	i := 0
	for i < len(toks) {
		t := toks[i]
		if t.text == ";" && t.kind == tPunct {
			i++
			continue
		}
		start := i
		exported := false
		if t.kind == tIdent && t.text == "export" {
			exported = true
			i++
			if i >= len(toks) {
				add(t.line, "The module has an export that names nothing.")
				break
			}
		}
		h := toks[i]
		switch {
		case h.kind == tIdent && (h.text == "type" || h.text == "interface") && i+1 < len(toks) && toks[i+1].kind == tIdent:
			if toks[i+1].text == "answer" && exported {
				add(h.line, "The module exports answer, but a page never runs.")
			}
			if _, ok := declared[toks[i+1].text]; ok {
				add(h.line, "The module declares its own %s, but the runtime declares View, Event, Json, Series, Categories, Table and Text for it.", toks[i+1].text)
			}
			i = skipStatement(toks, i+1)
			continue
		case h.kind == tIdent && h.text == "function" && exported:
			f, next := readFunction(toks, i)
			f.exported = true
			switch {
			case f.generator:
				add(h.line, "The module has an exported generator function: a fold returns at once.")
			case f.name == "answer":
				add(h.line, "The module exports answer, but a page never runs.")
			case f.name == "fold":
				ff := f
				fold = &ff
			}
			i = next
			continue
		}
		// Anything else at the top level is refused.
		what := "a top-level statement other than a type or an exported function"
		switch {
		case h.kind == tIdent && h.text == "import":
			what = "" // refused by the token rules below
		case h.kind == tIdent && h.text == "declare":
			what = ""
		case h.kind == tIdent && (h.text == "enum" || h.text == "const" && i+1 < len(toks) && toks[i+1].text == "enum"):
			what = ""
		case h.kind == tIdent && (h.text == "namespace" || h.text == "module"):
			what = ""
		case h.kind == tIdent && h.text == "async":
			what = ""
		case exported && h.text == "default":
			what = "a default export: the module exports fold and its other functions by name"
		case exported && (h.text == "{" || h.text == "*"):
			what = "an export list: the module exports functions by declaring them"
		case h.kind == tIdent && h.text == "function":
			what = "a function the module does not export: write it inside the function that uses it, or export it"
		case h.kind == tIdent && (h.text == "let" || h.text == "const" || h.text == "var"):
			what = fmt.Sprintf("a top-level %s: the module keeps no state between folds; write it inside the function that uses it", h.text)
		case h.kind == tIdent && (h.text == "class" || h.text == "abstract"):
			what = "a top-level class: the module declares types and exported functions, and nothing else"
		}
		if what != "" {
			add(toks[start].line, "The module has %s.", what)
		}
		i = skipStatement(toks, i)
	}
	ps = append(ps, tokenRules(toks)...)
	if fold == nil {
		add(1, "The module does not export fold: it needs %s.", FoldSignature)
	} else if !foldSignatureOK(fold) {
		add(fold.line, "fold has the signature fold(%s)%s, but it needs %s.",
			join(fold.params), resultText(fold.result), FoldSignature)
	}
	ps = append(ps, countAssignments(toks)...)
	return ps
}

func resultText(r []token) string {
	if len(r) == 0 {
		return ""
	}
	return ": " + join(r)
}

// join writes tokens back as text, a space where the source had one
// between words.
func join(ts []token) string {
	var b strings.Builder
	for i, t := range ts {
		if i > 0 && (t.kind == tIdent || t.kind == tNumber) && (ts[i-1].kind == tIdent || ts[i-1].kind == tNumber) {
			b.WriteByte(' ')
		} else if i > 0 && (t.text == "," || t.text == ":") {
			// no space before
		} else if i > 0 && (ts[i-1].text == "," || ts[i-1].text == ":") {
			b.WriteByte(' ')
		}
		b.WriteString(t.text)
	}
	return b.String()
}

func foldSignatureOK(f *function) bool {
	if f.generator || f.hasTypeArg {
		return false
	}
	want := [][]string{{"", ":", "View"}, {"", ":", "Event"}}
	params := splitTop(f.params)
	if len(params) != 2 {
		return false
	}
	for k, p := range params {
		if len(p) != 3 || p[0].kind != tIdent || p[1].text != ":" || p[2].text != want[k][2] {
			return false
		}
	}
	return len(f.result) == 1 && f.result[0].text == "View"
}

// splitTop splits tokens at the commas of their top level.
func splitTop(ts []token) [][]token {
	if len(ts) == 0 {
		return nil
	}
	var out [][]token
	depth, from := 0, 0
	for k, t := range ts {
		if t.kind != tPunct {
			continue
		}
		switch t.text {
		case "(", "[", "{", "<":
			depth++
		case ")", "]", "}", ">":
			depth--
		case ",":
			if depth == 0 {
				out = append(out, ts[from:k])
				from = k + 1
			}
		}
	}
	if from < len(ts) {
		out = append(out, ts[from:])
	}
	return out
}

// readFunction reads `function [*] name <…>(…): T {…}` from toks[i] (the
// word function) and returns it with the index after its body.
func readFunction(toks []token, i int) (function, int) {
	f := function{line: toks[i].line, bodyOpen: -1}
	i++
	if i < len(toks) && toks[i].text == "*" {
		f.generator = true
		i++
	}
	if i < len(toks) && toks[i].kind == tIdent {
		f.name = toks[i].text
		i++
	}
	if i < len(toks) && toks[i].text == "<" {
		f.hasTypeArg = true
		depth := 0
		for ; i < len(toks); i++ {
			if toks[i].text == "<" {
				depth++
			} else if toks[i].text == ">" {
				depth--
				if depth == 0 {
					i++
					break
				}
			}
		}
	}
	if i >= len(toks) || toks[i].text != "(" {
		return f, skipStatement(toks, i)
	}
	close := matching(toks, i)
	f.params = toks[i+1 : close]
	i = close + 1
	if i < len(toks) && toks[i].text == ":" {
		end := skipType(toks, i+1)
		f.result = toks[i+1 : end]
		i = end
	}
	if i < len(toks) && toks[i].text == "{" {
		f.bodyOpen = i
		return f, matching(toks, i) + 1
	}
	return f, skipStatement(toks, i)
}

// matching is the index of the bracket closing toks[i], or len(toks)-1.
func matching(toks []token, i int) int {
	depth := 0
	for k := i; k < len(toks); k++ {
		if toks[k].kind != tPunct {
			continue
		}
		switch toks[k].text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
			if depth == 0 {
				return k
			}
		}
	}
	return len(toks) - 1
}

// skipType skips a type written after a colon, up to the { of a body.
func skipType(toks []token, i int) int {
	for i < len(toks) {
		t := toks[i]
		if t.kind == tPunct && (t.text == "(" || t.text == "[" || t.text == "{") {
			i = matching(toks, i) + 1
		} else if t.text == "<" {
			depth := 0
			for ; i < len(toks); i++ {
				if toks[i].text == "<" {
					depth++
				} else if toks[i].text == ">" || toks[i].text == ">>" {
					depth -= len(toks[i].text)
					if depth <= 0 {
						break
					}
				}
			}
			i++
		} else {
			i++
		}
		if i >= len(toks) {
			return i
		}
		n := toks[i]
		if n.text == "{" && !continues[toks[i-1].text] {
			return i
		}
		if n.kind == tPunct && !continues[n.text] && n.text != "[" && n.text != "<" {
			return i
		}
	}
	return i
}

// skipStatement skips one top-level statement from toks[i]: to a ; at its
// top level, or to a line that begins another statement.
func skipStatement(toks []token, i int) int {
	depth := 0
	first := i
	for i < len(toks) {
		t := toks[i]
		if depth == 0 && i > first && t.nl && t.kind == tIdent && statementStart[t.text] && !continues[toks[i-1].text] {
			return i
		}
		if t.kind == tPunct {
			switch t.text {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth--
			case ";":
				if depth == 0 {
					return i + 1
				}
			}
		}
		i++
	}
	return i
}

// tokenRules are the rules that hold anywhere in the module.
func tokenRules(toks []token) []problem {
	var ps []problem
	add := func(line int, format string, args ...any) {
		ps = append(ps, problem{line: line, msg: fmt.Sprintf(format, args...)})
	}
	for k, t := range toks {
		if t.kind != tIdent {
			continue
		}
		prev, next := token{}, token{}
		if k > 0 {
			prev = toks[k-1]
		}
		if k+1 < len(toks) {
			next = toks[k+1]
		}
		if prev.text == "." || prev.text == "?." || prev.text == "#" {
			continue
		}
		key := next.text == ":" && (prev.text == "{" || prev.text == ",")
		sameLine := next.text != "" && !next.nl
		switch t.text {
		case "import":
			switch next.text {
			case "(":
				// tsc reads import() as loading a module into a Promise,
				// whose value the sandbox's library lacks, and says so in a
				// diagnostic of no file and no line: the rule's refusal,
				// at its line, is the module's whole answer.
				add(t.line, "import() is refused: a module stands alone and loads nothing.")
				ps[len(ps)-1].untypable = true
			case ".":
				add(t.line, "import.meta is refused: a module stands alone.")
			default:
				add(t.line, "import is refused: a module stands alone and imports nothing.")
			}
		case "require":
			if next.text == "(" {
				add(t.line, "require is refused: a module stands alone and loads nothing.")
			}
		case "eval":
			if !key {
				add(t.line, "eval is refused: the sandbox has no eval.")
			}
		case "new":
			if next.text == "Function" {
				add(t.line, "new Function is refused: the sandbox has no Function constructor.")
			}
		case "declare":
			if sameLine && next.kind == tIdent && !key {
				add(t.line, "declare is refused: a module declares no names outside itself, such as declare global.")
			}
		case "async":
			if sameLine && (next.kind == tIdent || next.text == "(" || next.text == "*") && !key {
				add(t.line, "async is refused: a fold returns at once, so nothing in it waits.")
			}
		case "await":
			if !key {
				add(t.line, "await is refused: a fold returns at once, so nothing in it waits.")
			}
		case "enum":
			if !key {
				add(t.line, "An enum is refused: declare a union type of literals instead.")
			}
		case "namespace", "module":
			if sameLine && (next.kind == tIdent || next.kind == tString) && !key {
				add(t.line, "A %s is refused: declare types and exported functions at the top level instead.", t.text)
			}
		case "constructor":
			if next.text == "(" {
				close := matching(toks, k+1)
				for _, p := range splitTop(toks[k+2 : close]) {
					if len(p) > 1 && p[0].kind == tIdent && isParamModifier(p[0].text) && (p[1].kind == tIdent || p[1].text == "{" || p[1].text == "[") {
						add(p[0].line, "A parameter property (%s %s) is refused: declare the field in the class and assign it in the constructor.", p[0].text, p[1].text)
					}
				}
			}
		}
	}
	return ps
}

func isParamModifier(s string) bool {
	return s == "public" || s == "private" || s == "protected" || s == "readonly" || s == "override"
}
