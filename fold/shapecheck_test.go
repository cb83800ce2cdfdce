package fold

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"
)

// The sandbox's check of the shapes (sandbox.js, after every fold) and
// ledger/shape's, in Go, say the same of every view: valid values of each
// shape and values a step or two from valid, generated at random. Go
// checks the views as the sandbox gives them back, so both judge the same
// text.
func TestSandboxShapeCheckAgreesWithGo(t *testing.T) {
	t.Parallel()
	n := 120
	if os.Getenv("QUIRE_TEST_LONG") != "" {
		n = 3000
	}
	p := newTestPool(t, Limits{})
	shapes := []string{"series", "categories", "table", "text"}
	r := rand.New(rand.NewSource(11))
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	counts := map[string][2]int{}
	for _, name := range shapes {
		prog := jsProgram(`export function fold(view, event) { return { v: event.data.v }; }`, map[string]string{"v": name})
		for i := range n {
			doc := genShape(r, name)
			ev := event(int64(i+1), at, `{"v":`+doc+`}`)
			h, out, err := p.call(context.Background(), prog, json.RawMessage(`{}`), []Event{ev})
			if err != nil {
				t.Fatal(err)
			}
			if h.Kind != "" && h.Kind != kindShapeCheck {
				t.Fatalf("%s %s: the fold stalled as %s: %s", name, doc, h.Kind, h.Error)
			}
			js := h.Kind == ""
			why := p.checkShapes(prog, out)
			if js != (why == "") {
				t.Fatalf("%s: the sandbox says valid=%v, Go says %q, of\n%s", name, js, why, out)
			}
			c := counts[name]
			if js {
				c[0]++
			} else {
				c[1]++
			}
			counts[name] = c
		}
	}
	for _, name := range shapes {
		if c := counts[name]; c[0] < n/10 || c[1] < n/10 {
			t.Fatalf("%s: %d valid and %d not: the values are too one-sided to compare", name, c[0], c[1])
		}
	}
}

// genShape makes a value of the shape, and then, more often than not,
// breaks it a little: a field left out or added, a bound passed, a name
// repeated, an at in another form or out of order.
func genShape(r *rand.Rand, name string) string {
	var v map[string]any
	switch name {
	case "series":
		v = genSeries(r)
	case "categories":
		vals := []any{}
		for i := range 1 + r.Intn(4) {
			vals = append(vals, genRecord(r, genName(r, i)))
		}
		v = map[string]any{"values": vals}
		if r.Intn(2) == 0 {
			v["unit"] = genName(r, 9)
		}
	case "table":
		cols := []any{}
		nc := 1 + r.Intn(3)
		for i := range nc {
			c := map[string]any{"name": genName(r, i)}
			if r.Intn(3) == 0 {
				c["unit"] = genName(r, 7)
			}
			cols = append(cols, c)
		}
		rows := []any{}
		for range r.Intn(4) {
			row := []any{}
			for range nc {
				row = append(row, []any{"a", 1.5, true, nil, math.Copysign(0, -1), "é\U0001F600"}[r.Intn(6)])
			}
			rows = append(rows, row)
		}
		v = map[string]any{"columns": cols, "rows": rows}
	case "text":
		sizes := []int{0, 10, 21845, 65536, 65537}
		n := sizes[r.Intn(len(sizes))]
		unit := []string{"a", "é", "€", "\U0001F600"}[r.Intn(4)]
		v = map[string]any{"text": strings.Repeat(unit, max(n/len(unit), 0)) + strings.Repeat("a", r.Intn(2))}
	}
	b, _ := json.Marshal(v)
	doc := string(b)
	if r.Intn(3) == 0 {
		return doc // as made: valid, but for what chance put in
	}
	for range 1 + r.Intn(2) {
		if m := mutate(r, doc); json.Valid([]byte(m)) {
			doc = m
		}
	}
	return doc
}

func genName(r *rand.Rand, i int) string {
	switch r.Intn(12) {
	case 0:
		return strings.Repeat("\U0001F600", 64) // 64 characters, 128 UTF-16 units
	case 1:
		return strings.Repeat("x", 65)
	case 2:
		return strings.Repeat("é", 64)
	case 3:
		return "same"
	}
	return fmt.Sprintf("name %d", i)
}

func genRecord(r *rand.Rand, name string) map[string]any {
	rec := map[string]any{"name": name, "value": float64(r.Intn(100)) / 4}
	if r.Intn(3) == 0 {
		rec["low"] = rec["value"].(float64) - float64(r.Intn(3)-1)
	}
	if r.Intn(3) == 0 {
		rec["high"] = rec["value"].(float64) + float64(r.Intn(3)-1)
	}
	return rec
}

func genSeries(r *rand.Rand) map[string]any {
	periods := []string{"", "day", "week", "month", "quarter", "year"}
	period := periods[r.Intn(len(periods))]
	v := map[string]any{}
	if period != "" {
		v["period"] = period
	}
	if r.Intn(3) == 0 {
		v["unit"] = genName(r, 8)
	}
	lines := []any{}
	for i := range 1 + r.Intn(2) {
		points := []any{}
		t := time.Date(1999+r.Intn(30), time.Month(1+r.Intn(12)), 1+r.Intn(28), r.Intn(24), r.Intn(60), r.Intn(60), 0, time.UTC)
		for range r.Intn(5) {
			p := map[string]any{"at": atOf(r, period, t), "value": float64(r.Intn(50))}
			if r.Intn(4) == 0 {
				p["low"] = p["value"].(float64) - 1
			}
			points = append(points, p)
			switch period {
			case "", "day":
				t = t.Add(time.Duration(r.Intn(3)) * 24 * time.Hour)
			case "week":
				t = t.AddDate(0, 0, 7*r.Intn(3))
			case "month":
				t = t.AddDate(0, r.Intn(3), 0)
			case "quarter":
				t = t.AddDate(0, 3*r.Intn(3), 0)
			case "year":
				t = t.AddDate(r.Intn(3), 0, 0)
			}
		}
		lines = append(lines, map[string]any{"name": genName(r, i), "points": points})
	}
	v["lines"] = lines
	if r.Intn(3) == 0 {
		v["origin"] = atOf(r, period, time.Date(2026, 12, 28, 0, 0, 0, 0, time.UTC))
	}
	if r.Intn(3) == 0 {
		v["marks"] = []any{map[string]any{"label": genName(r, 3), "value": 2.5}}
	}
	return v
}

// atOf writes t in the period's form, or as an RFC 3339 time in one of
// its forms (an offset, a fraction with trailing zeros, lower case).
func atOf(r *rand.Rand, period string, t time.Time) string {
	switch period {
	case "day":
		return t.Format("2006-01-02")
	case "week":
		y, w := t.ISOWeek()
		return fmt.Sprintf("%04d-W%02d", y, w)
	case "month":
		return t.Format("2006-01")
	case "quarter":
		return fmt.Sprintf("%04d-Q%d", t.Year(), (int(t.Month())+2)/3)
	case "year":
		return t.Format("2006")
	}
	switch r.Intn(4) {
	case 0:
		return t.In(time.FixedZone("", -5*3600-30*60)).Format("2006-01-02T15:04:05.000-07:00")
	case 1:
		return strings.ToLower(t.Format("2006-01-02T15:04:05.5Z"))
	case 2:
		return t.Format("2006-01-02T15:04:05.50Z")
	}
	return t.Format(time.RFC3339)
}

// mutate changes one thing in a JSON text: a field, a number, an at, a
// name.
func mutate(r *rand.Rand, doc string) string {
	swaps := [][2]string{
		{`"value":`, `"value":"1","other":`}, {`"value":`, `"other":1,"value":`}, {`"name":"`, `"name":"same`},
		{`"name":"`, `"name":"\ud800`}, {`"name":"name 1"`, `"name":"name 0"`}, {`"low":`, `"low":1e300,"x":`},
		{`"high":`, `"high":-1e300,"y":`}, {`"points":[`, `"points":[{"at":"2026-02-29","value":1},`},
		{`"points":[`, `"points":[{"at":"2027-W53","value":1},`}, {`"points":[`, `"points":[{"at":"2026-W53","value":1},`},
		{`"points":[`, `"points":[{"at":"2026-Q5","value":1},`}, {`"points":[`, `"points":[{"at":"0000-01-01T00:00:00Z","value":1},`},
		{`"points":[`, `"points":[{"at":"1999-12-31T23:59:60Z","value":1},`}, {`"points":[`, `"points":[{"at":"2024-02-29","value":1},`},
		{`"points":[`, `"points":[{"at":"2026-13","value":1},`}, {`"points":[`, `"points":[{"at":"9999","value":1},`},
		{`"rows":[`, `"rows":[["a"],`}, {`"rows":[`, `"rows":[[{}],`}, {`"columns":[`, `"columns":[{"name":"same"},`},
		{`"lines":[`, `"lines":[],"zz":[`}, {`"values":[`, `"values":[],"v2":[`}, {`"period":"`, `"period":"de`},
		{`"text":"`, `"text":"\udc00`}, {`"unit":"`, `"unit":"","u2":"`}, {`"label":"`, `"label":"","l2":"`},
		{`Z"`, `+01:00"`}, {`Z"`, `"`}, {`:00"`, `:00.000"`}, {`-01`, `-00`}, {`-W`, `-w`},
	}
	for range 10 {
		s := swaps[r.Intn(len(swaps))]
		if i := strings.Index(doc, s[0]); i >= 0 {
			if r.Intn(2) == 0 {
				if j := strings.LastIndex(doc, s[0]); j >= 0 {
					i = j
				}
			}
			return doc[:i] + s[1] + doc[i+len(s[0]):]
		}
	}
	return doc
}
