package shape

import (
	"sort"
	"strconv"
	"strings"

	"quire/words/jsonptr"
	"quire/words/refusal"
)

// The messages of the issues. doc.go lists them all in a table; a test
// keeps that table and these words together.
const (
	msgUnknownShape = "Expected the name of a shape: series, categories, table, or text."
	msgNotUTF8      = "Expected JSON in UTF-8."
	msgJSONEnds     = "Expected JSON: the text ends before its value does."
	msgJSONMore     = "Expected JSON: the text holds more than one value."
	msgNotJSON      = "Expected a JSON value."
	msgDouble       = "Expected a number that a 64-bit double holds."

	msgObject = "Expected an object."
	msgList   = "Expected a list."
	msgText   = "Expected text."
	msgNumber = "Expected a number."
	msgCell   = "Expected a cell: text, a number, true, false or null."
	msgPeriod = "Expected a period: day, week, month, quarter or year."

	msgLater   = "Expected a time later than the point before it."
	msgLow     = "Expected a low at most its value."
	msgHigh    = "Expected a high at least its value."
	msgPoints  = "Expected at most 2,000 points across the lines."
	msgTextLen = "Expected at most 65,536 bytes of text in UTF-8."

	msgDay     = "Expected a day in the form YYYY-MM-DD."
	msgWeek    = "Expected a week in the form YYYY-Www."
	msgMonth   = "Expected a month in the form YYYY-MM."
	msgQuarter = "Expected a quarter in the form YYYY-Qn."
	msgYear    = "Expected a year in the form YYYY."
	msgTime    = "Expected an RFC 3339 date and time, such as 2026-10-15T09:30:00Z."
)

// msgDayOfMonth: a day its month lacks, such as 2026-02-29.
func msgDayOfMonth(year, month, days int) string {
	return "Expected a day its month has: " + pad(year, 4) + "-" + pad(month, 2) + " has " + strconv.Itoa(days) + " days."
}

// msgWeekOfYear: a week its year lacks, such as 2027-W53.
func msgWeekOfYear(year, weeks int) string {
	return "Expected a week its year has: " + pad(year, 4) + " has " + strconv.Itoa(weeks) + " weeks."
}

// msgUnique: a name an earlier record of its list has.
func msgUnique(record string) string {
	return "Expected a name no " + record + " before it has."
}

// msgCells: a row without one cell for each column.
func msgCells(columns int) string {
	return "Expected " + count(columns, "cell") + ", one for each column."
}

// msgRequired: a record without a field it needs.
func msgRequired(field string) string {
	return `Expected the field "` + field + `".`
}

// msgLength: a name, a label or a unit that is empty or too long; what is
// the field's name.
func msgLength(what string) string {
	return "Expected a " + what + " of 1 to 64 characters."
}

// msgAtLeast and msgAtMost: a list with too few or too many records.
func msgAtLeast(n int, noun string) string { return "Expected at least " + count(n, noun) + "." }
func msgAtMost(n int, noun string) string  { return "Expected at most " + count(n, noun) + "." }

// msgNoField: a field its record does not take; fields says which it
// does, such as "a point has only at, value, low and high".
func msgNoField(fields string) string {
	return "Expected no such field: " + fields + "."
}

// fields says, for each shape, the fields each record takes, by place: the
// path with each index written as "*".
var fields = map[string]map[string]string{
	"series": {
		"":                  "a series has only unit, period, origin, lines and marks",
		"/lines/*":          "a line has only name and points",
		"/lines/*/points/*": "a point has only at, value, low and high",
		"/marks/*":          "a mark has only label and value",
	},
	"categories": {
		"":          "categories have only unit and values",
		"/values/*": "a value has only name, value, low and high",
	},
	"table": {
		"":           "a table has only columns and rows",
		"/columns/*": "a column has only name and unit",
	},
	"text": {
		"": "a text has only text",
	},
}

// nouns gives the singular of each list's name.
var nouns = map[string]string{
	"lines": "line", "points": "point", "marks": "mark", "values": "value",
	"columns": "column", "rows": "row",
}

// count writes n and the noun, in the plural unless n is 1, with
// thousands separated by commas: "1 line", "2,000 points".
func count(n int, noun string) string {
	s := thousands(n) + " " + noun
	if n != 1 {
		s += "s"
	}
	return s
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func pad(n, width int) string {
	s := strconv.Itoa(n)
	for len(s) < width {
		s = "0" + s
	}
	return s
}

// collector gathers the issues of one check.
type collector struct {
	issues []refusal.Issue
}

func (c *collector) add(path, message string) {
	c.issues = append(c.issues, refusal.Issue{Path: path, Message: message})
}

// done sorts the issues by path, then message, and drops repeats: the
// schema and a rule may find the same problem.
func (c *collector) done() []refusal.Issue {
	if len(c.issues) == 0 {
		return nil
	}
	sort.Slice(c.issues, func(i, j int) bool {
		a, b := c.issues[i], c.issues[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Message < b.Message
	})
	out := c.issues[:1]
	for _, is := range c.issues[1:] {
		if last := out[len(out)-1]; is.Path != last.Path || is.Message != last.Message {
			out = append(out, is)
		}
	}
	return out
}

// pointer writes the JSON pointer of a list of tokens.
func pointer(toks []string) string {
	var b strings.Builder
	for _, t := range toks {
		b.WriteByte('/')
		b.WriteString(jsonptr.Escape(t))
	}
	return b.String()
}
