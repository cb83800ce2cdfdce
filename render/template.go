package render

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/osteele/liquid/expressions"
	"github.com/osteele/liquid/parser"
	lrender "github.com/osteele/liquid/render"
	"github.com/osteele/liquid/tags"
)

// A template is compiled once for its text and kept (see cache): the
// scanner reads it, the checks below refuse what a page may not write, and
// the template is rewritten for osteele/liquid so that every filter and
// output reaches its render's state, then compiled.
//
// The rewrite, which never changes a line's number:
//
//	{{ E }}                      {{ (E) | __out: __st }}
//	a filter | f: a              | f: a, __st   (| f: __stc in a condition)
//	{% assign v = E %}           {% assign v = (E) | __strict: __st %}
//	{% for v in C limit: n %}    {% for v in C | __strict: __st limit: (n | __int: __st) %}{% __tick %}
//	if, elsif, else, unless,     qif, qelsif, qelse, qunless, qcase, qwhen: this package's
//	case, when                   own, which read a missing field as false
//	{% # note %}, a comment      {% __nop %}, an empty comment
//	{% liquid a \n b %}          {% a %}{% b %}

// rtag is one tag a page may write.
type rtag struct {
	block   bool
	clauses []string
}

var pageTags = map[string]rtag{
	"assign": {}, "if": {true, []string{"elsif", "else"}}, "unless": {true, []string{"elsif", "else"}},
	"case": {true, []string{"when", "else"}}, "for": {true, []string{"else"}}, "break": {}, "continue": {},
	"cycle": {}, "increment": {}, "decrement": {}, "echo": {}, "liquid": {}, "raw": {true, nil},
	"comment": {true, nil}, "#": {},
}

// refusedTags are tags Liquid has and a page does not, with the reason.
var refusedTags = map[string]string{
	"include":  "each template stands alone",
	"render":   "each template stands alone",
	"layout":   "each template stands alone",
	"block":    "each template stands alone",
	"capture":  "use assign with append",
	"tablerow": "it writes HTML, which every client shows as text; write rows with for",
	"system":   "only a reasoning function's prompt has it",
}

// analysis is what the check needs of a compiled template.
type analysis struct {
	refs    []lineRef
	filters []lineFilter
	created map[string]bool
	names   int // variables read, and names made, in tags and outputs
}

type lineRef struct {
	varRef
	line  int
	inFor bool
}

type lineFilter struct {
	filterUse
	line int
}

type compiled struct {
	root     lrender.Node
	an       analysis
	problems []problem
}

var engine = func() *lrender.Config {
	cfg := lrender.NewConfig()
	tags.AddStandardTags(cfg)
	// Liquid's include reads a file by name (os.ReadFile, any path). The
	// check refuses the tag; the engine cannot run it either, so no
	// template reads a file whatever reaches it.
	cfg.AddTag("include", func(string) (func(io.Writer, lrender.Context) error, error) {
		return nil, errors.New("the tag include is not available: each template stands alone")
	})
	cfg.AddBlock("qif").Clause("qelsif").Clause("qelse").Compiler(ifCompiler(true))
	cfg.AddBlock("qunless").Clause("qelsif").Clause("qelse").Compiler(ifCompiler(false))
	cfg.AddBlock("qcase").Clause("qwhen").Clause("qelse").Compiler(caseCompiler)
	cfg.AddTag("echo", echoTag)
	cfg.AddTag("increment", counterTag(1))
	cfg.AddTag("decrement", counterTag(-1))
	cfg.AddTag("__nop", func(string) (func(io.Writer, lrender.Context) error, error) {
		return func(io.Writer, lrender.Context) error { return nil }, nil
	})
	cfg.AddTag("__tick", func(string) (func(io.Writer, lrender.Context) error, error) {
		return func(_ io.Writer, ctx lrender.Context) error {
			if env, ok := ctx.Get("__st").(*filterEnv); ok {
				return env.st.tick()
			}
			return nil
		}, nil
	})
	for i := range filters {
		f := &filters[i]
		cfg.AddFilter(f.Name, func(in any, rest ...any) (any, error) { return f.call(in, rest) })
	}
	cfg.AddFilter("__out", outFilter)
	cfg.AddFilter("__strict", strictFilter)
	cfg.AddFilter("__int", intFilter)
	return &cfg
}()

// The cache of compiled templates, by text. Safe for concurrent use; it is
// emptied when it holds more than cacheSize templates.
const cacheSize = 4096

var (
	cacheMu sync.RWMutex
	cache   = map[string]*compiled{}
)

func compileCached(src string) *compiled {
	cacheMu.RLock()
	c, ok := cache[src]
	cacheMu.RUnlock()
	if ok {
		return c
	}
	c = compile(src)
	cacheMu.Lock()
	if len(cache) >= cacheSize {
		cache = map[string]*compiled{}
	}
	cache[src] = c
	cacheMu.Unlock()
	return c
}

type frame struct {
	name    string
	line    int
	hasElse bool
}

// compile reads, checks and compiles a template. A template with problems
// has no root.
func compile(src string) (c *compiled) {
	c = &compiled{an: analysis{created: map[string]bool{}}}
	defer func() {
		if r := recover(); r != nil {
			c.root = nil
			c.problems = append(c.problems, problem{1, fmt.Sprintf("The template does not compile: %v.", r)})
		}
	}()
	toks, p := scanTemplate(src)
	if p != nil {
		c.problems = []problem{*p}
		return c
	}
	var out strings.Builder
	var stack []frame
	for _, tok := range toks {
		switch tok.kind {
		case tText, tRaw:
			out.WriteString(tok.text)
		case tComment:
			// written as an empty comment below, its lines kept in endcomment
		case tOutput:
			out.WriteString(c.output(src, tok, stack))
		case tTag:
			if tok.name == "liquid" {
				if len(tok.sub) == 0 {
					out.WriteString(emitTag(tok, "__nop", "", newlines(src, tok)))
					continue
				}
				for i, sub := range tok.sub {
					sub.trimL = tok.trimL && i == 0
					sub.trimR = tok.trimR && i == len(tok.sub)-1
					nl := 0
					if i == len(tok.sub)-1 {
						nl = newlines(src, tok)
					}
					out.WriteString(c.tag(sub, &stack, nl))
				}
				continue
			}
			nl := newlines(src, tok)
			if tok.name == "endcomment" {
				// the comment's own lines go here, so that the lines after it keep their numbers
				nl = strings.Count(src[tok.start-len(prevText(toks, tok)):tok.end], "\n")
			}
			out.WriteString(c.tag(tok, &stack, nl))
		}
	}
	for i := len(stack) - 1; i >= 0; i-- {
		c.problem(stack[i].line, "The tag %s is never closed: it needs {%% end%s %%}.", stack[i].name, stack[i].name)
	}
	c.an.names += len(c.an.refs)
	if len(c.problems) > 0 {
		return c
	}
	root, err := engine.Compile(out.String(), parser.SourceLoc{LineNo: 1})
	if err != nil {
		c.problem(err.LineNumber(), "The template does not compile: %s.", strings.TrimSuffix(causeText(err), "."))
		return c
	}
	c.root = root
	return c
}

// prevText is the body of the comment an endcomment closes.
func prevText(toks []ttok, end ttok) string {
	for i, t := range toks {
		if t.start == end.start && i > 0 && toks[i-1].kind == tComment {
			return toks[i-1].text
		}
	}
	return ""
}

func newlines(src string, tok ttok) int { return strings.Count(src[tok.start:tok.end], "\n") }

func (c *compiled) problem(line int, format string, args ...any) {
	c.problems = append(c.problems, problem{line, fmt.Sprintf(format, args...)})
}

func emitTag(tok ttok, name, args string, nl int) string {
	var b strings.Builder
	b.WriteString("{%")
	if tok.trimL {
		b.WriteByte('-')
	}
	b.WriteByte(' ')
	b.WriteString(name)
	if args != "" {
		b.WriteByte(' ')
		b.WriteString(strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(args))
	}
	b.WriteString(strings.Repeat("\n", nl))
	b.WriteByte(' ')
	if tok.trimR {
		b.WriteByte('-')
	}
	b.WriteString("%}")
	return b.String()
}

// expression parses an expression as osteele/liquid does, then reads it
// for its variables and filters. It returns the expression with each
// filter given env.
func (c *compiled) expression(src string, line int, inFor bool, env string, what string) (string, *xparser, bool) {
	if _, err := expressions.Parse(src); err != nil {
		c.problem(line, "%s does not compile: %s.", what, strings.TrimSuffix(err.Error(), "."))
		return "", nil, false
	}
	p := parseExpr(src)
	c.read(src, line, p, inFor)
	return applyEdits(src, stateEdits(p.filters, env)), p, true
}

// read records an expression's variables and filters, and checks its
// filters' names and arguments.
func (c *compiled) read(src string, line int, p *xparser, inFor bool) {
	for _, r := range p.refs {
		c.an.refs = append(c.an.refs, lineRef{r, line + strings.Count(src[:r.pos], "\n"), inFor})
	}
	for _, f := range p.filters {
		l := line + strings.Count(src[:f.pos], "\n")
		c.an.filters = append(c.an.filters, lineFilter{f, l})
		def, ok := filterByName[f.name]
		switch {
		case !ok:
			c.problem(l, "The filter %s is not a filter a page has.", f.name)
		case f.nargs < def.Min || f.nargs > def.Max:
			c.problem(l, "The filter %s takes %s, not %d.", f.name, arity(def.Min, def.Max), f.nargs)
		}
	}
}

func (c *compiled) output(src string, tok ttok, stack []frame) string {
	e, _, ok := c.expression(tok.args, tok.argsLine, inLoop(stack), "__st", "The output {{ "+short(tok.args)+" }}")
	if !ok {
		return ""
	}
	var b strings.Builder
	b.WriteString("{{")
	if tok.trimL {
		b.WriteByte('-')
	}
	b.WriteString(" (")
	b.WriteString(strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(e))
	b.WriteString(") | __out: __st ")
	if tok.trimR {
		b.WriteByte('-')
	}
	b.WriteString("}}")
	if nl := newlines(src, tok); nl > 0 {
		b.WriteString("{% __nop" + strings.Repeat("\n", nl) + " %}")
	}
	return b.String()
}

func short(s string) string { return clip(strings.Join(strings.Fields(s), " "), 40) }

func inLoop(stack []frame) bool {
	for _, f := range stack {
		if f.name == "for" {
			return true
		}
	}
	return false
}

// tag checks one tag and writes it for osteele/liquid.
func (c *compiled) tag(tok ttok, stackp *[]frame, nl int) string {
	stack := *stackp
	top := func() *frame {
		if len(stack) == 0 {
			return nil
		}
		return &stack[len(stack)-1]
	}
	name := tok.name
	if why, ok := refusedTags[name]; ok {
		c.problem(tok.line, "The tag %s is not available: %s.", name, why)
		return ""
	}
	if strings.HasPrefix(name, "end") {
		opened := strings.TrimPrefix(name, "end")
		if _, ok := pageTags[opened]; !ok || !pageTags[opened].block {
			c.problem(tok.line, "The tag %s is not a tag a page has.", name)
			return ""
		}
		f := top()
		if f == nil || f.name != opened {
			c.problem(tok.line, "The tag %s closes no %s.", name, opened)
			return ""
		}
		*stackp = stack[:len(stack)-1]
		if opened == "raw" {
			return emitTag(tok, "endraw", "", nl)
		}
		if opened == "comment" {
			return emitTag(tok, "endcomment", "", nl)
		}
		return emitTag(tok, "end"+renamed(opened), "", nl)
	}
	if _, ok := pageTags[name]; !ok {
		if f := top(); f != nil && contains(pageTags[f.name].clauses, name) || name == "elsif" || name == "else" || name == "when" {
			return c.clause(tok, stackp, nl)
		}
		c.problem(tok.line, "The tag %s is not a tag a page has.", name)
		return ""
	}
	inFor := inLoop(stack)
	switch name {
	case "if", "unless", "case", "for", "raw", "comment":
		*stackp = append(stack, frame{name: name, line: tok.line})
	}
	switch name {
	case "raw", "comment":
		return emitTag(tok, name, "", nl)
	case "#":
		return emitTag(tok, "__nop", "", nl)
	case "break", "continue", "cycle":
		if !inFor {
			c.problem(tok.line, "The tag %s stands only inside a for.", name)
			return ""
		}
		if name == "cycle" {
			if _, err := expressions.ParseStatement(expressions.CycleStatementSelector, tok.args); err != nil {
				c.problem(tok.line, "The tag cycle does not compile: %s.", err.Error())
				return ""
			}
			return emitTag(tok, name, tok.args, nl)
		}
		if tok.args != "" {
			c.problem(tok.line, "The tag %s takes nothing after its name.", name)
		}
		return emitTag(tok, name, "", nl)
	case "increment", "decrement":
		v := tok.args
		if identAt(v, 0) != len(v) || v == "" {
			c.problem(tok.line, "The tag %s takes the name of a counter, such as {%% %s count %%}.", name, name)
			return ""
		}
		c.create(v, tok.line)
		return emitTag(tok, name, v, nl)
	case "echo":
		e, _, ok := c.expression(tok.args, tok.argsLine, inFor, "__st", "The tag echo")
		if !ok {
			return ""
		}
		return emitTag(tok, "echo", "("+e+") | __out: __st", nl)
	case "assign":
		if _, err := expressions.ParseStatement(expressions.AssignStatementSelector, tok.args); err != nil {
			c.problem(tok.line, "The tag assign does not compile: %s.", err.Error())
			return ""
		}
		eq := strings.IndexByte(tok.args, '=')
		v := strings.TrimSpace(tok.args[:eq])
		c.create(v, tok.line)
		rhs := tok.args[eq+1:]
		e, _, ok := c.expression(rhs, tok.argsLine+strings.Count(tok.args[:eq+1], "\n"), inFor, "__st", "The tag assign")
		if !ok {
			return ""
		}
		return emitTag(tok, "assign", v+" = ("+e+") | __strict: __st", nl)
	case "if", "unless", "case":
		env := "__stc"
		if name == "case" {
			env = "__st"
		}
		e, _, ok := c.expression(tok.args, tok.argsLine, inFor, env, "The tag "+name)
		if !ok {
			return ""
		}
		return emitTag(tok, renamed(name), e, nl)
	case "for":
		return c.forTag(tok, nl, inFor)
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func renamed(name string) string {
	switch name {
	case "if", "unless", "case", "elsif", "when":
		return "q" + name
	}
	return name
}

func (c *compiled) create(name string, line int) {
	if strings.HasPrefix(name, "__") {
		c.problem(line, "The name %s is not allowed: names beginning with __ are the runtime's.", name)
	}
	c.an.created[name] = true
	c.an.names++
}

// clause checks elsif, else and when.
func (c *compiled) clause(tok ttok, stackp *[]frame, nl int) string {
	stack := *stackp
	if len(stack) == 0 || !contains(pageTags[stack[len(stack)-1].name].clauses, tok.name) {
		c.problem(tok.line, "The tag %s stands only inside %s.", tok.name, map[string]string{"elsif": "if or unless", "else": "if, unless, case or for", "when": "case"}[tok.name])
		return ""
	}
	f := &stack[len(stack)-1]
	if f.hasElse {
		c.problem(tok.line, "The tag %s comes after else, which ends %s.", tok.name, f.name)
		return ""
	}
	inFor := inLoop(stack[:len(stack)-1]) || f.name == "for"
	switch tok.name {
	case "else":
		f.hasElse = true
		if f.name == "for" {
			return emitTag(tok, "else", "", nl)
		}
		return emitTag(tok, "qelse", "", nl)
	case "elsif":
		e, _, ok := c.expression(tok.args, tok.argsLine, inFor, "__stc", "The tag elsif")
		if !ok {
			return ""
		}
		return emitTag(tok, "qelsif", e, nl)
	default: // when
		if _, err := expressions.ParseStatement(expressions.WhenStatementSelector, tok.args); err != nil {
			c.problem(tok.line, "The tag when does not compile: %s.", err.Error())
			return ""
		}
		p := &xparser{toks: lexExpr(tok.args)}
		for {
			p.expr()
			if p.is(xPunct, ",") || p.is(xOp, "or") {
				p.next()
				continue
			}
			break
		}
		c.read(tok.args, tok.argsLine, p, inFor)
		return emitTag(tok, "qwhen", applyEdits(tok.args, stateEdits(p.filters, "__st")), nl)
	}
}

func (c *compiled) forTag(tok ttok, nl int, inFor bool) string {
	if _, err := expressions.ParseStatement(expressions.LoopStatementSelector, tok.args); err != nil {
		c.problem(tok.line, "The tag for does not compile: %s.", err.Error())
		return ""
	}
	p := &xparser{toks: lexExpr(tok.args)}
	v := p.next()
	p.next() // in
	p.filtered()
	collEnd := p.toks[p.i-1].end
	edits := stateEdits(p.filters, "__st")
	edits = append(edits, edit{collEnd, " | __strict: __st"})
	for p.peek().kind != xEOF {
		t := p.next()
		if t.kind == xKeyword {
			start := p.peek().start
			p.expr()
			end := p.toks[p.i-1].end
			edits = append(edits, edit{start, "("}, edit{end, " | __int: __st)"})
		}
	}
	c.create(v.text, tok.line)
	c.read(tok.args, tok.argsLine, p, inFor)
	return emitTag(tok, "for", applyEdits(tok.args, edits), nl) + "{% __tick %}"
}

// causeText is the words of a render or parse error, without the engine's
// wrapping: the filter's own problem where a filter stopped it.
func causeText(err error) string {
	for i := 0; i < 8 && err != nil; i++ {
		switch e := err.(type) {
		case *errStop:
			return e.msg
		case *limitError:
			return e.Error()
		case expressions.FilterError:
			err = e.Err
			continue
		case interface{ Cause() error }:
			if e.Cause() != nil && e.Cause() != err {
				err = e.Cause()
				continue
			}
		}
		break
	}
	if err == nil {
		return "the template stopped"
	}
	s := err.Error()
	if i := strings.Index(s, " in "); i > 0 && strings.HasPrefix(s, "Liquid error") {
		s = s[:i]
	}
	return s
}

// sortedNames lists a set's names in order, for messages.
func sortedNames(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
