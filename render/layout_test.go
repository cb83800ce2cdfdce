package render

import (
	"strings"
	"testing"
)

func block(info, body string) string { return "```" + info + "\n" + body + "\n```" }

// Every kind's example draws.
func TestKindExamples(t *testing.T) {
	for _, k := range kinds {
		md := block("chart "+k.Name, k.Example)
		if got := Layout(md, "markdown"); got != md {
			t.Errorf("%s does not draw its example:\n%s", k.Name, got)
		}
	}
}

func TestChartFailures(t *testing.T) {
	cats := `{"values":[{"name":"a","value":1}]}`
	table := `{"columns":[{"name":"Spend"},{"name":"Sign-ups"}],"rows":[[120,"many"]]}`
	cases := []struct{ name, md, want string }{
		{"kind and shape", block("chart line", cats),
			"Couldn’t display this chart: a line chart requires a series; the data is categories.\n\n| name | value |\n| --- | --- |\n| a | 1 |"},
		{"two shapes", block("chart bars", `{"text":"hi"}`),
			"Couldn’t display this chart: a bars chart requires categories or a table; the data is a text.\n\nhi"},
		{"null", block("chart line", "null"), "No data for this chart yet."},
		{"not JSON", block("chart line", "{oops"), "Couldn’t display this chart: its data is not JSON.\n\n```\n{oops\n```"},
		{"no shape", block("chart line", `{"other":1}`), "Couldn’t display this chart: its data matches no shape.\n\n```\n{\"other\":1}\n```"},
		{"shape broken", block("chart line", `{"lines":[]}`), "Couldn’t display this chart: its data matches no shape; /lines: Expected at least 1 line.\n\n```\n{\"lines\":[]}\n```"},
		{"unknown kind", block("chart pie", cats), "Couldn’t display this chart: there is no chart of the kind pie; the kinds are line, bars, stacked, share, histogram, scatter, bubble, heatmap, range, funnel, calendar, timeline, table, figure and text.\n\n| name | value |\n| --- | --- |\n| a | 1 |"},
		{"role not taken", block("chart line size=a", `{"lines":[{"name":"a","points":[]}]}`), "Couldn’t display this chart: a line chart takes no roles.\n\n| at | a |\n| --- | --- |"},
		{"role twice", block("chart bars x=a x=b", table), "Couldn’t display this chart: the role x is written twice.\n\n| Spend | Sign-ups |\n| --- | --- |\n| 120 | many |"},
		{"roles over categories", block("chart bars x=a", cats), "Couldn’t display this chart: roles name the columns of a table, and the data is categories.\n\n| name | value |\n| --- | --- |\n| a | 1 |"},
		{"role names no column", block(`chart scatter y="Sign ups"`, table), "Couldn’t display this chart: the role y names the column \"Sign ups\", which the table does not have.\n\n| Spend | Sign-ups |\n| --- | --- |\n| 120 | many |"},
		{"cell misfit", block("chart scatter", table), "Couldn’t display this chart: the column \"Sign-ups\" holds the text \"many\" in row 1, where y needs a number.\n\n| Spend | Sign-ups |\n| --- | --- |\n| 120 | many |"},
		{"too few columns", block("chart bubble", table), "Couldn’t display this chart: a bubble chart needs a column for size, and the table has no other column.\n\n| Spend | Sign-ups |\n| --- | --- |\n| 120 | many |"},
		{"share below 0", block("chart share", `{"values":[{"name":"Web","value":-2}]}`), "Couldn’t display this chart: a share chart requires every value to be at least 0; Web is -2.\n\n| name | value |\n| --- | --- |\n| Web | -2 |"},
		{"calendar", block("chart calendar", `{"period":"month","lines":[{"name":"a","points":[{"at":"2026-10","value":1}]}]}`), "Couldn’t display this chart: a calendar chart requires a series of one line whose period is day.\n\n| at | a |\n| --- | --- |\n| 2026-10 | 1 |"},
		{"inside a list stays code", "- item\n\n  " + strings.ReplaceAll(block("chart pie", "x"), "\n", "\n  "), "- item\n\n  ```chart pie\n  x\n  ```"},
		{"inside a quote stays code", "> ```chart pie\n> x\n> ```", "> ```chart pie\n> x\n> ```"},
		{"a sentence before", "Text\n" + block("chart line", "null"), "Text\n\nNo data for this chart yet."},
	}
	for _, c := range cases {
		if got := Layout(c.md, "markdown"); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

func TestTextFormat(t *testing.T) {
	series := `{"period":"day","lines":[{"name":"A","points":[{"at":"2026-10-31","value":2},{"at":"2026-11-01","value":3}]},{"name":"B","points":[{"at":"2026-10-30","value":1,"low":0},{"at":"2026-11-01","value":4}]}],"marks":[{"label":"m","value":1}]}`
	cats := `{"values":[{"name":"a","value":1,"low":0},{"name":"b","value":2,"high":3}]}`
	md := block("chart stacked", series) + "\n\n" + block("chart range", cats) + "\n\n" + block("chart text", `{"text":"**Done**"}`)
	want := "| at | A | B |\n| --- | --- | --- |\n| 2026-10-30 |  | 1 |\n| 2026-10-31 | 2 |  |\n| 2026-11-01 | 3 | 4 |\n\n" +
		"| name | value | low | high |\n| --- | --- | --- | --- |\n| a | 1 | 0 |  |\n| b | 2 |  | 3 |\n\n**Done**"
	if got := Layout(md, "text"); got != want {
		t.Errorf("text format:\n got %q\nwant %q", got, want)
	}
	if got := Layout(md, "markdown"); got != md {
		t.Errorf("markdown format changed the blocks:\n%s", got)
	}
}

func TestRowFailures(t *testing.T) {
	cases := []struct{ name, md, want string }{
		{"one cell", "::: row\nonly one\n:::", "This row could not be laid out: it holds 1 cell, and a row holds at least 2.\n\nonly one"},
		{"five cells", "::: row\na\n---\nb\n---\nc\n---\nd\n---\ne\n:::", "This row could not be laid out: it holds 5 cells, and a row holds at most 4.\n\na\n\nb\n\nc\n\nd\n\ne"},
		{"nested", "::: row\na\n::: row\nb\n---\nc\n:::\n:::", "This row could not be laid out: it holds another row, and rows do not nest.\n\na\n\nb\n\nc"},
		{"never closed", "Before\n::: row\nnever\n---\nclosed", "Before\n\nThis row could not be laid out: it is not closed by a line of :::.\n\nnever\n\nclosed"},
		{"a fence keeps its lines", "::: row\n```\n---\n:::\n```\n---\nb\n:::", "::: row\n```\n---\n:::\n```\n---\nb\n:::"},
		{"chart drawn first", "::: row\n" + block("chart line", "null") + "\n---\nb\n:::", "::: row\nNo data for this chart yet.\n---\nb\n:::"},
		{"an empty cell keeps its place", "::: row\n\n---\nb\n:::", "::: row\n\n---\nb\n:::"},
		{":::row opens one", ":::row\na\n---\nb\n:::", ":::row\na\n---\nb\n:::"},
	}
	for _, c := range cases {
		if got := Layout(c.md, "markdown"); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

func TestBlocks(t *testing.T) {
	md := page(t, "fulfill/runs.md") + "\n\n---\n\nA sentence.\n\n- a\n- b\n\n> q\n\n| a | b |\n| - | - |\n| 1 | 2 |\n\n```go\nx\n```"
	want := []struct {
		kind  string
		cells int
	}{{"chart", 3}, {"row", 3}, {"heading", 0}, {"chart", 0}, {"paragraph", 0}, {"list", 0}, {"quote", 0}, {"table", 0}, {"code", 0}}
	got := Blocks(md)
	if len(got) != len(want) {
		t.Fatalf("%d blocks, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].N != i+1 || got[i].Kind != w.kind || got[i].Cells != w.cells {
			t.Errorf("block %d: %+v, want %s with %d cells", i+1, got[i], w.kind, w.cells)
		}
	}
	if got[2].Text != "#### The latest orders" || got[4].Text != "A sentence." {
		t.Errorf("texts %q %q", got[2].Text, got[4].Text)
	}
	if r := Blocks(page(t, "morning/result.md")); len(r) != 2 || r[0].Kind != "paragraph" || r[1].Kind != "list" {
		t.Errorf("morning result blocks %+v", r)
	}
}

// TestReadChart: a chart block that draws is read with its kind, roles
// and body, and its table is the one a client that does not draw prints
// (Layout's text format); one that fails is not read.
func TestReadChart(t *testing.T) {
	for _, k := range kinds {
		info := "chart " + k.Name
		if k.Name == "bars" {
			info += ` x=Channel y="Posts"`
		}
		c, ok := ReadChart(info, k.Example+"\n")
		if !ok {
			t.Errorf("%s: does not draw", k.Name)
			continue
		}
		text := Layout("```"+info+"\n"+k.Example+"\n```", "text")
		if c.Kind != k.Name || c.Body != k.Example || c.Table != text {
			t.Errorf("%s: %+v\nwant the table %q", k.Name, c, text)
		}
		if k.Name == "bars" && (c.Roles["x"] != "Channel" || c.Roles["y"] != "Posts") {
			t.Errorf("bars: roles %v", c.Roles)
		}
		if k.Name == "figure" && c.Tiles != 2 {
			t.Errorf("figure: %d tiles", c.Tiles)
		}
	}
	if _, ok := ReadChart("chart line", `{"values":[{"name":"A","value":1}]}`); ok {
		t.Error("a line over categories draws")
	}
	b := Blocks("Intro\n\n::: row\n#### One\n```chart share\n{\"values\":[{\"name\":\"A\",\"value\":1}]}\n```\n---\nTwo\n:::\n")
	if len(b) != 2 || b[1].Kind != "row" || len(b[1].CellText) != 2 || b[1].CellText[1] != "Two" || !strings.HasPrefix(b[1].CellText[0], "#### One\n```chart share") {
		t.Errorf("blocks: %+v", b)
	}
}
