package module

import (
	"fmt"
	"strings"

	"quire/internal/jsscan"
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
	params     []jsscan.Token // between the parentheses
	result     []jsscan.Token // the return type, without its colon
	bodyOpen   int            // index of the body's {
	exported   bool
	hasTypeArg bool
}

// checkRules reads the tokens of the module and says which rules it breaks.
func checkRules(toks []jsscan.Token) []problem {
	var ps []problem
	add := func(line int, format string, args ...any) {
		ps = append(ps, problem{line: line, msg: fmt.Sprintf(format, args...)})
	}
	var fold *function
	i := 0
	for i < len(toks) {
		t := toks[i]
		if t.Text == ";" && t.Kind == jsscan.Punct {
			i++
			continue
		}
		start := i
		exported := false
		if t.Kind == jsscan.Ident && t.Text == "export" {
			exported = true
			i++
			if i >= len(toks) {
				add(t.Line, "The module has an export that names nothing.")
				break
			}
		}
		h := toks[i]
		switch {
		case h.Kind == jsscan.Ident && (h.Text == "type" || h.Text == "interface") && i+1 < len(toks) && toks[i+1].Kind == jsscan.Ident:
			if toks[i+1].Text == "answer" && exported {
				add(h.Line, "The module exports answer, but a page never runs.")
			}
			if _, ok := declared[toks[i+1].Text]; ok {
				add(h.Line, "The module declares its own %s, but the runtime declares View, Event, Json, Series, Categories, Table and Text for it.", toks[i+1].Text)
			}
			i = skipStatement(toks, i+1)
			continue
		case h.Kind == jsscan.Ident && h.Text == "function" && exported:
			f, next := readFunction(toks, i)
			f.exported = true
			switch {
			case f.generator:
				add(h.Line, "The module has an exported generator function: a fold returns at once.")
			case f.name == "answer":
				add(h.Line, "The module exports answer, but a page never runs.")
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
		case h.Kind == jsscan.Ident && h.Text == "import":
			what = "" // refused by the token rules below
		case h.Kind == jsscan.Ident && h.Text == "declare":
			what = ""
		case h.Kind == jsscan.Ident && (h.Text == "enum" || h.Text == "const" && i+1 < len(toks) && toks[i+1].Text == "enum"):
			what = ""
		case h.Kind == jsscan.Ident && (h.Text == "namespace" || h.Text == "module"):
			what = ""
		case h.Kind == jsscan.Ident && h.Text == "async":
			what = ""
		case exported && h.Text == "default":
			what = "a default export: the module exports fold and its other functions by name"
		case exported && (h.Text == "{" || h.Text == "*"):
			what = "an export list: the module exports functions by declaring them"
		case h.Kind == jsscan.Ident && h.Text == "function":
			what = "a function the module does not export: write it inside the function that uses it, or export it"
		case h.Kind == jsscan.Ident && (h.Text == "let" || h.Text == "const" || h.Text == "var"):
			what = fmt.Sprintf("a top-level %s: the module keeps no state between folds; write it inside the function that uses it", h.Text)
		case h.Kind == jsscan.Ident && (h.Text == "class" || h.Text == "abstract"):
			what = "a top-level class: the module declares types and exported functions, and nothing else"
		}
		if what != "" {
			add(toks[start].Line, "The module has %s.", what)
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

func resultText(r []jsscan.Token) string {
	if len(r) == 0 {
		return ""
	}
	return ": " + join(r)
}

// join writes tokens back as text, a space where the source had one
// between words.
func join(ts []jsscan.Token) string {
	var b strings.Builder
	for i, t := range ts {
		if i > 0 && (t.Kind == jsscan.Ident || t.Kind == jsscan.Number) && (ts[i-1].Kind == jsscan.Ident || ts[i-1].Kind == jsscan.Number) {
			b.WriteByte(' ')
		} else if i > 0 && (t.Text == "," || t.Text == ":") {
			// no space before
		} else if i > 0 && (ts[i-1].Text == "," || ts[i-1].Text == ":") {
			b.WriteByte(' ')
		}
		b.WriteString(t.Text)
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
		if len(p) != 3 || p[0].Kind != jsscan.Ident || p[1].Text != ":" || p[2].Text != want[k][2] {
			return false
		}
	}
	return len(f.result) == 1 && f.result[0].Text == "View"
}

// splitTop splits tokens at the commas of their top level.
func splitTop(ts []jsscan.Token) [][]jsscan.Token {
	if len(ts) == 0 {
		return nil
	}
	var out [][]jsscan.Token
	depth, from := 0, 0
	for k, t := range ts {
		if t.Kind != jsscan.Punct {
			continue
		}
		switch t.Text {
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
func readFunction(toks []jsscan.Token, i int) (function, int) {
	f := function{line: toks[i].Line, bodyOpen: -1}
	i++
	if i < len(toks) && toks[i].Text == "*" {
		f.generator = true
		i++
	}
	if i < len(toks) && toks[i].Kind == jsscan.Ident {
		f.name = toks[i].Text
		i++
	}
	if i < len(toks) && toks[i].Text == "<" {
		f.hasTypeArg = true
		depth := 0
		for ; i < len(toks); i++ {
			if toks[i].Text == "<" {
				depth++
			} else if toks[i].Text == ">" {
				depth--
				if depth == 0 {
					i++
					break
				}
			}
		}
	}
	if i >= len(toks) || toks[i].Text != "(" {
		return f, skipStatement(toks, i)
	}
	close := jsscan.Matching(toks, i)
	f.params = toks[i+1 : close]
	i = close + 1
	if i < len(toks) && toks[i].Text == ":" {
		end := skipType(toks, i+1)
		f.result = toks[i+1 : end]
		i = end
	}
	if i < len(toks) && toks[i].Text == "{" {
		f.bodyOpen = i
		return f, jsscan.Matching(toks, i) + 1
	}
	return f, skipStatement(toks, i)
}

// skipType skips a type written after a colon, up to the { of a body.
func skipType(toks []jsscan.Token, i int) int {
	for i < len(toks) {
		t := toks[i]
		if t.Kind == jsscan.Punct && (t.Text == "(" || t.Text == "[" || t.Text == "{") {
			i = jsscan.Matching(toks, i) + 1
		} else if t.Text == "<" {
			depth := 0
			for ; i < len(toks); i++ {
				if toks[i].Text == "<" {
					depth++
				} else if toks[i].Text == ">" || toks[i].Text == ">>" {
					depth -= len(toks[i].Text)
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
		if n.Text == "{" && !continues[toks[i-1].Text] {
			return i
		}
		if n.Kind == jsscan.Punct && !continues[n.Text] && n.Text != "[" && n.Text != "<" {
			return i
		}
	}
	return i
}

// skipStatement skips one top-level statement from toks[i]: to a ; at its
// top level, or to a line that begins another statement.
func skipStatement(toks []jsscan.Token, i int) int {
	depth := 0
	first := i
	for i < len(toks) {
		t := toks[i]
		if depth == 0 && i > first && t.NL && t.Kind == jsscan.Ident && statementStart[t.Text] && !continues[toks[i-1].Text] {
			return i
		}
		if t.Kind == jsscan.Punct {
			switch t.Text {
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
func tokenRules(toks []jsscan.Token) []problem {
	var ps []problem
	add := func(line int, format string, args ...any) {
		ps = append(ps, problem{line: line, msg: fmt.Sprintf(format, args...)})
	}
	for k, t := range toks {
		if t.Kind != jsscan.Ident {
			continue
		}
		prev, next := jsscan.Token{}, jsscan.Token{}
		if k > 0 {
			prev = toks[k-1]
		}
		if k+1 < len(toks) {
			next = toks[k+1]
		}
		if prev.Text == "." || prev.Text == "?." || prev.Text == "#" {
			continue
		}
		key := next.Text == ":" && (prev.Text == "{" || prev.Text == ",")
		sameLine := next.Text != "" && !next.NL
		switch t.Text {
		case "import":
			switch next.Text {
			case "(":
				// tsc reads import() as loading a module into a Promise,
				// whose value the sandbox's library lacks, and says so in a
				// diagnostic of no file and no line: the rule's refusal,
				// at its line, is the module's whole answer.
				add(t.Line, "import() is refused: a module stands alone and loads nothing.")
				ps[len(ps)-1].untypable = true
			case ".":
				add(t.Line, "import.meta is refused: a module stands alone.")
			default:
				add(t.Line, "import is refused: a module stands alone and imports nothing.")
			}
		case "require":
			if next.Text == "(" {
				add(t.Line, "require is refused: a module stands alone and loads nothing.")
			}
		case "eval":
			if !key {
				add(t.Line, "eval is refused: the sandbox has no eval.")
			}
		case "new":
			if next.Text == "Function" {
				add(t.Line, "new Function is refused: the sandbox has no Function constructor.")
			}
		case "declare":
			if sameLine && next.Kind == jsscan.Ident && !key {
				add(t.Line, "declare is refused: a module declares no names outside itself, such as declare global.")
			}
		case "async":
			if sameLine && (next.Kind == jsscan.Ident || next.Text == "(" || next.Text == "*") && !key {
				add(t.Line, "async is refused: a fold returns at once, so nothing in it waits.")
			}
		case "await":
			if !key {
				add(t.Line, "await is refused: a fold returns at once, so nothing in it waits.")
			}
		case "enum":
			if !key {
				add(t.Line, "An enum is refused: declare a union type of literals instead.")
			}
		case "namespace", "module":
			if sameLine && (next.Kind == jsscan.Ident || next.Kind == jsscan.String) && !key {
				add(t.Line, "A %s is refused: declare types and exported functions at the top level instead.", t.Text)
			}
		case "constructor":
			if next.Text == "(" {
				close := jsscan.Matching(toks, k+1)
				for _, p := range splitTop(toks[k+2 : close]) {
					if len(p) > 1 && p[0].Kind == jsscan.Ident && isParamModifier(p[0].Text) && (p[1].Kind == jsscan.Ident || p[1].Text == "{" || p[1].Text == "[") {
						add(p[0].Line, "A parameter property (%s %s) is refused: declare the field in the class and assign it in the constructor.", p[0].Text, p[1].Text)
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
