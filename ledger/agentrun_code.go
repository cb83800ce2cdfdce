package ledger

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// A code node's code is a single synchronous function expression. It is
// checked without running it: esbuild parses it (a syntax error is named
// at its line and column in the code); a small scanner reads its top
// level (a statement body, an async function, a generator, or anything
// beside the one function is refused); and esbuild's define, which
// replaces only the references no declaration in the code binds, finds
// the globals the executor shadows: Date, Promise, timers, Function, eval
// and the host's and network's globals. Lines and columns count from 1.

// shadowedGlobals are the names a code node may not reach: the document's
// Date, Promise, timers, host/network globals and Function, and eval.
var shadowedGlobals = []string{
	"Date", "Promise", "Function", "eval",
	"setTimeout", "setInterval", "setImmediate", "clearTimeout", "clearInterval", "clearImmediate", "queueMicrotask", "requestAnimationFrame",
	"globalThis", "window", "self", "global", "process", "require", "module", "Buffer", "Deno", "Bun", "console",
	"fetch", "XMLHttpRequest", "WebSocket", "EventSource", "navigator", "location", "document", "importScripts",
	"Request", "Response", "Headers", "AbortController", "Worker", "SharedArrayBuffer", "Atomics", "WebAssembly",
}

const shadowPrefix = "__quire_shadowed_"

var shadowDefine = func() map[string]string {
	m := map[string]string{}
	for _, g := range shadowedGlobals {
		m[g] = shadowPrefix + g
	}
	return m
}()

var shadowRE = regexp.MustCompile(shadowPrefix + `([A-Za-z]+)`)

// checkCode answers what is wrong with a code node's code, each message
// naming its line and column in the code.
func checkCode(code string) []string {
	if strings.TrimSpace(code) == "" {
		return []string{"code is a single synchronous function expression, such as (s) => ({ count: s.items.length }); it is empty."}
	}
	codeLines := strings.Count(code, "\n") + 1
	toks := scanJS(code)
	shape, notAFunction := codeShape(toks)
	if notAFunction {
		return []string{shape} // esbuild's words would be about the statement
	}
	res := api.Transform("(\n"+code+"\n)", api.TransformOptions{Loader: api.LoaderJS, LogLevel: api.LogLevelSilent, Define: shadowDefine})
	if len(res.Errors) > 0 {
		var out []string
		for _, e := range res.Errors {
			line, col := 1, 1
			if e.Location != nil {
				line, col = e.Location.Line-1, e.Location.Column+1
			}
			if line > codeLines {
				line = codeLines
				col = len(lastLine(code)) + 1
			}
			if line < 1 {
				line, col = 1, 1
			}
			out = append(out, fmt.Sprintf("line %d, column %d of the code: %s.", line, col, strings.TrimSuffix(e.Text, ".")))
		}
		return out
	}
	var out []string
	if shape != "" {
		out = append(out, shape)
	}
	seen := map[string]bool{}
	var names []string
	for _, m := range shadowRE.FindAllStringSubmatch(string(res.Code), -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			names = append(names, m[1])
		}
	}
	sort.Strings(names)
	for _, n := range names {
		line, col := 1, 1
		for i, t := range toks {
			if t.text == n && t.kind == jsIdent && (i == 0 || toks[i-1].text != "." && toks[i-1].text != "?.") {
				line, col = t.line, t.col
				break
			}
		}
		out = append(out, fmt.Sprintf("line %d, column %d of the code: %s is unavailable to a code node (the executor shadows Date, Promise, timers, Function, eval and host or network globals); use synchronous data operations such as Math, JSON, Array, Object, Map and Set.", line, col, n))
	}
	for _, t := range toks {
		if t.kind == jsIdent && t.text == "import" {
			out = append(out, fmt.Sprintf("line %d, column %d of the code: a code node imports nothing.", t.line, t.col))
			break
		}
	}
	return out
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// codeShape answers why the code is not one synchronous function
// expression, or ""; notAFunction when it does not begin as one at all.
func codeShape(toks []jsToken) (why string, notAFunction bool) {
	at := func(t jsToken) string { return fmt.Sprintf("line %d, column %d of the code: ", t.line, t.col) }
	// Parentheses around the whole function are allowed.
	for len(toks) > 2 && toks[0].text == "(" && jsMatching(toks, 0) == len(toks)-1 {
		toks = toks[1 : len(toks)-1]
	}
	if len(toks) == 0 {
		return "code is a single synchronous function expression; it holds none.", true
	}
	first := toks[0]
	if first.kind == jsIdent && first.text == "async" && len(toks) > 1 && toks[1].text != "=>" {
		return at(first) + "code is a synchronous function; an async function returns a Promise.", false
	}
	end := -1 // the index of the function's last token
	switch {
	case first.kind == jsIdent && first.text == "function":
		i := 1
		if i < len(toks) && toks[i].text == "*" {
			return at(toks[i]) + "code is a plain function; a generator is not.", false
		}
		if i < len(toks) && toks[i].kind == jsIdent {
			i++
		}
		if i < len(toks) && toks[i].text == "(" {
			i = jsMatching(toks, i) + 1
			if i < len(toks) && toks[i].text == "{" {
				end = jsMatching(toks, i)
			}
		}
	case first.kind == jsIdent && len(toks) > 1 && toks[1].text == "=>", first.text == "(" && jsMatching(toks, 0)+1 < len(toks) && toks[jsMatching(toks, 0)+1].text == "=>":
		i := 1
		if first.text == "(" {
			i = jsMatching(toks, 0) + 1
		}
		i++ // past =>
		if i < len(toks) && toks[i].text == "{" {
			end = jsMatching(toks, i)
		} else {
			end = len(toks) - 1
			depth := 0
			for k := i; k < len(toks); k++ {
				switch toks[k].text {
				case "(", "[", "{":
					depth++
				case ")", "]", "}":
					depth--
				case ",", ";":
					if depth == 0 && toks[k].kind == jsPunct {
						return at(toks[k]) + "code is a single function expression; a comma or a semicolon after its body makes it more than one.", false
					}
				}
			}
		}
	case first.text == "(" && len(toks) > 1 && (toks[1].text == "function" || toks[1].text == "async" || toks[1].text == "("):
		// A parenthesized function with something after it: a call.
		close := jsMatching(toks, 0)
		if close+1 < len(toks) {
			return at(toks[close+1]) + "code is a single function expression; nothing follows the function (not a call of it, nor another expression).", false
		}
		return "", false
	default:
		return at(first) + "code is a single synchronous function expression, such as (s) => ({ count: s.items.length }), not a bare statement body.", true
	}
	if end < 0 {
		return at(first) + "code is a single synchronous function expression, such as (s) => ({ count: s.items.length }).", false
	}
	if end < len(toks)-1 {
		if t := toks[end+1]; !(t.text == ";" && end+1 == len(toks)-1) {
			return at(t) + "code is a single function expression; nothing follows the function (not a call of it, nor another expression).", false
		}
	}
	return "", false
}

// ---- a small scanner -----------------------------------------------------

type jsKind int

const (
	jsIdent jsKind = iota
	jsPunct
	jsString
	jsNumber
	jsRegex
)

type jsToken struct {
	kind      jsKind
	text      string
	line, col int
}

var jsPuncts = []string{"...", "=>", "?.", "===", "!==", "==", "!=", "<=", ">=", "&&", "||", "??"}

// scanJS reads JavaScript into tokens, skipping comments and reading
// strings, template literals (their ${} scanned as code) and regular
// expressions as one token each. It never fails; esbuild has already
// said whether the code parses.
func scanJS(src string) []jsToken {
	var toks []jsToken
	line, col := 1, 1
	i := 0
	adv := func(n int) {
		for k := 0; k < n && i < len(src); k++ {
			if src[i] == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
			i++
		}
	}
	var braces []bool // for each open {, whether it opened a template's ${
	template := func() {
		for i < len(src) {
			switch {
			case src[i] == '\\':
				adv(2)
			case src[i] == '`':
				adv(1)
				return
			case strings.HasPrefix(src[i:], "${"):
				adv(2)
				braces = append(braces, true)
				return
			default:
				adv(1)
			}
		}
	}
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			adv(1)
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				adv(1)
			}
		case strings.HasPrefix(src[i:], "/*"):
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				adv(len(src) - i)
			} else {
				adv(j + 4)
			}
		case c == '"' || c == '\'':
			t := jsToken{kind: jsString, line: line, col: col}
			start := i
			adv(1)
			for i < len(src) && src[i] != c && src[i] != '\n' {
				if src[i] == '\\' {
					adv(1)
				}
				adv(1)
			}
			adv(1)
			t.text = src[start:min(i, len(src))]
			toks = append(toks, t)
		case c == '`':
			toks = append(toks, jsToken{kind: jsString, text: "`", line: line, col: col})
			adv(1)
			template()
		case c == '}' && len(braces) > 0 && braces[len(braces)-1]:
			braces = braces[:len(braces)-1]
			adv(1)
			template()
		case c == '/' && regexAllowed(toks):
			t := jsToken{kind: jsRegex, line: line, col: col}
			start := i
			adv(1)
			inClass := false
			for i < len(src) && src[i] != '\n' {
				if src[i] == '\\' {
					adv(2)
					continue
				}
				if src[i] == '[' {
					inClass = true
				} else if src[i] == ']' {
					inClass = false
				} else if src[i] == '/' && !inClass {
					break
				}
				adv(1)
			}
			adv(1)
			for i < len(src) && isJSIdentPart(src[i]) {
				adv(1)
			}
			t.text = src[start:min(i, len(src))]
			toks = append(toks, t)
		case isJSIdentStart(c):
			t := jsToken{kind: jsIdent, line: line, col: col}
			start := i
			for i < len(src) && isJSIdentPart(src[i]) {
				adv(1)
			}
			t.text = src[start:i]
			toks = append(toks, t)
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			t := jsToken{kind: jsNumber, line: line, col: col}
			start := i
			for i < len(src) && (isJSIdentPart(src[i]) || src[i] == '.') {
				adv(1)
			}
			t.text = src[start:i]
			toks = append(toks, t)
		default:
			t := jsToken{kind: jsPunct, line: line, col: col, text: string(c)}
			for _, p := range jsPuncts {
				if strings.HasPrefix(src[i:], p) {
					t.text = p
					break
				}
			}
			if c == '{' {
				braces = append(braces, false)
			} else if c == '}' && len(braces) > 0 {
				braces = braces[:len(braces)-1]
			}
			toks = append(toks, t)
			adv(len(t.text))
		}
	}
	return toks
}

func isJSIdentStart(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isJSIdentPart(c byte) bool { return isJSIdentStart(c) || c >= '0' && c <= '9' }

// regexAllowed says whether a / here begins a regular expression: not
// after a value (a name, a number, a string, a closing bracket).
func regexAllowed(toks []jsToken) bool {
	if len(toks) == 0 {
		return true
	}
	t := toks[len(toks)-1]
	switch t.kind {
	case jsNumber, jsString, jsRegex:
		return false
	case jsIdent:
		switch t.text {
		case "return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw", "instanceof", "yield", "await":
			return true
		}
		return false
	}
	return t.text != ")" && t.text != "]" && t.text != "}"
}

// jsMatching is the index of the bracket closing toks[i], or len(toks)-1.
func jsMatching(toks []jsToken, i int) int {
	depth := 0
	for k := i; k < len(toks); k++ {
		if toks[k].kind != jsPunct {
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
