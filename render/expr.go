package render

import "strings"

// A small reading of Liquid's expressions, the same tokens osteele/liquid's
// lexer makes. It serves the save-time check (the variables, views and
// filters an expression names) and the rewrite that hands each filter its
// render. osteele/liquid parses every expression first, so this reader only
// meets expressions that compile.

type xkind int

const (
	xEOF xkind = iota
	xLit
	xIdent
	xKeyword // identifier followed at once by ':', as in clip: 80
	xProp    // .name
	xOp      // == != >= <= < > and or contains
	xIn
	xDotDot
	xPunct // | , [ ] ( ) = and any other single character
)

type xtok struct {
	kind       xkind
	text       string // for xIdent, xKeyword, xProp: the name; for xLit of text, its content
	start, end int    // byte offsets in the expression
	isString   bool
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isIdentChar(c byte) bool {
	return isAlpha(c) || isDigit(c) || c == '_' || c == '-'
}

// identAt returns the end of an identifier starting at i, or i.
func identAt(s string, i int) int {
	if i >= len(s) || !(isAlpha(s[i]) || s[i] == '_') {
		return i
	}
	j := i + 1
	for j < len(s) && isIdentChar(s[j]) {
		j++
	}
	if j < len(s) && s[j] == '?' {
		j++
	}
	return j
}

func lexExpr(s string) []xtok {
	var toks []xtok
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == '"' || c == '\'':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				toks = append(toks, xtok{kind: xPunct, text: s[i : i+1], start: i, end: i + 1})
				i++
				continue
			}
			toks = append(toks, xtok{kind: xLit, text: s[i+1 : i+1+j], start: i, end: i + 2 + j, isString: true})
			i += j + 2
			continue
		case isDigit(c) || c == '-' && i+1 < len(s) && isDigit(s[i+1]):
			j := i + 1
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			if j+1 < len(s) && s[j] == '.' && isDigit(s[j+1]) {
				j += 2
				for j < len(s) && isDigit(s[j]) {
					j++
				}
			}
			toks = append(toks, xtok{kind: xLit, text: s[i:j], start: i, end: j})
			i = j
			continue
		case c == '.' && i+1 < len(s) && s[i+1] == '.':
			toks = append(toks, xtok{kind: xDotDot, text: "..", start: i, end: i + 2})
			i += 2
			continue
		case c == '.' && identAt(s, i+1) > i+1:
			j := identAt(s, i+1)
			toks = append(toks, xtok{kind: xProp, text: s[i+1 : j], start: i, end: j})
			i = j
			continue
		case isAlpha(c) || c == '_':
			j := identAt(s, i)
			word := s[i:j]
			if j < len(s) && s[j] == ':' {
				toks = append(toks, xtok{kind: xKeyword, text: word, start: i, end: j + 1})
				i = j + 1
				continue
			}
			switch word {
			case "true", "false", "nil":
				toks = append(toks, xtok{kind: xLit, text: word, start: i, end: j})
			case "and", "or", "contains":
				toks = append(toks, xtok{kind: xOp, text: word, start: i, end: j})
			case "in":
				toks = append(toks, xtok{kind: xIn, text: word, start: i, end: j})
			default:
				toks = append(toks, xtok{kind: xIdent, text: word, start: i, end: j})
			}
			i = j
			continue
		case i+1 < len(s) && (s[i:i+2] == "==" || s[i:i+2] == "!=" || s[i:i+2] == ">=" || s[i:i+2] == "<="):
			toks = append(toks, xtok{kind: xOp, text: s[i : i+2], start: i, end: i + 2})
			i += 2
			continue
		case c == '<' || c == '>':
			toks = append(toks, xtok{kind: xOp, text: s[i : i+1], start: i, end: i + 1})
		default:
			toks = append(toks, xtok{kind: xPunct, text: s[i : i+1], start: i, end: i + 1})
		}
		i++
	}
	return append(toks, xtok{kind: xEOF, start: len(s), end: len(s)})
}

// varRef is one variable an expression reads: its root name and, where
// written out, the field it reads of the root.
type varRef struct {
	root    string
	field   string // the first field, as .name or ["name"]; "" for none
	dynamic bool   // the root is indexed by a value, as views[name]
	pos     int    // offset in the expression
}

// filterUse is one filter an expression applies.
type filterUse struct {
	name  string
	nargs int
	pos   int // offset of its name
	end   int // offset after its last argument (or its name)
}

// edit inserts text at an offset of an expression.
type edit struct {
	at   int
	text string
}

// xparser reads one expression's tokens.
type xparser struct {
	toks    []xtok
	i       int
	refs    []varRef
	filters []filterUse
	bad     bool
}

func (p *xparser) peek() xtok { return p.toks[p.i] }
func (p *xparser) next() xtok {
	t := p.toks[p.i]
	if t.kind != xEOF {
		p.i++
	}
	return t
}
func (p *xparser) is(kind xkind, text string) bool {
	t := p.peek()
	return t.kind == kind && (text == "" || t.text == text)
}

// cond: rel (and|or rel)*
func (p *xparser) cond() {
	p.rel()
	for p.is(xOp, "and") || p.is(xOp, "or") {
		p.next()
		p.rel()
	}
}

// rel: filtered, or expr op expr
func (p *xparser) rel() {
	p.filtered()
	if t := p.peek(); t.kind == xOp && t.text != "and" && t.text != "or" {
		p.next()
		p.expr()
	}
}

func (p *xparser) filtered() {
	p.expr()
	for p.is(xPunct, "|") {
		p.next()
		t := p.next()
		switch t.kind {
		case xIdent:
			p.filters = append(p.filters, filterUse{name: t.text, pos: t.start, end: t.end})
		case xKeyword:
			f := filterUse{name: t.text, pos: t.start}
			p.expr()
			f.nargs = 1
			for p.is(xPunct, ",") {
				p.next()
				p.expr()
				f.nargs++
			}
			f.end = p.toks[p.i-1].end
			p.filters = append(p.filters, f)
		default:
			p.bad = true
			return
		}
	}
}

// expr: primary (.name | [cond])*
func (p *xparser) expr() {
	t := p.next()
	var ref *varRef
	switch {
	case t.kind == xLit:
	case t.kind == xIdent:
		p.refs = append(p.refs, varRef{root: t.text, pos: t.start})
		ref = &p.refs[len(p.refs)-1]
	case t.kind == xPunct && t.text == "(":
		p.cond()
		if p.is(xDotDot, "") {
			p.next()
			p.cond()
		}
		if !p.is(xPunct, ")") {
			p.bad = true
			return
		}
		p.next()
	default:
		p.bad = true
		return
	}
	first := true
	for {
		switch {
		case p.is(xProp, ""):
			pt := p.next()
			if first && ref != nil {
				ref.field = pt.text
			}
		case p.is(xPunct, "["):
			p.next()
			if first && ref != nil {
				if lit := p.peek(); lit.kind == xLit && lit.isString && p.toks[p.i+1].kind == xPunct && p.toks[p.i+1].text == "]" {
					ref.field = lit.text
				} else {
					ref.dynamic = true
				}
			}
			n := len(p.refs)
			p.cond()
			if ref != nil && n > 0 {
				ref = &p.refs[n-1] // the slice may have grown
			}
			if !p.is(xPunct, "]") {
				p.bad = true
				return
			}
			p.next()
		default:
			return
		}
		first = false
	}
}

// parseExpr reads a whole expression (a cond).
func parseExpr(s string) *xparser {
	p := &xparser{toks: lexExpr(s)}
	p.cond()
	if p.peek().kind != xEOF {
		p.bad = true
	}
	return p
}

// stateEdits hands every filter of an expression its render: the argument
// env (__st, or __stc in a condition) is added after its last argument.
func stateEdits(fs []filterUse, env string) []edit {
	var out []edit
	for _, f := range fs {
		if f.nargs == 0 {
			out = append(out, edit{f.end, ": " + env})
		} else {
			out = append(out, edit{f.end, ", " + env})
		}
	}
	return out
}

// applyEdits inserts the edits (in any order) into s.
func applyEdits(s string, edits []edit) string {
	if len(edits) == 0 {
		return s
	}
	// stable insertion sort by offset; ties keep their order
	sorted := append([]edit(nil), edits...)
	for i := 1; i < len(sorted); i++ {
		for j := i; j > 0 && sorted[j].at < sorted[j-1].at; j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	var b strings.Builder
	last := 0
	for _, e := range sorted {
		b.WriteString(s[last:e.at])
		b.WriteString(e.text)
		last = e.at
	}
	b.WriteString(s[last:])
	return b.String()
}
