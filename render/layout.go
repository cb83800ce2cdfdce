package render

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// The layout of rendered Markdown: its rows, read line by line as
// page-format.md sets out ("Rows"), and its chart blocks, found on
// goldmark's block tree at the top level of the Markdown around the rows
// and of each cell.

var markdown = goldmark.New(goldmark.WithExtensions(extension.Table))

const rowFails = "This row could not be laid out: "

// segment is a run of Markdown across the page, or a row.
type segment struct {
	lines []string // Markdown across the page
	row   *row
}

type row struct {
	open, close string     // its ::: row and ::: lines as written
	seps        []string   // its --- lines as written
	cells       [][]string // the lines of each cell
	unclosed    bool
	nested      bool
}

func isRowOpen(l string) bool {
	s := strings.TrimRight(l, " \t")
	return s == "::: row" || s == ":::row"
}
func isRowClose(l string) bool { return strings.TrimRight(l, " \t") == ":::" }
func isCellSep(l string) bool  { return strings.TrimRight(l, " \t") == "---" }

// fence tracks fenced code blocks line by line.
type fence struct {
	char byte
	n    int
}

// step reads one line; it tells whether the line is inside a fenced block
// (its opening and closing lines included).
func (f *fence) step(l string) bool {
	s := l
	indent := 0
	for indent < len(s) && indent < 4 && s[indent] == ' ' {
		indent++
	}
	s = s[indent:]
	run := func(c byte) int {
		n := 0
		for n < len(s) && s[n] == c {
			n++
		}
		return n
	}
	if f.n > 0 {
		if indent < 4 && len(s) > 0 && s[0] == f.char {
			if n := run(f.char); n >= f.n && strings.TrimSpace(s[n:]) == "" {
				f.n = 0
			}
		}
		return true
	}
	if indent < 4 && len(s) > 0 && (s[0] == '`' || s[0] == '~') {
		if n := run(s[0]); n >= 3 && !(s[0] == '`' && strings.Contains(s[n:], "`")) {
			f.char, f.n = s[0], n
			return true
		}
	}
	return false
}

// segments reads Markdown into its runs across the page and its rows.
func segments(md string) []segment {
	lines := strings.Split(md, "\n")
	var out []segment
	var cur []string
	var f fence
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if f.step(l) || !isRowOpen(l) {
			cur = append(cur, l)
			continue
		}
		if cur != nil {
			out = append(out, segment{lines: cur})
			cur = nil
		}
		r := &row{open: l}
		cell := []string{}
		depth := 0
		var cf fence
		i++
		for ; i < len(lines); i++ {
			l := lines[i]
			if cf.step(l) {
				cell = append(cell, l)
				continue
			}
			switch {
			case isRowOpen(l):
				r.nested = true
				depth++
				cell = append(cell, l)
				continue
			case isRowClose(l) && depth > 0:
				depth--
				cell = append(cell, l)
				continue
			case isRowClose(l):
				r.close = l
			case isCellSep(l) && depth == 0:
				r.cells = append(r.cells, cell)
				r.seps = append(r.seps, l)
				cell = []string{}
				continue
			default:
				cell = append(cell, l)
				continue
			}
			break
		}
		r.cells = append(r.cells, cell)
		r.unclosed = i >= len(lines)
		out = append(out, segment{row: r})
	}
	if cur != nil {
		out = append(out, segment{lines: cur})
	}
	return out
}

func (r *row) problem() string {
	switch {
	case r.unclosed:
		return rowFails + "it is not closed by a line of :::."
	case r.nested:
		return rowFails + "it holds another row, and rows do not nest."
	case len(r.cells) == 1:
		return rowFails + "it holds 1 cell, and a row holds at least 2."
	case len(r.cells) > 4:
		return rowFails + fmt.Sprintf("it holds %d cells, and a row holds at most 4.", len(r.cells))
	}
	return ""
}

// Layout lays rendered Markdown out: each chart block is checked and stays
// as it is where it draws (format "markdown") or becomes its data's table
// (format "text"); one that fails becomes the line that says why and its
// data; each row is checked, and one that breaks a rule becomes the line
// that says why and its cells one after another.
func Layout(md, format string) string {
	if !strings.Contains(md, "```") && !strings.Contains(md, "~~~") && !strings.Contains(md, ":::") {
		return md
	}
	var parts []string
	var apart []bool // a broken row stands apart, after and before a blank line
	for _, s := range segments(md) {
		apart = append(apart, false)
		if s.row == nil {
			parts = append(parts, drawCharts(strings.Join(s.lines, "\n"), format))
			continue
		}
		r := s.row
		cells := make([]string, len(r.cells))
		for i, c := range r.cells {
			cells[i] = drawCharts(strings.Join(c, "\n"), format)
		}
		if why := r.problem(); why != "" {
			var kept []string
			for _, c := range cells {
				c = strings.Trim(c, "\n")
				if strings.TrimSpace(c) != "" {
					kept = append(kept, strings.Trim(withoutRowLines(c), "\n"))
				}
			}
			parts = append(parts, joinBlocks(append([]string{why}, kept...)))
			apart[len(apart)-1] = true
			continue
		}
		var b strings.Builder
		b.WriteString(r.open)
		for i, c := range cells {
			if i > 0 {
				b.WriteString("\n" + r.seps[i-1])
			}
			b.WriteString("\n" + c)
		}
		b.WriteString("\n" + r.close)
		parts = append(parts, b.String())
	}
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('\n')
			prev := parts[i-1]
			if (apart[i] || apart[i-1]) && !strings.HasSuffix(prev, "\n") && prev != "" && !strings.HasPrefix(p, "\n") && p != "" {
				b.WriteByte('\n')
			}
		}
		b.WriteString(p)
	}
	return b.String()
}

// withoutRowLines drops the ::: row, --- and ::: lines of a row nested in
// a broken one.
func withoutRowLines(s string) string {
	if !strings.Contains(s, ":::") {
		return s
	}
	var out []string
	var f fence
	for _, l := range strings.Split(s, "\n") {
		if !f.step(l) && (isRowOpen(l) || isRowClose(l) || isCellSep(l)) {
			if len(out) > 0 && out[len(out)-1] != "" {
				out = append(out, "")
			}
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// joinBlocks writes blocks apart, each after a blank line.
func joinBlocks(blocks []string) string { return strings.Join(blocks, "\n\n") }

// topFences finds the top-level fenced code blocks of Markdown, each as
// its first and last line (the closing fence, or the last line where the
// block is never closed) and its info string.
type fenced struct {
	first, last int
	info, body  string
	node        *ast.FencedCodeBlock
}

func topFences(src []byte, lines []string) []fenced {
	doc := markdown.Parser().Parse(text.NewReader(src))
	var out []fenced
	starts := lineStarts(src)
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		fb, ok := n.(*ast.FencedCodeBlock)
		if !ok || fb.Info == nil {
			continue
		}
		info := string(fb.Info.Segment.Value(src))
		first := lineOf(starts, fb.Info.Segment.Start)
		var body strings.Builder
		last := first
		segs := fb.Lines()
		for i := 0; i < segs.Len(); i++ {
			seg := segs.At(i)
			body.Write(seg.Value(src))
			last = lineOf(starts, seg.Start)
		}
		// the closing fence, where there is one
		var f fence
		f.step(lines[first])
		for j := last + 1; j < len(lines); j++ {
			if f.step(lines[j]); f.n == 0 {
				last = j
				break
			}
			if j == len(lines)-1 {
				last = j
			}
		}
		if last == first && first+1 < len(lines) && segs.Len() == 0 {
			// an empty body: the next line closes it, or the block runs on
		}
		out = append(out, fenced{first: first, last: last, info: info, body: body.String(), node: fb})
	}
	return out
}

func lineStarts(src []byte) []int {
	starts := []int{0}
	for i, c := range src {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

func lineOf(starts []int, off int) int {
	lo, hi := 0, len(starts)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if starts[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

func isChartInfo(info string) bool {
	w := strings.Fields(info)
	return len(w) > 0 && w[0] == "chart"
}

// drawCharts checks and writes the top-level chart blocks of Markdown.
func drawCharts(md, format string) string {
	if !strings.Contains(md, "chart") {
		return md
	}
	lines := strings.Split(md, "\n")
	fs := topFences([]byte(md), lines)
	var out []string
	next := 0
	for _, f := range fs {
		if !isChartInfo(f.info) {
			continue
		}
		d := checkChart(f.info, f.body)
		original := strings.Join(lines[f.first:f.last+1], "\n")
		repl := chartText(d, f.info, f.body, original, format)
		out = append(out, lines[next:f.first]...)
		if repl != original {
			if len(out) > 0 && strings.TrimSpace(out[len(out)-1]) != "" {
				out = append(out, "")
			}
			out = append(out, strings.Split(repl, "\n")...)
			if f.last+1 < len(lines) && strings.TrimSpace(lines[f.last+1]) != "" {
				out = append(out, "")
			}
		} else {
			out = append(out, lines[f.first:f.last+1]...)
		}
		next = f.last + 1
	}
	out = append(out, lines[next:]...)
	return strings.Join(out, "\n")
}

// Block is one top-level block of a rendered result, as addresses count
// them: <playbook>/runs/<run_id>/result/<N>. A row is one block whose
// cells are result-<N>-<m>; a figure chart block's tiles are its cells.
type Block struct {
	N     int    // from 1
	Kind  string // heading, paragraph, list, quote, table, chart, code, html or row
	Text  string // the block's Markdown
	Cells int    // a row's cells, a figure block's tiles; 0 for others
	// CellText is the Markdown of each cell of a row, in order (nil for
	// other blocks): what a client that lays rows out draws in each.
	CellText []string
}

// Blocks counts the top-level blocks of a rendered result, as Result
// returns it: headings, paragraphs, lists, quotes, tables, chart blocks
// and other fenced or indented code, and rows. A rule is not counted.
func Blocks(md string) []Block {
	var out []Block
	add := func(b Block) {
		b.N = len(out) + 1
		out = append(out, b)
	}
	for _, s := range segments(md) {
		if s.row != nil && s.row.problem() == "" {
			var b strings.Builder
			b.WriteString(s.row.open)
			for i, c := range s.row.cells {
				if i > 0 {
					b.WriteString("\n" + s.row.seps[i-1])
				}
				b.WriteString("\n" + strings.Join(c, "\n"))
			}
			b.WriteString("\n" + s.row.close)
			cells := make([]string, len(s.row.cells))
			for i, c := range s.row.cells {
				cells[i] = strings.Trim(strings.Join(c, "\n"), "\n")
			}
			add(Block{Kind: "row", Text: b.String(), Cells: len(s.row.cells), CellText: cells})
			continue
		}
		var src string
		if s.row != nil {
			var cells []string
			for _, c := range s.row.cells {
				cells = append(cells, strings.Join(c, "\n"))
			}
			src = strings.Join(cells, "\n\n")
		} else {
			src = strings.Join(s.lines, "\n")
		}
		for _, b := range topBlocks(src) {
			add(b)
		}
	}
	return out
}

func topBlocks(md string) []Block {
	src := []byte(md)
	lines := strings.Split(md, "\n")
	starts := lineStarts(src)
	doc := markdown.Parser().Parse(text.NewReader(src))
	var out []Block
	nodes := []ast.Node{}
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		nodes = append(nodes, n)
	}
	// each block runs from its first line to the line before the next block
	firstLine := func(n ast.Node) int {
		if fb, ok := n.(*ast.FencedCodeBlock); ok && fb.Info != nil {
			return lineOf(starts, fb.Info.Segment.Start)
		}
		if fb, ok := n.(*ast.FencedCodeBlock); ok {
			if fb.Lines().Len() > 0 {
				return lineOf(starts, fb.Lines().At(0).Start) - 1
			}
		}
		if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 {
			l := lineOf(starts, n.Lines().At(0).Start)
			if h, ok := n.(*ast.Heading); ok && h.Level > 0 && l > 0 && !strings.HasPrefix(strings.TrimSpace(lines[l]), "#") {
				return l // a setext heading starts at its text
			}
			return l
		}
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			if c.Lines().Len() > 0 || c.HasChildren() {
				return firstLineDeep(c, starts)
			}
		}
		return -1
	}
	for i, n := range nodes {
		b := Block{}
		switch v := n.(type) {
		case *ast.ThematicBreak:
			continue
		case *ast.Heading:
			b.Kind = "heading"
		case *ast.Paragraph, *ast.TextBlock:
			b.Kind = "paragraph"
		case *ast.List:
			b.Kind = "list"
		case *ast.Blockquote:
			b.Kind = "quote"
		case *extast.Table:
			b.Kind = "table"
		case *ast.FencedCodeBlock:
			b.Kind = "code"
			if v.Info != nil && isChartInfo(string(v.Info.Segment.Value(src))) {
				b.Kind = "chart"
				var body strings.Builder
				for j := 0; j < v.Lines().Len(); j++ {
					seg := v.Lines().At(j)
					body.Write(seg.Value(src))
				}
				if d := checkChart(string(v.Info.Segment.Value(src)), body.String()); d.ok && kindOf2(string(v.Info.Segment.Value(src))) == "figure" {
					b.Cells = d.count
				}
			}
		case *ast.CodeBlock:
			b.Kind = "code"
		case *ast.HTMLBlock:
			b.Kind = "html"
		default:
			b.Kind = "paragraph"
		}
		from := firstLine(n)
		to := len(lines)
		for j := i + 1; j < len(nodes); j++ {
			if l := firstLine(nodes[j]); l >= 0 {
				to = l
				break
			}
		}
		if from >= 0 && from < to {
			block := lines[from:to]
			for len(block) > 0 && (strings.TrimSpace(block[len(block)-1]) == "" || isRule(block[len(block)-1])) {
				block = block[:len(block)-1]
			}
			b.Text = strings.Join(block, "\n")
		}
		out = append(out, b)
	}
	return out
}

func firstLineDeep(n ast.Node, starts []int) int {
	if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 {
		return lineOf(starts, n.Lines().At(0).Start)
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if l := firstLineDeep(c, starts); l >= 0 {
			return l
		}
	}
	return -1
}

func kindOf2(info string) string {
	w := strings.Fields(info)
	if len(w) < 2 {
		return ""
	}
	return w[1]
}

var ruleLine = regexp.MustCompile(`^ {0,3}((\* *){3,}|(- *){3,}|(_ *){3,})$`)

func isRule(l string) bool { return ruleLine.MatchString(l) }
