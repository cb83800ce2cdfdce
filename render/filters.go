package render

import (
	"errors"
	"fmt"
	"html"
	"math"
	"net/url"
	"regexp"
	"strings"
	"unicode"
)

// filter is one entry of the table of filters a template may use: Liquid's
// standard filters and the page format's own (DESIGN.md, "Folding and
// rendering"). Each entry's Example renders, in a test, to Want.
type filter struct {
	Name     string
	Min, Max int // how many arguments it takes
	Fn       func(in any, args []any, st *rstate) (any, error)
	Example  string
	Want     string
	Doc      string
}

// filters is the table. Examples read output = exampleOutput (filters_test.go).
var filters = []filter{
	// The page format's own.
	{"clip", 1, 1, fClip, `{{ "Three things our team learned" | clip: 12 }}`, "Three thing…",
		"Cuts text to at most n characters (Unicode code points), the ellipsis … included; shorter text is left as it is."},
	{"money", 0, 1, fMoney, `{{ 182450 | money }} {{ 132.25 | money }} {{ 1234.5 | money }} {{ 99 | money: "EUR" }} {{ -5.5 | money: "CHF" }}`,
		"$182,450 $132.25 $1,234.50 €99 -CHF 5.50",
		"An amount in US dollars, or in the currency its argument names: whole amounts without cents, others rounded to two decimals, with thousands separators. USD $, EUR €, GBP £, JPY ¥ and INR ₹ have symbols; another code is written before the amount."},
	{"json", 0, 0, fJSON, `{{ output.posts | json }}`, `[{"channel":"LinkedIn","value":3},{"channel":"X","value":5}]`,
		"The value as JSON.stringify writes it: objects keep the order of their keys."},
	{"sum", 0, 1, fSum, `{{ output.posts | sum: "value" }} {{ "1,2" | split: "," | sum }}`, "8 3",
		"The sum of a list's numbers (or numbers written as text), or of the field its argument names in each item; a null counts 0."},
	{"number", 0, 1, fNumber, `{{ 1234567.5 | number }} {{ 1234.567 | number: 1 }}`, "1,234,567.5 1,234.6",
		"A number with thousands separators; with an argument, rounded to that many decimals first."},
	{"percent", 0, 1, fPercent, `{{ 0.256 | percent }} {{ 0.256 | percent: 1 }} {{ 1.5 | percent }}`, "26% 25.6% 150%",
		"A ratio as a percentage: 0.256 is 26%. Rounded to whole percents, or to the decimals its argument names."},
	// Liquid's standard filters.
	{"abs", 0, 0, fNum1(math.Abs), `{{ -17 | abs }}`, "17", "The absolute value."},
	{"append", 1, 1, fAppend, `{{ "a" | append: "b" }}`, "ab", "Text with the argument added at its end."},
	{"at_least", 1, 1, fNum2(math.Max), `{{ 4 | at_least: 5 }}`, "5", "The larger of the number and the argument."},
	{"at_most", 1, 1, fNum2(math.Min), `{{ 4 | at_most: 3 }}`, "3", "The smaller of the number and the argument."},
	{"capitalize", 0, 0, fCapitalize, `{{ "my title" | capitalize }}`, "My title", "The first character in upper case, the rest in lower case."},
	{"ceil", 0, 0, fNum1(math.Ceil), `{{ 1.2 | ceil }}`, "2", "Rounded up to a whole number."},
	{"compact", 0, 0, fCompact, `{{ "a,,b" | split: "," | compact | join: "-" }}`, "a--b", "The list without its null items."},
	{"concat", 1, 1, fConcat, `{{ "a" | split: "," | concat: output.posts | size }}`, "3", "The list followed by the items of the argument."},
	{"date", 1, 1, fDate, `{{ output.when | date: "%B %-d, %Y" }}`, "November 1, 2026",
		`A time (ISO 8601 text, "now" or "today") in strftime's format, in UTC.`},
	{"default", 1, 1, fDefault, `{{ output.subtitle | default: "Untitled" }}`, "Untitled",
		"The argument where the value is missing, null, false, empty text or an empty list."},
	{"divided_by", 1, 1, fDividedBy, `{{ 7 | divided_by: 2 }} {{ 7.0 | divided_by: 2 }}`, "3 3.5",
		"Division; a whole number divided by a whole number written in the template is rounded down, as in Liquid."},
	{"downcase", 0, 0, fText(strings.ToLower), `{{ "ABC" | downcase }}`, "abc", "Text in lower case."},
	{"escape", 0, 0, fText(html.EscapeString), `{{ "<b>" | escape }}`, "&lt;b&gt;", "Text with HTML's special characters escaped."},
	{"escape_once", 0, 0, fText(func(s string) string { return html.EscapeString(html.UnescapeString(s)) }), `{{ "&lt;b>" | escape_once }}`, "&lt;b&gt;", "As escape, leaving escapes already there."},
	{"first", 0, 0, fFirst, `{{ output.posts | first | map: "channel" }}{{ "a b" | split: " " | first }}`, "LinkedIna", "The first item of a list; null when empty."},
	{"floor", 0, 0, fNum1(math.Floor), `{{ 1.8 | floor }}`, "1", "Rounded down to a whole number."},
	{"join", 0, 1, fJoin, `{{ output.posts | map: "channel" | join: ", " }}`, "LinkedIn, X", "The items as text, separated by the argument (a space by default)."},
	{"last", 0, 0, fLast, `{{ output.posts | last | map: "channel" }}`, "X", "The last item of a list; null when empty."},
	{"lstrip", 0, 0, fText(func(s string) string { return strings.TrimLeftFunc(s, unicode.IsSpace) }), `[{{ "  a " | lstrip }}]`, "[a ]", "Text without white space at its start."},
	{"map", 1, 1, fMap, `{{ output.posts | map: "value" | join: "+" }}`, "3+5", "The field the argument names, of each item."},
	{"minus", 1, 1, fArith('-'), `{{ 10 | minus: 2.5 }}`, "7.5", "Subtraction."},
	{"modulo", 1, 1, fArith('%'), `{{ 7 | modulo: 3 }}`, "1", "The remainder of a division."},
	{"newline_to_br", 0, 0, fText(func(s string) string { return strings.ReplaceAll(s, "\n", "<br />\n") }), `{{ output.note | newline_to_br }}`, "a<br />\nb", "Each line break preceded by <br />."},
	{"plus", 1, 1, fArith('+'), `{{ 1 | plus: 2 }} {{ 0.1 | plus: 0.2 }}`, "3 0.30000000000000004", "Addition."},
	{"prepend", 1, 1, fPrepend, `{{ "b" | prepend: "a" }}`, "ab", "Text with the argument added at its start."},
	{"remove", 1, 1, fReplaceN("all", true), `{{ "a-b-c" | remove: "-" }}`, "abc", "Text without any of the argument."},
	{"remove_first", 1, 1, fReplaceN("first", true), `{{ "a-b-c" | remove_first: "-" }}`, "ab-c", "Text without the first of the argument."},
	{"remove_last", 1, 1, fReplaceN("last", true), `{{ "a-b-c" | remove_last: "-" }}`, "a-bc", "Text without the last of the argument."},
	{"replace", 2, 2, fReplaceN("all", false), `{{ "a-b" | replace: "-", "+" }}`, "a+b", "Text with every first argument replaced by the second."},
	{"replace_first", 2, 2, fReplaceN("first", false), `{{ "a-b-c" | replace_first: "-", "+" }}`, "a+b-c", "Text with the first of the first argument replaced."},
	{"replace_last", 2, 2, fReplaceN("last", false), `{{ "a-b-c" | replace_last: "-", "+" }}`, "a-b+c", "Text with the last of the first argument replaced."},
	{"reverse", 0, 0, fReverse, `{{ output.posts | reverse | map: "channel" | join: "," }}`, "X,LinkedIn", "The list in reverse order."},
	{"round", 0, 1, fRound, `{{ 4.800000000000001 | round }} {{ 2.345 | round: 1 }}`, "5 2.3", "Rounded to a whole number, or to the decimals its argument names (halves away from zero)."},
	{"rstrip", 0, 0, fText(func(s string) string { return strings.TrimRightFunc(s, unicode.IsSpace) }), `[{{ " a  " | rstrip }}]`, "[ a]", "Text without white space at its end."},
	{"size", 0, 0, fSize, `{{ output.posts | size }} {{ "héllo" | size }}`, "2 5", "The number of items of a list, of fields of an object, or of characters of text."},
	{"slice", 1, 2, fSlice, `{{ "Liquid" | slice: 0, 3 }} {{ "Liquid" | slice: -2, 2 }}`, "Liq id", "Part of text or of a list: from the first argument (negative counts from the end), as many as the second (1 by default)."},
	{"sort", 0, 1, fSort(false), `{{ output.posts | sort: "value" | map: "channel" | join: "," }}`, "LinkedIn,X", "The list sorted, by the field its argument names; nulls last."},
	{"sort_natural", 0, 1, fSort(true), `{{ "b,A,c" | split: "," | sort_natural | join: "" }}`, "Abc", "As sort, ignoring case."},
	{"split", 1, 1, fSplit, `{{ "a,b" | split: "," | size }}`, "2", "Text cut into a list at each argument."},
	{"strip", 0, 0, fText(strings.TrimSpace), `[{{ " a " | strip }}]`, "[a]", "Text without white space at either end."},
	{"strip_html", 0, 0, fText(func(s string) string { return htmlTags.ReplaceAllString(s, "") }), `{{ "<b>a</b>" | strip_html }}`, "a", "Text without HTML tags."},
	{"strip_newlines", 0, 0, fText(func(s string) string { return strings.NewReplacer("\r\n", "", "\n", "", "\r", "").Replace(s) }), `{{ output.note | strip_newlines }}`, "ab", "Text without line breaks."},
	{"times", 1, 1, fArith('*'), `{{ 3 | times: 1.5 }}`, "4.5", "Multiplication."},
	{"truncate", 1, 2, fTruncate, `{{ "Ground control to Major Tom." | truncate: 20 }}`, "Ground control to...", "Liquid's truncate: at most n characters, the ellipsis (... by default) included."},
	{"truncatewords", 1, 2, fTruncateWords, `{{ "Ground control to Major Tom." | truncatewords: 3 }}`, "Ground control to...", "The first n words, then the ellipsis (... by default)."},
	{"uniq", 0, 0, fUniq, `{{ "a,b,a" | split: "," | uniq | join: "" }}`, "ab", "The list without repeated items."},
	{"upcase", 0, 0, fText(strings.ToUpper), `{{ "abc" | upcase }}`, "ABC", "Text in upper case."},
	{"url_decode", 0, 0, fURLDecode, `{{ "a%20b" | url_decode }}`, "a b", "Text with URL escapes decoded."},
	{"url_encode", 0, 0, fText(url.QueryEscape), `{{ "a b&c" | url_encode }}`, "a+b%26c", "Text escaped for a URL's query."},
	{"where", 1, 2, fWhere, `{{ output.posts | where: "channel", "X" | size }}`, "1", "The items whose field (the first argument) is the second argument, or is truthy without one."},
}

var htmlTags = regexp.MustCompile(`(?s)<.*?>`)

var filterByName = func() map[string]*filter {
	m := make(map[string]*filter, len(filters))
	for i := range filters {
		m[filters[i].Name] = &filters[i]
	}
	return m
}()

// errStop is a problem that stops a render, worded for the line in place.
type errStop struct{ msg string }

func (e *errStop) Error() string { return e.msg }

func stopf(format string, args ...any) error { return &errStop{fmt.Sprintf(format, args...)} }

// call runs one filter with the state of its render: a missing input or
// argument stops the render, except as the input of default; in a condition
// of if, elsif or unless it passes on as missing, so the condition is false.
func (f *filter) call(in any, rest []any) (any, error) {
	if len(rest) == 0 {
		return nil, errors.New("the filter " + f.Name + " was called without its render")
	}
	env, _ := rest[len(rest)-1].(*filterEnv)
	if env == nil {
		return nil, errors.New("the filter " + f.Name + " was called without its render")
	}
	args := rest[:len(rest)-1]
	st := env.st
	if err := st.tick(); err != nil {
		return nil, err
	}
	if len(args) < f.Min || len(args) > f.Max {
		return nil, stopf("the filter %s takes %s", f.Name, arity(f.Min, f.Max))
	}
	for i, a := range args {
		if m, ok := a.(missing); ok {
			if env.lenient {
				return m, nil
			}
			return nil, stopf("%s", m.what)
		}
		args[i] = plain(a)
	}
	if m, ok := in.(missing); ok {
		switch {
		case f.Name == "default":
			in = nil
		case env.lenient:
			return m, nil
		default:
			return nil, stopf("%s", m.what)
		}
	}
	out, err := f.Fn(plain(in), args, st)
	if err != nil {
		var stop *errStop
		var lim *limitError
		if errors.As(err, &stop) || errors.As(err, &lim) {
			return nil, err
		}
		return nil, stopf("%s: %s", f.Name, err.Error())
	}
	if err := st.charge(weight(out)); err != nil {
		return nil, err
	}
	return lift(out, f.Name), nil
}

func arity(min, max int) string {
	switch {
	case min == max && min == 0:
		return "no argument"
	case min == max && min == 1:
		return "1 argument"
	case min == max:
		return fmt.Sprintf("%d arguments", min)
	default:
		return fmt.Sprintf("%d to %d arguments", min, max)
	}
}

// weight is what a filter's result charges to the render's memory: the
// characters of text, the items of a list.
func weight(x any) int {
	switch v := x.(type) {
	case string:
		return len(v)
	case []any:
		return len(v) + 1
	case *list:
		return len(v.items) + 1
	}
	return 1
}
