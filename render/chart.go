package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"quire/words/near"
	"quire/words/shape"
)

// kind is one entry of the table of chart kinds (page-format.md, "Kinds"):
// the shapes it reads and, for a kind that reads a table, the roles it
// needs, in order, and those it may take. Example is a block of the kind
// that draws; a test checks that it does.
type kind struct {
	Name     string
	Reads    []string
	Needs    []string
	Optional []string
	Example  string
}

var kinds = []kind{
	{"line", []string{"series"}, nil, nil, `{"period":"day","lines":[{"name":"Posts","points":[{"at":"2026-10-30","value":3},{"at":"2026-10-31","value":2}]}]}`},
	{"bars", []string{"categories", "table"}, []string{"x", "y"}, []string{"color"}, `{"columns":[{"name":"Channel"},{"name":"Posts"}],"rows":[["X",3],["LinkedIn",2]]}`},
	{"stacked", []string{"series"}, nil, nil, `{"lines":[{"name":"Web","points":[{"at":"2026-10-30T09:00:00Z","value":1}]},{"name":"Shop","points":[{"at":"2026-10-30T09:00:00Z","value":2}]}]}`},
	{"share", []string{"categories"}, nil, nil, `{"values":[{"name":"Web","value":2},{"name":"Marketplace","value":1}]}`},
	{"histogram", []string{"categories"}, nil, nil, `{"values":[{"name":"Under $25","value":1},{"name":"$25 and over","value":2}]}`},
	{"scatter", []string{"table"}, []string{"x", "y"}, []string{"color", "mark"}, `{"columns":[{"name":"Spend"},{"name":"Sign-ups"},{"name":"Channel"}],"rows":[[120,14,"Search"],[80,null,"Social"]]}`},
	{"bubble", []string{"table"}, []string{"x", "y", "size"}, []string{"color", "mark"}, `{"columns":[{"name":"Spend"},{"name":"Sign-ups"},{"name":"Reach"}],"rows":[[120,14,3000]]}`},
	{"heatmap", []string{"table"}, []string{"x", "y", "value"}, nil, `{"columns":[{"name":"Day"},{"name":"Hour"},{"name":"Tickets"}],"rows":[["2026-10-30","09",4]]}`},
	{"range", []string{"categories", "table"}, []string{"x", "low", "high"}, []string{"value"}, `{"values":[{"name":"Support","value":30,"low":20,"high":45}]}`},
	{"funnel", []string{"categories"}, nil, nil, `{"values":[{"name":"Visits","value":1000},{"name":"Orders","value":40}]}`},
	{"calendar", []string{"series"}, nil, nil, `{"period":"day","lines":[{"name":"Posts","points":[{"at":"2026-10-30","value":3}]}]}`},
	{"timeline", []string{"table"}, []string{"y", "start", "end"}, []string{"color", "mark"}, `{"columns":[{"name":"Task"},{"name":"From"},{"name":"To"}],"rows":[["Close","2026-10-01","2026-10-03"]]}`},
	{"table", []string{"table"}, nil, nil, `{"columns":[{"name":"Order"},{"name":"Total","unit":"USD"}],"rows":[["A-1043",132.25]]}`},
	{"figure", []string{"categories"}, nil, nil, `{"values":[{"name":"Orders","value":3},{"name":"Revenue (USD)","value":242.75}]}`},
	{"text", []string{"text"}, nil, nil, `{"text":"**Closed** on time."}`},
}

var kindByName = func() map[string]*kind {
	m := map[string]*kind{}
	for i := range kinds {
		m[kinds[i].Name] = &kinds[i]
	}
	return m
}()

// ChartKind is one kind of chart of the table "Kinds" (page-format.md) as
// a client that draws reads it: the shapes it reads and, for a kind that
// reads a table, the roles it needs, in order, and those it may take (both
// empty for another kind). Example is a block of the kind that draws.
type ChartKind struct {
	Name     string   `json:"-"`
	Reads    []string `json:"reads"`
	Needs    []string `json:"needs"`
	Optional []string `json:"optional"`
	Example  string   `json:"-"`
}

// ChartKinds is the table of chart kinds, in the page format's order, for
// the clients that draw them: serve/web gives it to charts.js in each page
// (keyed by name), so the script and Layout's check read the one table.
func ChartKinds() []ChartKind {
	out := make([]ChartKind, len(kinds))
	for i, k := range kinds {
		out[i] = ChartKind{Name: k.Name, Reads: slices.Clone(k.Reads), Needs: append([]string{}, k.Needs...),
			Optional: append([]string{}, k.Optional...), Example: k.Example}
	}
	return out
}

// nearest ends the words of a name that is none of choices, in the
// prose of a chart's problem (names unquoted, as "the kind pie" is): the
// nearest one, asked, and the choices (near.List).
func nearest(name string, choices []string, what string) string {
	if n := near.Closest(name, choices); n != "" {
		return fmt.Sprintf("; did you mean %s? %s are %s", n, strings.ToUpper(what[:1])+what[1:], near.List(choices))
	}
	return fmt.Sprintf("; %s are %s", what, near.List(choices))
}

// kindNames are the kinds' names, in the table's order.
func kindNames() []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.Name
	}
	return out
}

// roleCell says, for each role, which cells fit it (page-format.md, "Roles").
var roleCell = map[string]string{
	"x": "text, a number or a time", "y": "a number", "color": "any cell", "size": "a number of at least 0",
	"value": "a number", "low": "a number", "high": "a number", "mark": "text", "start": "a time", "end": "a time",
}

func (k *kind) takes(role string) bool { return contains(k.Needs, role) || contains(k.Optional, role) }

type role struct{ name, column string }

// chartInfo is an info string read: chart, its kind and its roles.
type chartInfo struct {
	kind  string
	roles []role
}

// readInfo reads an info string whose first word is chart. It gives the
// problem with it, in the words that follow "Couldn’t display this chart: ".
func readInfo(info string) (chartInfo, string) {
	words, err := splitWords(info)
	if err != "" {
		return chartInfo{}, err
	}
	var ci chartInfo
	if len(words) < 2 {
		return ci, "the block names no kind of chart."
	}
	ci.kind = words[1]
	k, ok := kindByName[ci.kind]
	if !ok {
		return ci, "there is no chart of the kind " + ci.kind + nearest(ci.kind, kindNames(), "the kinds") + "."
	}
	seen := map[string]bool{}
	for _, w := range words[2:] {
		name, col, ok := strings.Cut(w, "=")
		if !ok || name == "" {
			return ci, fmt.Sprintf("%s is not a role; a role is written role=column.", w)
		}
		if !k.takes(name) {
			if len(k.Needs)+len(k.Optional) == 0 {
				return ci, fmt.Sprintf("a %s chart takes no roles.", k.Name)
			}
			return ci, fmt.Sprintf("a %s chart takes no role %s%s.", k.Name, name, nearest(name, append(slices.Clone(k.Needs), k.Optional...), "its roles"))
		}
		if seen[name] {
			return ci, fmt.Sprintf("the role %s is written twice.", name)
		}
		seen[name] = true
		if strings.HasPrefix(col, `"`) {
			col = strings.TrimSuffix(strings.TrimPrefix(col, `"`), `"`)
		}
		if col == "" {
			return ci, fmt.Sprintf("the role %s names no column.", name)
		}
		ci.roles = append(ci.roles, role{name, col})
	}
	return ci, ""
}

// splitWords splits an info string at its spaces, keeping "quoted words".
func splitWords(s string) ([]string, string) {
	var words []string
	var cur strings.Builder
	inQuote, has := false, false
	for _, r := range s {
		switch {
		case r == '"':
			inQuote = !inQuote
			cur.WriteRune(r)
			has = true
		case (r == ' ' || r == '\t') && !inQuote:
			if has {
				words = append(words, cur.String())
				cur.Reset()
				has = false
			}
		default:
			cur.WriteRune(r)
			has = true
		}
	}
	if inQuote {
		return nil, "a column's name in the info string has no closing quote."
	}
	if has {
		words = append(words, cur.String())
	}
	return words, ""
}

const (
	chartFails = "Couldn’t display this chart: "
	chartNull  = "No data for this chart yet."
)

var shapeWords = map[string]string{"series": "a series", "categories": "categories", "table": "a table", "text": "a text"}

// drawn is what a chart block becomes.
type drawn struct {
	ok    bool
	line  string // the line that says why it fails, or chartNull
	data  any    // the data, decoded, where it has a shape
	shape string
	count int // a figure block's tiles
}

// checkChart checks a chart block as it renders.
func checkChart(info, body string) drawn {
	ci, why := readInfo(info)
	trimmed := strings.TrimSpace(body)
	if trimmed == "null" {
		return drawn{line: chartNull}
	}
	dec := json.NewDecoder(strings.NewReader(trimmed))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	if err == nil {
		if _, e := dec.Token(); e != io.EOF {
			err = fmt.Errorf("more than one value")
		}
	}
	if err != nil || trimmed == "" {
		return drawn{line: chartFails + "its data is not JSON."}
	}
	name := shapeOf(v)
	if name == "" {
		return drawn{line: chartFails + "its data matches no shape."}
	}
	if issues := shape.CheckValue(name, v); len(issues) > 0 {
		return drawn{line: chartFails + "its data matches no shape; " + shape.Format(issues[0])}
	}
	d := drawn{data: v, shape: name}
	if name == "categories" {
		d.count = len(v.(map[string]any)["values"].([]any))
	}
	if why != "" {
		d.line = chartFails + why
		return d
	}
	k := kindByName[ci.kind]
	if !contains(k.Reads, name) {
		var reads []string
		for _, r := range k.Reads {
			reads = append(reads, shapeWords[r])
		}
		d.line = fmt.Sprintf("%sa %s chart requires %s; the data is %s.", chartFails, k.Name, strings.Join(reads, " or "), shapeWords[name])
		return d
	}
	if len(ci.roles) > 0 && name != "table" {
		d.line = fmt.Sprintf("%sroles name the columns of a table, and the data is %s.", chartFails, shapeWords[name])
		return d
	}
	if why := kindRules(k, ci, v.(map[string]any), name); why != "" {
		d.line = chartFails + why
		return d
	}
	d.ok = true
	return d
}

// shapeOf tells the shape a value is written in, by the field it must have.
func shapeOf(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	for _, f := range []struct{ field, shape string }{{"lines", "series"}, {"values", "categories"}, {"columns", "table"}, {"rows", "table"}, {"text", "text"}} {
		if _, has := m[f.field]; has {
			return f.shape
		}
	}
	return ""
}

// kindRules checks what a kind asks beyond its shape, and a table's roles.
func kindRules(k *kind, ci chartInfo, m map[string]any, name string) string {
	switch k.Name {
	case "share":
		for _, it := range m["values"].([]any) {
			o := it.(map[string]any)
			if f, _ := strconv.ParseFloat(fmt.Sprint(o["value"]), 64); f < 0 {
				return fmt.Sprintf("a share chart requires every value to be at least 0; %s is %s.", o["name"], jsNumber(f))
			}
		}
	case "calendar":
		lines := m["lines"].([]any)
		if len(lines) != 1 || m["period"] != "day" {
			return "a calendar chart requires a series of one line whose period is day."
		}
	}
	if name != "table" || len(k.Needs) == 0 {
		return ""
	}
	var cols []string
	for _, c := range m["columns"].([]any) {
		cols = append(cols, c.(map[string]any)["name"].(string))
	}
	at := map[string]int{}
	taken := map[int]bool{}
	for _, r := range ci.roles {
		i := indexOf(cols, r.column)
		if i < 0 {
			return fmt.Sprintf("the role %s names the column %q, which the table does not have.", r.name, r.column)
		}
		at[r.name] = i
		taken[i] = true
	}
	next := 0
	for _, need := range k.Needs {
		if _, ok := at[need]; ok {
			continue
		}
		for next < len(cols) && taken[next] {
			next++
		}
		if next >= len(cols) {
			return fmt.Sprintf("a %s chart needs a column for %s, and the table has no other column.", k.Name, need)
		}
		at[need] = next
		taken[next] = true
	}
	rows := m["rows"].([]any)
	roles := append(append([]string{}, k.Needs...), k.Optional...)
	for ri, r := range rows {
		cells := r.([]any)
		skip := false
		for _, need := range k.Needs {
			if cells[at[need]] == nil {
				skip = true
			}
		}
		if skip {
			continue
		}
		for _, rn := range roles {
			i, ok := at[rn]
			if !ok || cells[i] == nil {
				continue
			}
			if !fits(k.Name, rn, cells[i]) {
				return fmt.Sprintf("the column %q holds %s in row %d, where %s needs %s.", cols[i], cellWords(cells[i]), ri+1, rn, cellNeed(k.Name, rn))
			}
		}
	}
	return ""
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func cellNeed(kindName, role string) string {
	if role == "y" && (kindName == "heatmap" || kindName == "timeline") {
		return "text"
	}
	return roleCell[role]
}

func cellWords(c any) string {
	switch v := c.(type) {
	case string:
		return fmt.Sprintf("the text %q", clip(v, 40))
	case json.Number:
		return "the number " + string(v)
	case bool:
		return strconv.FormatBool(v)
	}
	return "a value"
}

func fits(kindName, role string, c any) bool {
	_, isText := c.(string)
	_, isNum := c.(json.Number)
	switch role {
	case "x":
		return isText || isNum
	case "y":
		if kindName == "heatmap" || kindName == "timeline" {
			return isText
		}
		return isNum
	case "color":
		return true
	case "size":
		if !isNum {
			return false
		}
		f, _ := c.(json.Number).Float64()
		return f >= 0
	case "value", "low", "high":
		return isNum
	case "mark":
		return isText
	case "start", "end":
		return isText && isTime(c.(string))
	}
	return false
}

var periodForm = regexp.MustCompile(`^\d{4}(-\d{2}(-\d{2})?|-W\d{2}|-Q[1-4])?$`)

// isTime tells text in a form a series' at takes: a period or an RFC 3339
// date and time.
func isTime(s string) bool {
	if periodForm.MatchString(s) {
		return true
	}
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

// dataTable writes data as the table page-format.md sets out ("Data becomes
// a table this way"); a text is its text.
func dataTable(v any, name string) string {
	m := v.(map[string]any)
	var head []string
	var rows [][]string
	switch name {
	case "text":
		return m["text"].(string)
	case "series":
		lines := m["lines"].([]any)
		head = []string{"at"}
		type atKey struct {
			s string
			t time.Time
		}
		cells := map[string][]string{}
		var ats []atKey
		for li, l := range lines {
			lm := l.(map[string]any)
			head = append(head, lm["name"].(string))
			for _, p := range lm["points"].([]any) {
				pm := p.(map[string]any)
				at := pm["at"].(string)
				if _, ok := cells[at]; !ok {
					cells[at] = make([]string, len(lines))
					t, _ := time.Parse(time.RFC3339Nano, at)
					ats = append(ats, atKey{at, t})
				}
				cells[at][li] = cellText(pm["value"])
			}
		}
		sort.SliceStable(ats, func(i, j int) bool {
			if !ats[i].t.IsZero() && !ats[j].t.IsZero() && !ats[i].t.Equal(ats[j].t) {
				return ats[i].t.Before(ats[j].t)
			}
			return ats[i].s < ats[j].s
		})
		for _, a := range ats {
			rows = append(rows, append([]string{a.s}, cells[a.s]...))
		}
	case "categories":
		vals := m["values"].([]any)
		hasLow, hasHigh := false, false
		for _, it := range vals {
			o := it.(map[string]any)
			_, l := o["low"]
			_, h := o["high"]
			hasLow, hasHigh = hasLow || l, hasHigh || h
		}
		head = []string{"name", "value"}
		if hasLow {
			head = append(head, "low")
		}
		if hasHigh {
			head = append(head, "high")
		}
		for _, it := range vals {
			o := it.(map[string]any)
			row := []string{cellText(o["name"]), cellText(o["value"])}
			if hasLow {
				row = append(row, cellText(o["low"]))
			}
			if hasHigh {
				row = append(row, cellText(o["high"]))
			}
			rows = append(rows, row)
		}
	case "table":
		for _, c := range m["columns"].([]any) {
			head = append(head, c.(map[string]any)["name"].(string))
		}
		for _, r := range m["rows"].([]any) {
			var row []string
			for _, c := range r.([]any) {
				row = append(row, cellText(c))
			}
			rows = append(rows, row)
		}
	}
	return markdownTable(head, rows)
}

func cellText(c any) string {
	switch v := c.(type) {
	case nil:
		return ""
	case string:
		return v
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			return string(v)
		}
		return jsNumber(f)
	case bool:
		return strconv.FormatBool(v)
	}
	return fmt.Sprint(c)
}

var cellEscaper = strings.NewReplacer("|", `\|`, "\r\n", " ", "\n", " ", "\r", " ")

func markdownTable(head []string, rows [][]string) string {
	var b strings.Builder
	row := func(cells []string) {
		b.WriteByte('|')
		for _, c := range cells {
			b.WriteByte(' ')
			b.WriteString(cellEscaper.Replace(c))
			b.WriteString(" |")
		}
		b.WriteByte('\n')
	}
	row(head)
	b.WriteByte('|')
	for range head {
		b.WriteString(" --- |")
	}
	b.WriteByte('\n')
	for _, r := range rows {
		row(r)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// codeBlock shows text as a fenced code block, its fence longer than any
// run of backticks it holds.
func codeBlock(body string) string {
	longest, run := 0, 0
	for i := 0; i < len(body); i++ {
		if body[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + "\n" + strings.TrimRight(body, "\n") + "\n" + fence
}

// chartText is what a chart block becomes: itself where it draws and the
// format is markdown, else its line and its data.
func chartText(d drawn, info, body, original, format string) string {
	switch {
	case d.line == chartNull:
		return chartNull
	case d.ok && format != "text":
		return original
	case d.ok:
		return dataTable(d.data, d.shape)
	case d.data != nil:
		return d.line + "\n\n" + dataTable(d.data, d.shape)
	}
	return d.line + "\n\n" + codeBlock(string(bytes.TrimSpace([]byte(body))))
}

// Chart is a chart block that draws, as a client that draws it reads it
// (serve/web's figures): its kind, its roles (role → column) and its
// body, and its data as the page format's table ("Data becomes a table
// this way"), the same table a client that does not draw prints. A text
// block's table is its text.
type Chart struct {
	Kind  string
	Roles map[string]string
	Body  string // the JSON of its data, as written, trimmed
	Table string // Markdown
	Shape string // series, categories, table or text
	Tiles int    // a figure block's values, each a cell of its block
}

// ReadChart reads a chart block from its info string and body, as Layout
// checks it. ok is false for a block that does not draw: Layout has then
// already written its line (and its table) in its place.
func ReadChart(info, body string) (c Chart, ok bool) {
	d := checkChart(info, body)
	if !d.ok {
		return c, false
	}
	ci, _ := readInfo(info)
	c = Chart{Kind: ci.kind, Roles: map[string]string{}, Body: strings.TrimSpace(body), Shape: d.shape, Table: dataTable(d.data, d.shape)}
	for _, r := range ci.roles {
		c.Roles[r.name] = r.column
	}
	if ci.kind == "figure" {
		c.Tiles = d.count
	}
	return c, true
}
