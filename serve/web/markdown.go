package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"net/url"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	ghtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"quire/render"
)

// A page's Markdown becomes HTML under the page format's "Markdown, not
// HTML": goldmark parses it (GFM tables and strikethrough), and this
// file's renderers replace goldmark's for what could add markup or load
// something: raw HTML is written as text, a link is a link only for
// https:, http: and mailto: (any other, a relative one included, is its
// text), an image is a link to it (never an <img>), and a chart block that
// draws becomes the figure of package assets' contract, its data's table
// folded under it. Everything else is goldmark's own HTML, which escapes
// every text it writes.

var parser = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough)).Parser()

// mdState is what one page's rendering shares: the figures' ids, and the
// address of the block or cell being written (a figure carries it).
type mdState struct {
	figures int
	addr    string
	cells   []string // the addresses of a figure's tiles, for the block being written
	r       renderer.Renderer
}

// toHTML renders Markdown as safe HTML.
func (st *mdState) toHTML(md string) template.HTML {
	src := []byte(md)
	return st.render(src, parser.Parse(text.NewReader(src)))
}

// inSection renders Markdown a page draws under a section's own heading
// of level, such as a run's thread.md or context.md: its headings go below
// the section's (under an h2, an h1 as an h3), so none is drawn larger
// than the section; and a first heading that only names the file (own says which,
// such as thread.md's "Thread of run <id>") is left out, as the section's
// heading says it, and a run's id is kept off the page.
func (st *mdState) inSection(md string, level int, own func(title string) bool) template.HTML {
	src := []byte(md)
	doc := parser.Parse(text.NewReader(src))
	if h, ok := doc.FirstChild().(*ast.Heading); ok && h.Level == 1 && own(plainText(h, src)) {
		doc.RemoveChild(doc, h)
	}
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if h, ok := n.(*ast.Heading); ok && entering {
			h.Level = min(h.Level+level, 6)
		}
		return ast.WalkContinue, nil
	})
	return st.render(src, doc)
}

// inline renders one line of Markdown as safe inline HTML, for a heading
// the page draws itself: its text and emphasis, links and code, in no
// paragraph of its own.
func (st *mdState) inline(line string) template.HTML {
	out := string(st.toHTML(line))
	if inner, ok := strings.CutPrefix(strings.TrimSpace(out), "<p>"); ok {
		if inner, ok := strings.CutSuffix(inner, "</p>"); ok {
			return template.HTML(inner)
		}
	}
	return template.HTML(html.EscapeString(line))
}

// render writes a parsed document as safe HTML.
func (st *mdState) render(src []byte, doc ast.Node) template.HTML {
	if st.r == nil {
		st.r = renderer.NewRenderer(renderer.WithNodeRenderers(
			util.Prioritized(ghtml.NewRenderer(), 1000),
			util.Prioritized(extension.NewTableHTMLRenderer(), 500),
			util.Prioritized(extension.NewStrikethroughHTMLRenderer(), 500),
			util.Prioritized(&safeRenderer{st: st}, 100),
		))
	}
	var b bytes.Buffer
	if err := st.r.Render(&b, src, doc); err != nil {
		return template.HTML("<p>" + html.EscapeString(string(src)) + "</p>")
	}
	return template.HTML(b.String())
}

type safeRenderer struct{ st *mdState }

func (s *safeRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindHTMLBlock, s.htmlBlock)
	reg.Register(ast.KindRawHTML, s.rawHTML)
	reg.Register(ast.KindLink, s.link)
	reg.Register(ast.KindAutoLink, s.autoLink)
	reg.Register(ast.KindImage, s.image)
	reg.Register(ast.KindFencedCodeBlock, s.fenced)
}

// htmlBlock writes raw HTML as the text it is.
func (s *safeRenderer) htmlBlock(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.HTMLBlock)
	var b bytes.Buffer
	for i := 0; i < n.Lines().Len(); i++ {
		seg := n.Lines().At(i)
		b.Write(seg.Value(src))
	}
	if n.HasClosure() {
		b.Write(n.ClosureLine.Value(src))
	}
	w.WriteString(`<p class="q-raw">`)
	w.WriteString(html.EscapeString(strings.TrimRight(b.String(), "\n")))
	w.WriteString("</p>\n")
	return ast.WalkSkipChildren, nil
}

func (s *safeRenderer) rawHTML(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	n := node.(*ast.RawHTML)
	for i := 0; i < n.Segments.Len(); i++ {
		seg := n.Segments.At(i)
		w.WriteString(html.EscapeString(string(seg.Value(src))))
	}
	return ast.WalkSkipChildren, nil
}

// linkable says whether a link's destination may be opened: https:,
// http: or mailto:, nothing else.
func linkable(dest string) bool {
	u, err := url.Parse(strings.TrimSpace(dest))
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "https", "http":
		return u.Host != ""
	case "mailto":
		return true
	}
	return false
}

func writeLink(w util.BufWriter, dest, title, class string) {
	w.WriteString(`<a href="`)
	w.WriteString(html.EscapeString(dest))
	w.WriteString(`" rel="noopener noreferrer nofollow"`)
	if class != "" {
		w.WriteString(` class="` + class + `"`)
	}
	if title != "" {
		w.WriteString(` title="` + html.EscapeString(title) + `"`)
	}
	w.WriteString(">")
}

// insideLink says whether a node is inside a link that is written out.
func insideLink(n ast.Node) bool {
	for p := n.Parent(); p != nil; p = p.Parent() {
		if l, ok := p.(*ast.Link); ok && linkable(string(l.Destination)) {
			return true
		}
	}
	return false
}

func (s *safeRenderer) link(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Link)
	if !linkable(string(n.Destination)) || insideLink(n) {
		return ast.WalkContinue, nil // its text alone
	}
	if entering {
		writeLink(w, string(n.Destination), string(n.Title), "")
	} else {
		w.WriteString("</a>")
	}
	return ast.WalkContinue, nil
}

func (s *safeRenderer) autoLink(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.AutoLink)
	label := string(n.Label(src))
	dest := string(n.URL(src))
	if n.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(dest), "mailto:") {
		dest = "mailto:" + dest
	}
	if !linkable(dest) || insideLink(n) {
		w.WriteString(html.EscapeString(label))
		return ast.WalkContinue, nil
	}
	writeLink(w, dest, "", "")
	w.WriteString(html.EscapeString(label))
	w.WriteString("</a>")
	return ast.WalkContinue, nil
}

// image writes an image as a link to it, never loaded: its alt text (or
// its address) after "Image: ".
func (s *safeRenderer) image(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	n := node.(*ast.Image)
	alt := plainText(n, src)
	dest := string(n.Destination)
	if alt == "" {
		alt = dest
	}
	label := html.EscapeString("Image: " + alt)
	if !linkable(dest) || insideLink(n) {
		w.WriteString(`<span class="q-image">` + label + `</span>`)
		return ast.WalkSkipChildren, nil
	}
	writeLink(w, dest, string(n.Title), "q-image")
	w.WriteString(label)
	w.WriteString("</a>")
	return ast.WalkSkipChildren, nil
}

func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := c.(type) {
		case *ast.Text:
			b.Write(t.Segment.Value(src))
		case *ast.String:
			b.Write(t.Value)
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// fenced writes a chart block that draws as a figure (package assets'
// markup), and any other fenced block as code.
func (s *safeRenderer) fenced(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	n := node.(*ast.FencedCodeBlock)
	var body bytes.Buffer
	for i := 0; i < n.Lines().Len(); i++ {
		seg := n.Lines().At(i)
		body.Write(seg.Value(src))
	}
	info := ""
	if n.Info != nil {
		info = string(n.Info.Segment.Value(src))
	}
	if f := strings.Fields(info); len(f) > 0 && f[0] == "chart" {
		if c, ok := render.ReadChart(info, body.String()); ok {
			s.figure(w, c)
			return ast.WalkSkipChildren, nil
		}
	}
	w.WriteString("<pre><code")
	if lang := n.Language(src); lang != nil {
		w.WriteString(` class="language-` + html.EscapeString(string(lang)) + `"`)
	}
	w.WriteString(">")
	w.WriteString(html.EscapeString(body.String()))
	w.WriteString("</code></pre>\n")
	return ast.WalkSkipChildren, nil
}

// jsonInScript keeps JSON from closing the script element that holds it:
// <, > and & only occur inside strings, where \u escapes mean the same.
var jsonInScript = strings.NewReplacer("<", `\u003c`, ">", `\u003e`, "&", `\u0026`)

func (s *safeRenderer) figure(w util.BufWriter, c render.Chart) {
	s.st.figures++
	roles, _ := json.Marshal(c.Roles)
	fmt.Fprintf(w, `<figure class="q-chart q-kind-%s" data-kind="%s" data-roles="%s" data-address="%s" id="chart-%d"`,
		html.EscapeString(c.Kind), html.EscapeString(c.Kind), html.EscapeString(string(roles)), html.EscapeString(s.st.addr), s.st.figures)
	if c.Tiles > 0 && len(s.st.cells) == c.Tiles {
		cells, _ := json.Marshal(s.st.cells)
		fmt.Fprintf(w, ` data-cells="%s"`, html.EscapeString(string(cells)))
	}
	w.WriteString(">\n")
	w.WriteString(`<script type="application/json" class="q-chart-data">`)
	w.WriteString(jsonInScript.Replace(c.Body))
	w.WriteString("</script>\n")
	w.WriteString(`<div class="q-chart-draw"></div>` + "\n")
	// Open for a page read without JavaScript; charts.js folds it.
	w.WriteString(`<details class="q-chart-table" open><summary>Data</summary>` + "\n")
	inner := &mdState{figures: s.st.figures}
	w.WriteString(string(inner.toHTML(c.Table)))
	w.WriteString("</details>\n</figure>\n")
}
