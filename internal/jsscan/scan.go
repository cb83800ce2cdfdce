// Package jsscan is the one small scanner of JavaScript and TypeScript
// text that quire's checks read code with: fold/module's module rules
// (TypeScript) and the ledger's check of a code node (JavaScript).
//
// It knows enough of the language to never mistake text for code:
// strings, template literals (their ${} expressions scanned as code),
// comments and regular expression literals. It parses no grammar, and it
// never fails: text it cannot read (an unclosed string, say) ends where
// the line or the source does, and the compilers (esbuild, tsc) say what
// is wrong with it.
//
// A / begins a regular expression unless it follows a value: a name that
// is not a keyword such as return or typeof, a number, a string, a
// regular expression, a template's end, or a closing ), ] or }. That
// reads `a / b / c` as two divisions and `x = /a/g` as a regex; a } that
// closes a block before a regex (`if (a) {} /re/.test(s)`) is read as a
// division, which a check on tokens can live with.
package jsscan

import "strings"

// Kind is what a token is.
type Kind int

const (
	Ident    Kind = iota // identifiers and keywords (and #private names)
	Punct                // punctuators, longest first: "===" is one token
	String               // a '…' or "…" string, its quotes included
	Template             // a template literal, or a part of one: from ` or } to ` or ${
	Number
	Regex // a regular expression literal with its flags
)

// Token is one token of the source.
type Token struct {
	Kind Kind
	Text string
	Line int  // from 1
	Col  int  // from 1, in bytes from the line's start (as esbuild counts)
	NL   bool // a line break comes between this token and the one before
}

// puncts, longest first.
var puncts = []string{
	">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=",
	"=>", "==", "!=", "<=", ">=", "&&", "||", "??", "?.", "++", "--", "+=", "-=", "*=", "/=",
	"%=", "&=", "|=", "^=", "**", "<<", ">>",
}

// regexAfter are the keywords after which a slash begins a regular
// expression.
var regexAfter = map[string]bool{
	"return": true, "typeof": true, "case": true, "do": true, "else": true, "in": true, "of": true,
	"new": true, "delete": true, "void": true, "throw": true, "instanceof": true, "yield": true,
	"await": true,
}

// isIdentStart says whether c may begin a name (any byte of a UTF-8
// sequence counts as a letter).
func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// isIdentPart says whether c may stand in a name after its first byte.
func isIdentPart(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

// Scan reads src into tokens, skipping white space and comments.
func Scan(src string) []Token {
	var toks []Token
	// Lines and columns are counted lazily up to each token's start, which
	// only moves forward.
	line, lineStart, counted := 1, 0, 0
	prevEnd := 0
	emit := func(k Kind, start, end int) {
		for ; counted < start; counted++ {
			if src[counted] == '\n' {
				line, lineStart = line+1, counted+1
			}
		}
		nl := len(toks) > 0 && strings.IndexByte(src[prevEnd:start], '\n') >= 0
		toks = append(toks, Token{Kind: k, Text: src[start:end], Line: line, Col: start - lineStart + 1, NL: nl})
		prevEnd = end
	}
	// braces holds, for each open {, whether it opened a template's ${.
	var braces []bool
	i := 0
	// template scans a template's text from start (its ` or }) with i
	// past that byte, to its end or to its next ${.
	template := func(start int) {
		for i < len(src) {
			switch c := src[i]; {
			case c == '\\':
				i += 2
				continue
			case c == '`':
				i++
				emit(Template, start, i)
				return
			case c == '$' && i+1 < len(src) && src[i+1] == '{':
				i += 2
				emit(Template, start, i)
				braces = append(braces, true)
				return
			}
			i++
		}
		emit(Template, start, len(src))
	}
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v':
			i++
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			if end := strings.Index(src[i+2:], "*/"); end >= 0 {
				i += 2 + end + 2
			} else {
				i = len(src)
			}
		case c == '"' || c == '\'':
			start := i
			i++
			for i < len(src) && src[i] != c && src[i] != '\n' {
				if src[i] == '\\' && i+1 < len(src) {
					i++
				}
				i++
			}
			if i < len(src) && src[i] == c {
				i++
			}
			emit(String, start, i)
		case c == '`':
			i++
			template(i - 1)
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			start := i
			hex := strings.HasPrefix(src[i:], "0x") || strings.HasPrefix(src[i:], "0X")
			for i < len(src) && (isIdentPart(src[i]) || src[i] == '.' ||
				(src[i] == '+' || src[i] == '-') && (src[i-1] == 'e' || src[i-1] == 'E') && !hex) {
				i++
			}
			emit(Number, start, i)
		case isIdentStart(c) || c == '#' || c == '\\':
			start := i
			i++
			for i < len(src) && (isIdentPart(src[i]) || src[i] == '\\') {
				i++
			}
			emit(Ident, start, i)
		case c == '/' && slashStartsRegex(toks):
			start := i
			i++
			inClass := false
		body:
			for i < len(src) && src[i] != '\n' {
				switch src[i] {
				case '\\':
					i++
				case '[':
					inClass = true
				case ']':
					inClass = false
				case '/':
					if !inClass {
						i++
						break body
					}
				}
				i++
			}
			i = min(i, len(src))
			for i < len(src) && isIdentPart(src[i]) {
				i++
			}
			emit(Regex, start, i)
		case c == '}' && len(braces) > 0 && braces[len(braces)-1]:
			braces = braces[:len(braces)-1]
			i++
			template(i - 1)
		default:
			p := string(c)
			for _, q := range puncts {
				if strings.HasPrefix(src[i:], q) {
					p = q
					break
				}
			}
			if c == '{' {
				braces = append(braces, false)
			} else if c == '}' && len(braces) > 0 {
				braces = braces[:len(braces)-1]
			}
			emit(Punct, i, i+len(p))
			i += len(p)
		}
	}
	return toks
}

// slashStartsRegex says whether a / after toks begins a regular
// expression rather than a division.
func slashStartsRegex(toks []Token) bool {
	if len(toks) == 0 {
		return true
	}
	t := toks[len(toks)-1]
	switch t.Kind {
	case Number, String, Regex:
		return false
	case Template:
		return strings.HasSuffix(t.Text, "${")
	case Ident:
		return regexAfter[t.Text]
	}
	return t.Text != ")" && t.Text != "]" && t.Text != "}"
}

// Matching is the index of the bracket that pairs with the one at
// toks[i]: forward to the ), ] or } that closes a (, [ or {, and back to
// the opening one from a closing one. When none does, it is the last
// index going forward and 0 going back. A template's ${ and } are not
// brackets here (they belong to its Template tokens).
func Matching(toks []Token, i int) int {
	dir, last := 1, len(toks)-1
	if t := toks[i]; t.Kind == Punct && (t.Text == ")" || t.Text == "]" || t.Text == "}") {
		dir, last = -1, 0
	}
	depth := 0
	for k := i; k >= 0 && k < len(toks); k += dir {
		t := toks[k]
		if t.Kind != Punct || len(t.Text) != 1 {
			continue
		}
		switch b := strings.IndexByte("([{)]}", t.Text[0]); {
		case b < 0:
		case b < 3 == (dir > 0): // one that opens, in the direction read
			depth++
		default:
			depth--
			if depth == 0 {
				return k
			}
		}
	}
	return last
}
