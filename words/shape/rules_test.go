package shape

import (
	"fmt"
	"strings"
	"testing"
)

// TestRules covers each rule and each bound: the bound itself is taken, and
// one past it refused.
func TestRules(t *testing.T) {
	name64 := strings.Repeat("é", 64) // 64 characters, 128 bytes
	name65 := strings.Repeat("é", 65)
	pt := func(fields string) string {
		return `{"lines": [{"name": "a", "points": [{"at": "2026-01-01T00:00:00Z", ` + fields + `}]}]}`
	}
	cats := func(n int) string {
		vs := []any{}
		for i := 0; i < n; i++ {
			vs = append(vs, map[string]any{"name": fmt.Sprint("q", i), "value": i})
		}
		return mustJSON(map[string]any{"values": vs})
	}
	table := func(cols, rows int) string {
		cs, rs := []any{}, []any{}
		for i := 0; i < cols; i++ {
			cs = append(cs, map[string]any{"name": fmt.Sprint("c", i)})
		}
		for i := 0; i < rows; i++ {
			row := make([]any, cols)
			for j := range row {
				row[j] = j
			}
			rs = append(rs, row)
		}
		return mustJSON(map[string]any{"columns": cs, "rows": rs})
	}
	marks := func(n int) string {
		ms := []any{}
		for i := 0; i < n; i++ {
			ms = append(ms, map[string]any{"label": fmt.Sprint("m", i), "value": i})
		}
		return `{"lines": [{"name": "a", "points": []}], "marks": ` + mustJSON(ms) + `}`
	}

	cases := []struct {
		name, shape, doc string
		want             []string
	}{
		// series: the lines and points.
		{"no lines", "series", `{"lines": []}`, []string{"/lines: Expected at least 1 line."}},
		{"20 lines", "series", seriesOf(repeat(20, 1)...), nil},
		{"21 lines", "series", seriesOf(repeat(21, 1)...), []string{"/lines: Expected at most 20 lines."}},
		{"2,000 points across", "series", seriesOf(repeat(20, 100)...), nil},
		{"2,001 points across", "series", seriesOf(append(repeat(19, 100), 101)...),
			[]string{"/lines: Expected at most 2,000 points across the lines."}},
		{"2,000 points in a line", "series", seriesOf(2000), nil},
		{"2,001 points in a line", "series", seriesOf(2001), []string{"/lines/0/points: Expected at most 2,000 points."}},
		{"a line without points", "series", `{"lines": [{"name": "a", "points": []}]}`, nil},
		{"lines not a list", "series", `{"lines": {}}`, []string{"/lines: Expected a list."}},
		{"8 marks", "series", marks(8), nil},
		{"9 marks", "series", marks(9), []string{"/marks: Expected at most 8 marks."}},
		{"no marks", "series", marks(0), nil},
		{"missing fields", "series", `{"lines": [{}], "marks": [{}]}`, []string{
			`/lines/0: Expected the field "name".`, `/lines/0: Expected the field "points".`,
			`/marks/0: Expected the field "label".`, `/marks/0: Expected the field "value".`,
		}},
		{"missing lines", "series", `{}`, []string{`Expected the field "lines".`}},
		{"a point without at and value", "series", `{"lines": [{"name": "a", "points": [{}]}]}`, []string{
			`/lines/0/points/0: Expected the field "at".`, `/lines/0/points/0: Expected the field "value".`,
		}},
		{"other fields", "series", `{"title": 1, "lines": [{"name": "a", "color": "red", "points": [{"at": "2026-01-01T00:00:00Z", "value": 1, "note": ""}]}], "marks": [{"label": "x", "value": 1, "a/b~": 0}]}`, []string{
			"/lines/0/color: Expected no such field: a line has only name and points.",
			"/lines/0/points/0/note: Expected no such field: a point has only at, value, low and high.",
			"/marks/0/a~1b~0: Expected no such field: a mark has only label and value.",
			"/title: Expected no such field: a series has only unit, period, origin, lines and marks.",
		}},
		{"wrong types", "series", `{"unit": 5, "origin": 1, "lines": [{"name": null, "points": [{"at": 20260101, "value": "1", "low": true, "high": []}, 3]}], "marks": [{"label": [], "value": {}}]}`, []string{
			"/lines/0/name: Expected text.",
			"/lines/0/points/0/at: Expected text.",
			"/lines/0/points/0/high: Expected a number.",
			"/lines/0/points/0/low: Expected a number.",
			"/lines/0/points/0/value: Expected a number.",
			"/lines/0/points/1: Expected an object.",
			"/marks/0/label: Expected text.",
			"/marks/0/value: Expected a number.",
			"/origin: Expected text.",
			"/unit: Expected text.",
		}},
		{"not an object", "series", `[]`, []string{"Expected an object."}},

		// series: names, labels and units of 1 to 64 characters.
		{"64 characters", "series", mustJSON(map[string]any{"unit": name64, "lines": []any{map[string]any{"name": name64, "points": []any{}}}, "marks": []any{map[string]any{"label": name64, "value": 1}}}), nil},
		{"65 characters", "series", mustJSON(map[string]any{"unit": name65, "lines": []any{map[string]any{"name": name65, "points": []any{}}}, "marks": []any{map[string]any{"label": name65, "value": 1}}}), []string{
			"/lines/0/name: Expected a name of 1 to 64 characters.",
			"/marks/0/label: Expected a label of 1 to 64 characters.",
			"/unit: Expected a unit of 1 to 64 characters.",
		}},
		{"empty name, label and unit", "series", `{"unit": "", "lines": [{"name": "", "points": []}], "marks": [{"label": "", "value": 1}]}`, []string{
			"/lines/0/name: Expected a name of 1 to 64 characters.",
			"/marks/0/label: Expected a label of 1 to 64 characters.",
			"/unit: Expected a unit of 1 to 64 characters.",
		}},
		{"a name again", "series", `{"lines": [{"name": "a", "points": []}, {"name": "b", "points": []}, {"name": "a", "points": []}, {"name": "A", "points": []}]}`,
			[]string{"/lines/2/name: Expected a name no line before it has."}},

		// series: low and high.
		{"low and high at the value", "series", pt(`"value": 5, "low": 5, "high": 5`), nil},
		{"low and high around the value", "series", pt(`"value": 5, "low": -1.5, "high": 1e3`), nil},
		{"low above the value", "series", pt(`"value": 5, "low": 5.000001`), []string{"/lines/0/points/0/low: Expected a low at most its value."}},
		{"high below the value", "series", pt(`"value": 5, "high": 4.999`), []string{"/lines/0/points/0/high: Expected a high at least its value."}},
		{"both wrong", "series", pt(`"value": 0, "low": 1, "high": -1`), []string{
			"/lines/0/points/0/high: Expected a high at least its value.",
			"/lines/0/points/0/low: Expected a low at most its value.",
		}},

		// series: the form of at, for each period.
		{"period", "series", `{"period": "hour", "origin": "x", "lines": [{"name": "a", "points": [{"at": "x", "value": 1}]}]}`,
			[]string{"/period: Expected a period: day, week, month, quarter or year."}},
		{"days", "series", points("day", "2024-02-28", "2024-02-29", "2024-03-01", "2026-12-31"), nil},
		{"a leap day of 2000", "series", points("day", "2000-02-29"), nil},
		{"no leap day in 2026", "series", points("day", "2026-02-29"), []string{"/lines/0/points/0/at: Expected a day its month has: 2026-02 has 28 days."}},
		{"no leap day in 1900", "series", points("day", "1900-02-29"), []string{"/lines/0/points/0/at: Expected a day its month has: 1900-02 has 28 days."}},
		{"no 31 April", "series", points("day", "2026-04-31"), []string{"/lines/0/points/0/at: Expected a day its month has: 2026-04 has 30 days."}},
		{"days out of form", "series", points("day", "2026-13-01", "2026-1-01", "2026-01-00", "2026-01-32", "2026-10-15T00:00:00Z", "2026/01/01"), []string{
			"/lines/0/points/0/at: Expected a day in the form YYYY-MM-DD.",
			"/lines/0/points/1/at: Expected a day in the form YYYY-MM-DD.",
			"/lines/0/points/2/at: Expected a day in the form YYYY-MM-DD.",
			"/lines/0/points/3/at: Expected a day in the form YYYY-MM-DD.",
			"/lines/0/points/4/at: Expected a day in the form YYYY-MM-DD.",
			"/lines/0/points/5/at: Expected a day in the form YYYY-MM-DD.",
		}},
		{"weeks of 53", "series", points("week", "2015-W53", "2020-W53", "2026-W53", "2032-W53"), nil},
		{"weeks of 52", "series", points("week", "2021-W53", "2025-W53"), []string{
			"/lines/0/points/0/at: Expected a week its year has: 2021 has 52 weeks.",
			"/lines/0/points/1/at: Expected a week its year has: 2025 has 52 weeks.",
		}},
		{"weeks out of form", "series", points("week", "2026-W00", "2026-W54", "2026-w01", "2026-W1", "2026W01"), []string{
			"/lines/0/points/0/at: Expected a week in the form YYYY-Www.",
			"/lines/0/points/1/at: Expected a week in the form YYYY-Www.",
			"/lines/0/points/2/at: Expected a week in the form YYYY-Www.",
			"/lines/0/points/3/at: Expected a week in the form YYYY-Www.",
			"/lines/0/points/4/at: Expected a week in the form YYYY-Www.",
		}},
		{"months", "series", points("month", "2025-12", "2026-01", "2026-12"), nil},
		{"months out of form", "series", points("month", "2026-9", "2026-00", "2026-13", "2026-09-01"), []string{
			"/lines/0/points/0/at: Expected a month in the form YYYY-MM.",
			"/lines/0/points/1/at: Expected a month in the form YYYY-MM.",
			"/lines/0/points/2/at: Expected a month in the form YYYY-MM.",
			"/lines/0/points/3/at: Expected a month in the form YYYY-MM.",
		}},
		{"quarters", "series", points("quarter", "2025-Q4", "2026-Q1", "2026-Q4"), nil},
		{"quarters out of form", "series", points("quarter", "2026-Q0", "2026-Q5", "2026-q1", "2026Q1"), []string{
			"/lines/0/points/0/at: Expected a quarter in the form YYYY-Qn.",
			"/lines/0/points/1/at: Expected a quarter in the form YYYY-Qn.",
			"/lines/0/points/2/at: Expected a quarter in the form YYYY-Qn.",
			"/lines/0/points/3/at: Expected a quarter in the form YYYY-Qn.",
		}},
		{"years", "series", points("year", "0000", "1999", "2026", "9999"), nil},
		{"years out of form", "series", points("year", "26", "02026", "2026-01"), []string{
			"/lines/0/points/0/at: Expected a year in the form YYYY.",
			"/lines/0/points/1/at: Expected a year in the form YYYY.",
			"/lines/0/points/2/at: Expected a year in the form YYYY.",
		}},
		{"times", "series", points("", "2026-10-15T09:30:00Z", "2026-10-15t09:30:00.5z", "2026-10-15T09:30:00.75-00:00", "2026-10-15T23:59:59.999999999999+14:00", "2026-10-16T00:00:00-01:00"), nil},
		{"times out of form", "series", points("", "2026-10-15", "2026-10-15T09:30:00", "2026-10-15 09:30:00Z", "2026-10-15T09:30Z", "2026-06-30T23:59:60Z",
			"2026-02-30T00:00:00Z", "2026-10-15T24:00:00Z", "2026-10-15T09:30:00+24:00", "2026-10-15T09:30:00.Z", "2026-10-15T09:30:00+0100", "2026-10-15T09:30:00Z "), []string{
			"/lines/0/points/0/at: Expected an RFC 3339 date and time, such as 2026-10-15T09:30:00Z.",
			"/lines/0/points/1/at: Expected an RFC 3339 date and time, such as 2026-10-15T09:30:00Z.",
			"/lines/0/points/10/at: Expected an RFC 3339 date and time, such as 2026-10-15T09:30:00Z.",
			"/lines/0/points/2/at: Expected an RFC 3339 date and time, such as 2026-10-15T09:30:00Z.",
			"/lines/0/points/3/at: Expected an RFC 3339 date and time, such as 2026-10-15T09:30:00Z.",
			"/lines/0/points/4/at: Expected an RFC 3339 date and time, such as 2026-10-15T09:30:00Z.",
			"/lines/0/points/5/at: Expected an RFC 3339 date and time, such as 2026-10-15T09:30:00Z.",
			"/lines/0/points/6/at: Expected an RFC 3339 date and time, such as 2026-10-15T09:30:00Z.",
			"/lines/0/points/7/at: Expected an RFC 3339 date and time, such as 2026-10-15T09:30:00Z.",
			"/lines/0/points/8/at: Expected an RFC 3339 date and time, such as 2026-10-15T09:30:00Z.",
			"/lines/0/points/9/at: Expected an RFC 3339 date and time, such as 2026-10-15T09:30:00Z.",
		}},
		{"origin", "series", `{"period": "month", "origin": "2026-10", "lines": [{"name": "a", "points": []}]}`, nil},
		{"origin out of form", "series", `{"period": "month", "origin": "2026-10-01", "lines": [{"name": "a", "points": []}]}`,
			[]string{"/origin: Expected a month in the form YYYY-MM."}},
		{"origin without period", "series", `{"origin": "2026-10", "lines": [{"name": "a", "points": []}]}`,
			[]string{"/origin: Expected an RFC 3339 date and time, such as 2026-10-15T09:30:00Z."}},

		// series: each point later than the one before it.
		{"offsets", "series", points("", "2026-01-01T10:00:00+02:00", "2026-01-01T09:00:00Z"), nil},
		{"offsets, the other way", "series", points("", "2026-01-01T09:00:00Z", "2026-01-01T10:00:00+02:00"),
			[]string{"/lines/0/points/1/at: Expected a time later than the point before it."}},
		{"the same instant", "series", points("", "2026-01-01T09:00:00Z", "2026-01-01T10:00:00+01:00", "2026-01-01T10:00:00.000+01:00"), []string{
			"/lines/0/points/1/at: Expected a time later than the point before it.",
			"/lines/0/points/2/at: Expected a time later than the point before it.",
		}},
		{"fractions", "series", points("", "2026-01-01T09:00:00Z", "2026-01-01T09:00:00.05Z", "2026-01-01T09:00:00.5Z", "2026-01-01T09:00:00.50001Z", "2026-01-01T09:00:01Z"), nil},
		{"fractions, the other way", "series", points("", "2026-01-01T09:00:00.5Z", "2026-01-01T09:00:00.05Z"),
			[]string{"/lines/0/points/1/at: Expected a time later than the point before it."}},
		{"days in order", "series", points("day", "2026-01-02", "2026-01-01", "2026-01-01"), []string{
			"/lines/0/points/1/at: Expected a time later than the point before it.",
			"/lines/0/points/2/at: Expected a time later than the point before it.",
		}},
		{"weeks across years", "series", points("week", "2026-W53", "2027-W01", "2026-W52"),
			[]string{"/lines/0/points/2/at: Expected a time later than the point before it."}},
		{"quarters in order", "series", points("quarter", "2026-Q2", "2026-Q1"),
			[]string{"/lines/0/points/1/at: Expected a time later than the point before it."}},
		{"years in order", "series", points("year", "2026", "2026"),
			[]string{"/lines/0/points/1/at: Expected a time later than the point before it."}},
		{"after a bad at, no order", "series", points("month", "2026-05", "2026-5", "2026-01"),
			[]string{"/lines/0/points/1/at: Expected a month in the form YYYY-MM."}},
		{"each line its own order", "series", `{"period": "year", "lines": [{"name": "a", "points": [{"at": "2030", "value": 1}]}, {"name": "b", "points": [{"at": "2020", "value": 1}]}]}`, nil},

		// categories.
		{"no values", "categories", cats(0), []string{"/values: Expected at least 1 value."}},
		{"1 value", "categories", cats(1), nil},
		{"200 values", "categories", cats(200), nil},
		{"201 values", "categories", cats(201), []string{"/values: Expected at most 200 values."}},
		{"a value name again", "categories", `{"values": [{"name": "a", "value": 1}, {"name": "a", "value": 2}]}`,
			[]string{"/values/1/name: Expected a name no value before it has."}},
		{"category bounds", "categories", `{"unit": "h", "values": [{"name": "a", "value": 1, "low": 0, "high": 1}, {"name": "b", "value": 1, "low": 2, "high": 0}]}`, []string{
			"/values/1/high: Expected a high at least its value.",
			"/values/1/low: Expected a low at most its value.",
		}},
		{"category fields", "categories", `{"values": [{"value": 1, "label": "x"}], "title": ""}`, []string{
			"/title: Expected no such field: categories have only unit and values.",
			`/values/0: Expected the field "name".`,
			"/values/0/label: Expected no such field: a value has only name, value, low and high.",
		}},
		{"category names", "categories", mustJSON(map[string]any{"unit": "", "values": []any{map[string]any{"name": name65, "value": 1}}}), []string{
			"/unit: Expected a unit of 1 to 64 characters.",
			"/values/0/name: Expected a name of 1 to 64 characters.",
		}},

		// table.
		{"no columns", "table", table(0, 0), []string{"/columns: Expected at least 1 column."}},
		{"50 columns", "table", table(50, 1), nil},
		{"51 columns", "table", table(51, 1), []string{"/columns: Expected at most 50 columns."}},
		{"no rows", "table", table(3, 0), nil},
		{"500 rows", "table", table(2, 500), nil},
		{"501 rows", "table", table(2, 501), []string{"/rows: Expected at most 500 rows."}},
		{"cells", "table", `{"columns": [{"name": "a", "unit": "u"}, {"name": "b"}, {"name": "c"}, {"name": "d"}, {"name": "e"}], "rows": [["x", 1.5, true, false, null]]}`, nil},
		{"cells of other types", "table", `{"columns": [{"name": "a"}, {"name": "b"}], "rows": [[{}, []]]}`, []string{
			"/rows/0/0: Expected a cell: text, a number, true, false or null.",
			"/rows/0/1: Expected a cell: text, a number, true, false or null.",
		}},
		{"a cell for each column", "table", `{"columns": [{"name": "a"}, {"name": "b"}, {"name": "c"}], "rows": [[1, 2, 3], [1, 2], [1, 2, 3, 4], []]}`, []string{
			"/rows/1: Expected 3 cells, one for each column.",
			"/rows/2: Expected 3 cells, one for each column.",
			"/rows/3: Expected 3 cells, one for each column.",
		}},
		{"one column", "table", `{"columns": [{"name": "a"}], "rows": [[1, 2]]}`, []string{"/rows/0: Expected 1 cell, one for each column."}},
		{"a column name again", "table", `{"columns": [{"name": "a"}, {"name": "a"}], "rows": []}`,
			[]string{"/columns/1/name: Expected a name no column before it has."}},
		{"table fields", "table", `{"columns": [{"name": "a", "unit": "", "width": 3}], "rows": [[1]], "caption": ""}`, []string{
			"/caption: Expected no such field: a table has only columns and rows.",
			"/columns/0/unit: Expected a unit of 1 to 64 characters.",
			"/columns/0/width: Expected no such field: a column has only name and unit.",
		}},
		{"table without rows", "table", `{"columns": [{"name": "a"}]}`, []string{`Expected the field "rows".`}},
		{"rows not lists", "table", `{"columns": [{"name": "a"}], "rows": [1, {}]}`, []string{
			"/rows/0: Expected a list.",
			"/rows/1: Expected a list.",
		}},

		// text.
		{"empty text", "text", `{"text": ""}`, nil},
		{"65,536 bytes", "text", mustJSON(map[string]any{"text": strings.Repeat("a", 65536)}), nil},
		{"65,537 bytes", "text", mustJSON(map[string]any{"text": strings.Repeat("a", 65537)}), []string{"/text: Expected at most 65,536 bytes of text in UTF-8."}},
		{"65,536 bytes of 2-byte characters", "text", mustJSON(map[string]any{"text": strings.Repeat("é", 32768)}), nil},
		{"65,538 bytes in fewer characters", "text", mustJSON(map[string]any{"text": strings.Repeat("€", 21846)}), []string{"/text: Expected at most 65,536 bytes of text in UTF-8."}},
		{"65,537 characters", "text", mustJSON(map[string]any{"text": strings.Repeat("é", 65537)}), []string{"/text: Expected at most 65,536 bytes of text in UTF-8."}},
		{"text fields", "text", `{"markdown": "a"}`, []string{
			`Expected the field "text".`,
			"/markdown: Expected no such field: a text has only text.",
		}},
		{"text not text", "text", `{"text": ["a"]}`, []string{"/text: Expected text."}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { expect(t, c.shape, c.doc, c.want...) })
	}
}
