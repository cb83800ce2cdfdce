package shape

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"quire/words/refusal"
)

func TestNamesAndKnown(t *testing.T) {
	if got, want := Names(), []string{"series", "categories", "table", "text"}; !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	Names()[0] = "changed"
	if Names()[0] != "series" {
		t.Fatal("Names gives its own slice away")
	}
	for _, n := range Names() {
		if !Known(n) {
			t.Errorf("Known(%q) = false", n)
		}
	}
	for _, n := range []string{"", "Series", "none", "chart", "series "} {
		if Known(n) {
			t.Errorf("Known(%q) = true", n)
		}
		if Schema(n) != nil {
			t.Errorf("Schema(%q) is not nil", n)
		}
		want := []refusal.Issue{{Path: "", Message: "Expected the name of a shape: series, categories, table, or text."}}
		if got := Check(n, []byte(`{}`)); !slices.Equal(got, want) {
			t.Errorf("Check(%q) = %v", n, got)
		}
		if got := CheckValue(n, map[string]any{}); !slices.Equal(got, want) {
			t.Errorf("CheckValue(%q) = %v", n, got)
		}
	}
}

func TestSchemas(t *testing.T) {
	for _, n := range Names() {
		var doc map[string]any
		if err := json.Unmarshal(Schema(n), &doc); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if doc["$id"] != "https://on.auto/shapes/"+n || doc["title"] != n {
			t.Errorf("%s: $id %v, title %v", n, doc["$id"], doc["title"])
		}
		if doc["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("%s: $schema %v", n, doc["$schema"])
		}
		// Every record takes the fields listed and no others.
		var closed func(path string, s map[string]any)
		closed = func(path string, s map[string]any) {
			if s["type"] == "object" && s["additionalProperties"] != false {
				t.Errorf("%s%s: a record open to other fields", n, path)
			}
			if props, ok := s["properties"].(map[string]any); ok {
				for k, p := range props {
					closed(path+"/properties/"+k, p.(map[string]any))
				}
			}
			if items, ok := s["items"].(map[string]any); ok {
				closed(path+"/items", items)
			}
		}
		closed("", doc)
		ch := compiled()[n]
		if ch.schema == nil || ch.schema.DraftVersion != 2020 {
			t.Errorf("%s: not compiled as draft 2020-12", n)
		}
		if ch.plan == nil {
			t.Errorf("%s: no plan, so every check goes to the validator", n)
		}
	}
	if a, b := Schema("text"), Schema("text"); &a[0] == &b[0] {
		t.Error("Schema gives its own bytes away")
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		in   refusal.Issue
		want string
	}{
		{refusal.Issue{Path: "/lines/0/points/2/at", Message: "Expected a time later than the point before it."},
			"/lines/0/points/2/at: Expected a time later than the point before it."},
		{refusal.Issue{Path: "", Message: "Expected JSON in UTF-8."}, "Expected JSON in UTF-8."},
		{refusal.Issue{Path: "/text", Line: 3, Message: "Expected text."}, "/text (line 3): Expected text."},
	} {
		if got := Format(c.in); got != c.want {
			t.Errorf("Format(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

// The worked examples of output-shapes.md.
func TestSpecExamples(t *testing.T) {
	signups := `{
  "unit": "sign-ups",
  "period": "month",
  "lines": [
    {
      "name": "Sign-ups",
      "points": [
        { "at": "2026-08", "value": 40 },
        { "at": "2026-09", "value": 52 }
      ]
    }
  ],
  "marks": [{ "label": "Monthly average", "value": 46 }]
}`
	expect(t, "series", signups)
	expect(t, "series", strings.Replace(signups, `"2026-09"`, `"2026-9"`, 1),
		"/lines/0/points/1/at: Expected a month in the form YYYY-MM.")

	// The workflow's output.as makes this table of campaign-pace's output.
	expect(t, "table", `{"columns": [{"name": "Campaign"}, {"name": "Spend", "unit": "cents"}, {"name": "Pace", "unit": "per mille"}],
		"rows": [["Spring sale", 1250000, 980], ["Newsletter", 40000, null]]}`)
	// The reasoning function's hours for each support queue.
	expect(t, "categories", `{"unit": "hours", "values": [
		{"name": "Billing", "value": 32, "low": 24, "high": 40},
		{"name": "Technical", "value": 55.5, "low": 40, "high": 70}]}`)
	// A function that predicts a total answers one point of a line named total.
	expect(t, "series", `{"period": "month", "origin": "2026-10", "lines": [{"name": "total", "points": [{"at": "2026-12", "value": 182450, "low": 170000, "high": 190000}]}]}`)

	// 2026-10-15T10:00:00+01:00 comes before 2026-10-15T09:30:00Z.
	expect(t, "series", `{"lines": [{"name": "a", "points": [{"at": "2026-10-15T10:00:00+01:00", "value": 1}, {"at": "2026-10-15T09:30:00Z", "value": 2}]}]}`)
	expect(t, "series", `{"lines": [{"name": "a", "points": [{"at": "2026-10-15T09:30:00Z", "value": 1}, {"at": "2026-10-15T10:00:00+01:00", "value": 2}]}]}`,
		"/lines/0/points/1/at: Expected a time later than the point before it.")
	// 2026-W53 is a week, and 2027-W53 is not.
	expect(t, "series", points("week", "2026-W52", "2026-W53", "2027-W01", "2027-W52"))
	expect(t, "series", points("week", "2027-W52", "2027-W53"),
		"/lines/0/points/1/at: Expected a week its year has: 2027 has 52 weeks.")
	// The name that is no shape.
	expect(t, "chart", `{}`, "Expected the name of a shape: series, categories, table, or text.")
}

// expect checks doc against the shape and wants exactly these issues, as
// Format writes them, in this order.
func expect(t *testing.T, shape, doc string, want ...string) {
	t.Helper()
	got := formatAll(Check(shape, []byte(doc)))
	if !slices.Equal(got, want) {
		short := doc
		if len(short) > 200 {
			short = short[:200] + "…"
		}
		t.Errorf("%s %s:\n got  %q\n want %q", shape, short, got, want)
	}
	seen(got)
	// The plan and the validator agree on every value the tests check.
	if v, msg := decode([]byte(doc)); msg == "" && Known(shape) && utf8.Valid([]byte(doc)) {
		ch := compiled()[shape]
		if fast, slow := ch.plan.valid(v), ch.schema.Validate(std(v)) == nil; fast != slow {
			t.Errorf("%s: the plan says valid=%v, the validator %v", shape, fast, slow)
		}
		// And CheckValue of encoding/json's value agrees with Check.
		if again := formatAll(CheckValue(shape, std(v))); !slices.Equal(again, got) {
			t.Errorf("%s: CheckValue gives %q, Check %q", shape, again, got)
		}
		if fast, slow := ch.plan.valid(std(v)), ch.schema.Validate(std(v)) == nil; fast != slow {
			t.Errorf("%s: the plan says valid=%v, the validator %v", shape, fast, slow)
		}
	}
}

func formatAll(issues []refusal.Issue) []string {
	var out []string
	for _, is := range issues {
		out = append(out, Format(is))
	}
	return out
}

// messagesSeen gathers every message the tests see, for TestMessageTable.
var messagesSeen sync.Map

func seen(formatted []string) {
	for _, f := range formatted {
		if i := strings.Index(f, "Expected"); i >= 0 {
			messagesSeen.Store(f[i:], true)
		}
	}
}

// points makes a series of one line whose points are at these times.
func points(period string, ats ...string) string {
	var ps []map[string]any
	for i, at := range ats {
		ps = append(ps, map[string]any{"at": at, "value": i})
	}
	doc := map[string]any{"lines": []any{map[string]any{"name": "a", "points": ps}}}
	if period != "" {
		doc["period"] = period
	}
	return mustJSON(doc)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// seriesOf makes a series of these lines, each of that many points, a
// minute apart.
func seriesOf(counts ...int) string {
	var lines []any
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for l, n := range counts {
		ps := make([]any, n)
		for i := range ps {
			ps[i] = map[string]any{"at": start.Add(time.Duration(i) * time.Minute).Format(time.RFC3339), "value": i}
		}
		lines = append(lines, map[string]any{"name": fmt.Sprintf("line %d", l), "points": ps})
	}
	return mustJSON(map[string]any{"lines": lines})
}

func repeat(n, each int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = each
	}
	return out
}

func TestMessageTable(t *testing.T) {
	t.Run("rules", TestRules)
	t.Run("examples", TestSpecExamples)
	t.Run("json", TestJSON)
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	// Numbers and quoted field names vary.
	digits := regexp.MustCompile(`[0-9][0-9,]*|"[a-z]+"`)
	table := digits.ReplaceAllString(string(src), "N")
	n := 0
	messagesSeen.Range(func(k, _ any) bool {
		n++
		msg := k.(string)
		if strings.Contains(msg, "Expected a value of the shape") {
			t.Errorf("a keyword without its words: %q", msg)
		}
		if !strings.Contains(table, digits.ReplaceAllString(msg, "N")) {
			t.Errorf("doc.go's table lacks %q", msg)
		}
		return true
	})
	if n < 40 {
		t.Errorf("only %d messages seen", n)
	}
}

func TestJSON(t *testing.T) {
	expect(t, "text", ``, "Expected JSON: the text ends before its value does.")
	expect(t, "text", `{"text": "a"`, "Expected JSON: the text ends before its value does.")
	expect(t, "text", `{"text": "a"} x`, "Expected JSON: the text holds more than one value.")
	expect(t, "text", `{"text": 'a'}`, "Expected JSON: the text is not JSON at byte 10.")
	expect(t, "text", "{\"text\": \"\xff\"}", "Expected JSON in UTF-8.")
	expect(t, "text", "\ufeff{\"text\": \"a\"}", "Expected JSON: the text is not JSON at byte 1.")
	expect(t, "text", " {\"text\": \"a\\u00e9\\ud83d\\ude00\\ud800\"}\n")
	expect(t, "series", `{"lines": [{"name": "a", "points": [{"at": "2026-01-01T00:00:00Z", "value": 1e400}]}]}`,
		"/lines/0/points/0/value: Expected a number that a 64-bit double holds.")
	expect(t, "table", `{"columns": [{"name": "a"}], "rows": [[-1e309]]}`,
		"/rows/0/0: Expected a number that a 64-bit double holds.")
}

// TestCheckValue: values as encoding/json gives them, with float64 or
// json.Number, and Go values JSON has no form for.
func TestCheckValue(t *testing.T) {
	doc := `{"lines": [{"name": "a", "points": [{"at": "2026-01-01T00:00:00Z", "value": 2, "low": 3}]}]}`
	want := []refusal.Issue{{Path: "/lines/0/points/0/low", Message: "Expected a low at most its value."}}
	var plain any
	if err := json.Unmarshal([]byte(doc), &plain); err != nil {
		t.Fatal(err)
	}
	if got := CheckValue("series", plain); !slices.Equal(got, want) {
		t.Errorf("float64: %v", got)
	}
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var numbers any
	if err := dec.Decode(&numbers); err != nil {
		t.Fatal(err)
	}
	if got := CheckValue("series", numbers); !slices.Equal(got, want) {
		t.Errorf("json.Number: %v", got)
	}
	for _, c := range []struct {
		v    any
		want []string
	}{
		{map[string]any{"text": "a"}, nil},
		{map[string]any{"text": 1}, []string{"/text: Expected text."}},
		{map[string]any{"text": []string{"a"}}, []string{"/text: Expected a JSON value."}},
		{map[string]string{"text": "a"}, []string{"Expected a JSON value."}},
		{nil, []string{"Expected an object."}},
	} {
		if got := formatAll(CheckValue("text", c.v)); !slices.Equal(got, c.want) {
			t.Errorf("%#v: %q, want %q", c.v, got, c.want)
		}
	}
	for _, c := range []struct {
		v    any
		want []string
	}{
		{[]any{int64(3), uint8(2), float32(1.5), json.Number("2")}, nil},
		{[]any{math.NaN(), math.Inf(1), json.Number("x"), float32(math.Inf(-1))}, []string{
			"/rows/0/0: Expected a number that a 64-bit double holds.",
			"/rows/0/1: Expected a number that a 64-bit double holds.",
			"/rows/0/2: Expected a number that a 64-bit double holds.",
			"/rows/0/3: Expected a number that a 64-bit double holds.",
		}},
	} {
		v := map[string]any{"columns": []any{
			map[string]any{"name": "a"}, map[string]any{"name": "b"}, map[string]any{"name": "c"}, map[string]any{"name": "d"},
		}, "rows": []any{c.v}}
		if got := formatAll(CheckValue("table", v)); !slices.Equal(got, c.want) {
			t.Errorf("%#v: %q, want %q", c.v, got, c.want)
		}
		seen(c.want)
	}
}

// Check and CheckValue are safe for concurrent use, the first call among
// them.
func TestConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, n := range Names() {
				Check(n, []byte(`{"lines": [], "values": [], "columns": [], "text": 1}`))
			}
		}()
	}
	wg.Wait()
}
