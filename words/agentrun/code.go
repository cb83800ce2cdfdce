package agentrun

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/evanw/esbuild/pkg/api"

	"quire/internal/jsscan"
)

// A code node's code is a single synchronous function expression. It is
// checked without running it: esbuild parses it (a syntax error is named
// at its line and column in the code); the small scanner fold/module
// shares (internal/jsscan) reads its top level (a statement body, an
// async function, a generator, or anything beside the one function is
// refused); and esbuild's define, which
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

// Shadowed are the globals the executor shadows, which a code node may not
// reach: Date, Promise, timers, Function, eval and the host's and
// network's globals. A sandbox that runs a code node binds each to
// undefined, but for eval, which cannot be bound (quire's sandbox has
// none).
func Shadowed() []string { return slices.Clone(shadowedGlobals) }

// CheckCode answers what is wrong with a code node's code, without running
// it: each message names its line and column in the code. It answers
// nothing for one synchronous function expression that reaches no
// shadowed global and imports nothing.
func CheckCode(code string) []string {
	if strings.TrimSpace(code) == "" {
		return []string{"code is a single synchronous function expression, such as (s) => ({ count: s.items.length }); it is empty."}
	}
	codeLines := strings.Count(code, "\n") + 1
	toks := jsscan.Scan(code)
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
			if t.Text == n && t.Kind == jsscan.Ident && (i == 0 || toks[i-1].Text != "." && toks[i-1].Text != "?.") {
				line, col = t.Line, t.Col
				break
			}
		}
		out = append(out, fmt.Sprintf("line %d, column %d of the code: %s is unavailable to a code node (the executor shadows Date, Promise, timers, Function, eval and host or network globals); use synchronous data operations such as Math, JSON, Array, Object, Map and Set.", line, col, n))
	}
	for _, t := range toks {
		if t.Kind == jsscan.Ident && t.Text == "import" {
			out = append(out, fmt.Sprintf("line %d, column %d of the code: a code node imports nothing.", t.Line, t.Col))
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
func codeShape(toks []jsscan.Token) (why string, notAFunction bool) {
	at := func(t jsscan.Token) string { return fmt.Sprintf("line %d, column %d of the code: ", t.Line, t.Col) }
	// Parentheses around the whole function are allowed.
	for len(toks) > 2 && toks[0].Text == "(" && jsscan.Matching(toks, 0) == len(toks)-1 {
		toks = toks[1 : len(toks)-1]
	}
	if len(toks) == 0 {
		return "code is a single synchronous function expression; it holds none.", true
	}
	first := toks[0]
	if first.Kind == jsscan.Ident && first.Text == "async" && len(toks) > 1 && toks[1].Text != "=>" {
		return at(first) + "code is a synchronous function; an async function returns a Promise.", false
	}
	end := -1 // the index of the function's last token
	switch {
	case first.Kind == jsscan.Ident && first.Text == "function":
		i := 1
		if i < len(toks) && toks[i].Text == "*" {
			return at(toks[i]) + "code is a plain function; a generator is not.", false
		}
		if i < len(toks) && toks[i].Kind == jsscan.Ident {
			i++
		}
		if i < len(toks) && toks[i].Text == "(" {
			i = jsscan.Matching(toks, i) + 1
			if i < len(toks) && toks[i].Text == "{" {
				end = jsscan.Matching(toks, i)
			}
		}
	case first.Kind == jsscan.Ident && len(toks) > 1 && toks[1].Text == "=>", first.Text == "(" && jsscan.Matching(toks, 0)+1 < len(toks) && toks[jsscan.Matching(toks, 0)+1].Text == "=>":
		i := 1
		if first.Text == "(" {
			i = jsscan.Matching(toks, 0) + 1
		}
		i++ // past =>
		if i < len(toks) && toks[i].Text == "{" {
			end = jsscan.Matching(toks, i)
		} else {
			end = len(toks) - 1
			depth := 0
			for k := i; k < len(toks); k++ {
				switch toks[k].Text {
				case "(", "[", "{":
					depth++
				case ")", "]", "}":
					depth--
				case ",", ";":
					if depth == 0 && toks[k].Kind == jsscan.Punct {
						return at(toks[k]) + "code is a single function expression; a comma or a semicolon after its body makes it more than one.", false
					}
				}
			}
		}
	case first.Text == "(" && len(toks) > 1 && (toks[1].Text == "function" || toks[1].Text == "async" || toks[1].Text == "("):
		// A parenthesized function with something after it: a call.
		close := jsscan.Matching(toks, 0)
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
		if t := toks[end+1]; !(t.Text == ";" && end+1 == len(toks)-1) {
			return at(t) + "code is a single function expression; nothing follows the function (not a call of it, nor another expression).", false
		}
	}
	return "", false
}
