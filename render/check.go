package render

import (
	"fmt"
	"regexp"
	"strings"

	"quire/words/refusal"
)

// The variables each template reads (page-format.md, "result", "runs",
// "glance"), and the fields of run and subject.
var (
	templateVars = map[string][]string{
		"result": {"output", "run", "subject", "today", "now"},
		"runs":   {"views", "subject", "today", "now"},
		"glance": {"views", "output", "run", "subject", "today", "now"},
	}
	runFields     = []string{"status", "started", "ended", "version"}
	subjectFields = []string{"type", "name", "description", "version"}
)

// maxNames is the most names a template may hold in its tags and outputs.
const maxNames = 1000

// CheckTemplate checks a template when its page is saved. which is
// "result", "runs" or "glance"; text is the template; firstLine is the
// document's line of its first line; views names each view data.views
// declares, with its shape; subject is "playbook", "workflow" or
// "function". Each issue is at "/source", with its line in the document.
func CheckTemplate(which, text string, firstLine int, views map[string]string, subject string) []refusal.Issue {
	if firstLine < 1 {
		firstLine = 1
	}
	var issues []refusal.Issue
	add := func(line int, format string, args ...any) {
		issues = append(issues, refusal.Issue{Path: "/source", Line: firstLine + line - 1, Message: fmt.Sprintf(format, args...)})
	}
	allowed, ok := templateVars[which]
	if !ok {
		add(1, "A page has no template %s: its templates are result, runs and glance.", which)
		return issues
	}
	switch {
	case which == "result" && subject == "playbook":
		add(1, "The playbook's page has no result: the playbook has no runs of its own.")
		return issues
	case which == "glance" && subject != "workflow":
		add(1, "Only a workflow's page has glance.")
		return issues
	}
	c := compile(text)
	for _, p := range c.problems {
		add(p.line, "%s", p.msg)
	}
	if c.root == nil && len(c.problems) > 0 && len(c.an.refs) == 0 {
		return append(issues, chartAndRowIssues(text, firstLine)...)
	}
	for _, r := range c.an.refs {
		switch {
		case r.root == "forloop" && r.inFor:
		case c.an.created[r.root] && !contains(allowed, r.root):
		case strings.HasPrefix(r.root, "__"):
			add(r.line, "The variable %s is not allowed: names beginning with __ are the runtime's.", r.root)
		case !contains(allowed, r.root):
			add(r.line, "The variable %s is not one %s reads: it reads %s, and the names it makes with assign, for, increment and decrement.", r.root, which, strings.Join(allowed, ", "))
		case r.root == "run" || r.root == "subject" || r.root == "views":
			fields := runFields
			if r.root == "subject" {
				fields = subjectFields
			}
			switch {
			case r.dynamic:
				add(r.line, "%s is read by the names of its fields, such as %s.%s.", r.root, r.root, map[string]string{"run": "status", "subject": "name", "views": "<name>"}[r.root])
			case r.field == "":
			case r.root == "views":
				if _, ok := views[r.field]; !ok {
					declared := sortedNames(views)
					if len(declared) == 0 {
						add(r.line, "The view %s is not declared: data.views declares none.", r.field)
					} else {
						add(r.line, "The view %s is not declared: data.views declares %s.", r.field, strings.Join(declared, ", "))
					}
				}
			case !contains(fields, r.field):
				add(r.line, "%s has no field %s: its fields are %s.", r.root, r.field, strings.Join(fields, ", "))
			}
		}
	}
	if c.an.names > maxNames {
		add(1, "The template holds %d names in its tags and outputs; a template holds at most 1,000.", c.an.names)
	}
	return append(issues, chartAndRowIssues(text, firstLine)...)
}

// chartAndRowIssues checks the chart fences and the rows a template writes
// out, as they stand in it.
func chartAndRowIssues(src string, firstLine int) []refusal.Issue {
	var issues []refusal.Issue
	add := func(line int, format string, args ...any) {
		issues = append(issues, refusal.Issue{Path: "/source", Line: firstLine + line, Message: fmt.Sprintf(format, args...)})
	}
	lines := strings.Split(src, "\n")
	// Chart fences: on goldmark's tree of the template with its tags and
	// outputs blanked, so that only fences at the top level count.
	blank := blankLiquid(src)
	if strings.Contains(blank, "chart") {
		blines := strings.Split(blank, "\n")
		for _, f := range topFences([]byte(blank), blines) {
			if !isChartInfo(f.info) {
				continue
			}
			orig := lines[f.first]
			if strings.Contains(orig, "{{") || strings.Contains(orig, "{%") {
				continue // written by the template: checked when it renders
			}
			if _, why := readInfo(f.info); why != "" {
				add(f.first, "The chart fence is refused: %s", why)
			}
		}
	}
	// Rows, line by line.
	var f fence
	open := -1 // the line of the open row
	cells, cellHas, hasTag, empty := 0, false, false, false
	for i, l := range lines {
		if f.step(l) {
			if open >= 0 {
				cellHas = true
				hasTag = hasTag || strings.Contains(l, "{%")
			}
			continue
		}
		t := strings.TrimLeft(l, " \t")
		switch {
		case isRowOpen(l):
			if open >= 0 {
				add(i, "This row opens inside another row, and rows do not nest.")
				continue
			}
			open, cells, cellHas, hasTag, empty = i, 1, false, false, false
		case isRowClose(l):
			if open < 0 {
				add(i, "This ::: closes no row.")
				continue
			}
			if !cellHas {
				empty = true
			}
			if !hasTag {
				switch {
				case cells < 2:
					add(open, "This row holds %d cell, and a row holds at least 2.", cells)
				case cells > 4:
					add(open, "This row holds %d cells, and a row holds at most 4.", cells)
				case empty:
					add(open, "This row has an empty cell.")
				}
			}
			open = -1
		case strings.HasPrefix(t, ":::"):
			if t != l {
				add(i, "A ::: line stands at the start of its line, without a space before it.")
			} else {
				add(i, "The line %s is refused: a line that starts with ::: opens a row (::: row) or closes one (:::).", strings.TrimSpace(l))
			}
		case open >= 0 && isCellSep(l):
			if !cellHas {
				empty = true
			}
			cells++
			cellHas = false
		case open >= 0:
			if strings.TrimSpace(l) != "" {
				cellHas = true
			}
			hasTag = hasTag || strings.Contains(l, "{%")
		}
	}
	if open >= 0 {
		add(open, "This row is never closed by a line of :::.")
	}
	return issues
}

// blankLiquid writes the template with every tag and output replaced by
// spaces, keeping its lines.
func blankLiquid(src string) string {
	b := []byte(src)
	for _, open := range []string{"{%", "{{"} {
		closing := "%}"
		if open == "{{" {
			closing = "}}"
		}
		for i := 0; ; {
			j := strings.Index(string(b[i:]), open)
			if j < 0 {
				break
			}
			s := i + j
			k := strings.Index(string(b[s+2:]), closing)
			e := len(b)
			if k >= 0 {
				e = s + 2 + k + 2
			}
			for x := s; x < e; x++ {
				if b[x] != '\n' {
					b[x] = ' '
				}
			}
			i = e
			if i >= len(b) {
				break
			}
		}
	}
	return string(b)
}

// chartOfView is a chart fence's body that writes one view as it is.
var chartOfView = regexp.MustCompile(`^\s*\{\{-?\s*views\.([A-Za-z_][A-Za-z0-9_]*)\s*\|\s*json\s*-?\}\}\s*$`)

// ChartWarnings are what a save takes but the render will refuse, each at
// its line of the document: a chart fence naming roles (which name a
// table's columns) over a view the page declares in another shape, which
// fails every time it renders. views names each view with its shape.
func ChartWarnings(text string, firstLine int, views map[string]string) []refusal.Issue {
	if firstLine < 1 {
		firstLine = 1
	}
	if !strings.Contains(text, "chart") {
		return nil
	}
	var out []refusal.Issue
	lines := strings.Split(text, "\n")
	blank := blankLiquid(text)
	for _, f := range topFences([]byte(blank), strings.Split(blank, "\n")) {
		if !isChartInfo(f.info) || f.last-f.first != 2 {
			continue
		}
		ci, why := readInfo(f.info)
		if why != "" || len(ci.roles) == 0 {
			continue
		}
		m := chartOfView.FindStringSubmatch(lines[f.first+1])
		if m == nil {
			continue
		}
		if s, ok := views[m[1]]; ok && s != "table" {
			out = append(out, refusal.Issue{Path: "/source", Line: firstLine + f.first, Message: fmt.Sprintf(
				"This %s chart names roles, which name the columns of a table, and the view %s is %s: it will not display.", ci.kind, m[1], shapeWords[s])})
		}
	}
	return out
}
