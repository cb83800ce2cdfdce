package module

import "strings"

// The module rules are checked on tokens of the TypeScript text, read by
// the small scanner below. It knows enough of the language to never
// mistake text for code: strings, template literals (with their ${}
// expressions scanned as code), comments and regular expression literals.
// It parses no grammar; the rules in rules.go read the tokens, and
// esbuild's and tsc's own diagnostics refuse whatever does not parse.

type tokKind int

const (
	tIdent tokKind = iota // identifiers and keywords
	tPunct
	tString
	tTemplate // a template literal, or a part of one between its ${}
	tNumber
	tRegex
)

type token struct {
	kind tokKind
	text string
	line int  // from 1, in the module text
	nl   bool // a line break comes between this token and the one before
}

// punctuators, longest first.
var puncts = []string{
	">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=",
	"=>", "==", "!=", "<=", ">=", "&&", "||", "??", "?.", "++", "--", "+=", "-=", "*=", "/=",
	"%=", "&=", "|=", "^=", "**", "<<", ">>",
}

// keywords after which a slash begins a regular expression.
var regexAfter = map[string]bool{
	"return": true, "typeof": true, "case": true, "do": true, "else": true, "in": true, "of": true,
	"new": true, "delete": true, "void": true, "throw": true, "instanceof": true, "yield": true,
	"await": true,
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isIdentPart(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

// scan reads src into tokens. It never fails: text it cannot read (an
// unclosed string, say) ends where the source does, and the compilers say
// what is wrong with it.
func scan(src string) []token {
	var toks []token
	line, nl := 1, false
	// braces holds, for each open {, whether it opened a template's ${.
	var braces []bool
	emit := func(k tokKind, text string, at int) {
		toks = append(toks, token{kind: k, text: text, line: at, nl: nl})
		nl = false
	}
	i := 0
	// template scans a template's text from i (after ` or }) to its end or
	// to its next ${.
	template := func() {
		start, at := i, line
		for i < len(src) {
			c := src[i]
			switch {
			case c == '\\':
				if i+1 < len(src) && src[i+1] == '\n' {
					line++
				}
				i += 2
				continue
			case c == '`':
				i++
				emit(tTemplate, src[start:i], at)
				return
			case c == '$' && i+1 < len(src) && src[i+1] == '{':
				i += 2
				emit(tTemplate, src[start:i], at)
				braces = append(braces, true)
				return
			case c == '\n':
				line++
			}
			i++
		}
		emit(tTemplate, src[start:], at)
	}
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\n':
			line++
			nl = true
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				end = len(src) - i - 2
			}
			body := src[i : i+2+end]
			if n := strings.Count(body, "\n"); n > 0 {
				line += n
				nl = true
			}
			i += 2 + end + 2
			if i > len(src) {
				i = len(src)
			}
		case c == '"' || c == '\'':
			start, at := i, line
			i++
			for i < len(src) && src[i] != c && src[i] != '\n' {
				if src[i] == '\\' && i+1 < len(src) {
					if src[i+1] == '\n' {
						line++
					}
					i++
				}
				i++
			}
			if i < len(src) && src[i] == c {
				i++
			}
			emit(tString, src[start:i], at)
		case c == '`':
			i++
			template()
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			start := i
			for i < len(src) && (isIdentPart(src[i]) || src[i] == '.' ||
				(src[i] == '+' || src[i] == '-') && (src[i-1] == 'e' || src[i-1] == 'E') && !strings.HasPrefix(src[start:], "0x") && !strings.HasPrefix(src[start:], "0X")) {
				i++
			}
			emit(tNumber, src[start:i], line)
		case isIdentStart(c) || c == '#' || c == '\\':
			start := i
			i++
			for i < len(src) && (isIdentPart(src[i]) || src[i] == '\\') {
				i++
			}
			emit(tIdent, src[start:i], line)
		case c == '/' && slashStartsRegex(toks):
			start := i
			i++
			inClass := false
			for i < len(src) && src[i] != '\n' {
				if src[i] == '\\' {
					i += 2
					continue
				}
				if src[i] == '[' {
					inClass = true
				} else if src[i] == ']' {
					inClass = false
				} else if src[i] == '/' && !inClass {
					i++
					break
				}
				i++
			}
			for i < len(src) && isIdentPart(src[i]) {
				i++
			}
			if i > len(src) {
				i = len(src)
			}
			emit(tRegex, src[start:i], line)
		case c == '{':
			braces = append(braces, false)
			emit(tPunct, "{", line)
			i++
		case c == '}':
			if n := len(braces); n > 0 && braces[n-1] {
				braces = braces[:n-1]
				i++
				template()
				continue
			} else if n > 0 {
				braces = braces[:n-1]
			}
			emit(tPunct, "}", line)
			i++
		default:
			p := string(c)
			for _, q := range puncts {
				if strings.HasPrefix(src[i:], q) {
					p = q
					break
				}
			}
			emit(tPunct, p, line)
			i += len(p)
		}
	}
	return toks
}

// slashStartsRegex says whether a / after toks begins a regular
// expression rather than a division.
func slashStartsRegex(toks []token) bool {
	if len(toks) == 0 {
		return true
	}
	t := toks[len(toks)-1]
	switch t.kind {
	case tNumber, tString, tRegex:
		return false
	case tTemplate:
		return strings.HasSuffix(t.text, "${")
	case tIdent:
		return regexAfter[t.text]
	}
	return t.text != ")" && t.text != "]" && t.text != "}"
}
