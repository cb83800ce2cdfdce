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
// words/shape's, in Go, say the same of every view: valid values of each
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
			h, out, err := p.call(context.Background(), prog, json.RawMessage(`{}`), []Event{ev}, 0)
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

// tweakFold returns the views the event gives (data.views: some of s, a
// series, c, categories, t, a table and x, a text, in its order), each
// made from JSON and then changed at random places (seeded by the event)
// into what JSON does not give back or cannot carry: undefined, NaN, an
// infinity, a negative zero, a Date, a Map, a class instance, an object
// of no prototype, a function, a symbol key, a member not enumerable, a
// getter, an object two places share (or a cycle), a hole in a list, a
// BigInt, a name repeated. An event with data.probe raises if the views
// it is given hold anything JSON would not have given back.
const tweakFold = `export function fold(view, event) {
  const d = event.data;
  if (d.probe) {
    const seen = new Set();
    const look = (x, path) => {
      if (typeof x === 'number' && Object.is(x, -0)) throw new Error('a negative zero at ' + path);
      if (typeof x !== 'object' || x === null) return;
      if (seen.has(x)) throw new Error('a shared object at ' + path);
      seen.add(x);
      const proto = Object.getPrototypeOf(x);
      if (proto !== (Array.isArray(x) ? Array.prototype : Object.prototype)) throw new Error('another prototype at ' + path);
      const own = Reflect.ownKeys(x).filter((k) => !(Array.isArray(x) && k === 'length'));
      const keys = Object.keys(x);
      if (own.length !== keys.length) throw new Error('a hidden or symbol key at ' + path);
      for (const k of keys) {
        if (Object.getOwnPropertyDescriptor(x, k).get !== undefined) throw new Error('a getter at ' + path + '/' + k);
        look(x[k], path + '/' + k);
      }
    };
    look(view, '');
    return view;
  }
  // data.edits: each a path from the views, a change, and its value.
  const special = { negzero: () => -0, nan: () => NaN, inf: () => Infinity, undef: () => undefined,
    date: () => new Date(0), map: () => new Map(), fn: () => () => 1, big: () => 1n,
    thing: () => new (class Thing { constructor() { this.at = '2026'; this.name = 'n'; this.value = 1; } })() };
  for (const [path, op, arg] of d.edits ?? []) {
    let o = d.views;
    for (const k of path.slice(0, -1)) o = o[k];
    const k = path[path.length - 1];
    switch (op) {
      case 'set': o[k] = typeof arg === 'string' && special[arg] ? special[arg]() : arg; break;
      case 'delete': delete o[k]; break;
      case 'grow': while (o[k].length < arg) o[k].push(JSON.parse(JSON.stringify(o[k][o[k].length - 1]))); break;
      case 'nullproto': o[k] = Object.assign(Object.create(null), o[k]); break;
      case 'getter': { const was = o[k]; Object.defineProperty(o, k, { get() { return was; }, enumerable: true }); break; }
      case 'hidden': Object.defineProperty(o[k], 'hidden', { value: 1, enumerable: false }); break;
      case 'symbol': o[k][Symbol('s')] = 1; break;
      case 'share': o[k] = o[arg]; break;
      case 'hole': o[k].length += 1; break;
      case 'classed': o[k] = Object.assign(new (class Thing {})(), o[k]); break;
      case 'reverse': o[k] = Object.fromEntries(Object.entries(o[k]).reverse()); break;
      case 'days': // arg points a day apart
        o[k] = [];
        for (let i = 0; i < arg; i++) o[k].push({ at: new Date(Date.UTC(2020, 0, 1) + i * 86400000).toISOString().slice(0, 10), value: i });
        break;
      case 'named': // arg records of names of their own
        o[k] = [];
        for (let i = 0; i < arg; i++) o[k].push({ name: 'n' + i, value: i });
        break;
      case 'columns':
        o[k] = [];
        for (let i = 0; i < arg; i++) o[k].push({ name: 'n' + i });
        break;
      case 'lines':
        o[k] = [];
        for (let i = 0; i < arg; i++) o[k].push({ name: 'n' + i, points: [] });
        break;
    }
  }
  let seed = d.seed;
  const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
  class Thing { constructor() { this.value = 1; this.at = '2026'; } }
  const nodes = [];
  const walk = (x) => {
    if (typeof x !== 'object' || x === null) return;
    nodes.push(x);
    for (const k of Object.keys(x)) walk(x[k]);
  };
  walk(d.views);
  nodes.shift();
  // A third of the changes in a record (a point, a value, a column, a
  // mark), a third in a list, a third anywhere.
  const records = nodes.filter((x) => !Array.isArray(x) && Object.values(x).every((y) => typeof y !== 'object' || y === null));
  const lists = nodes.filter((x) => Array.isArray(x));
  for (let t = 0; t < d.tweaks && nodes.length > 0; t++) {
    const from = [nodes, records, lists][rnd(3)];
    const o = from.length > 0 ? from[rnd(from.length)] : nodes[rnd(nodes.length)];
    const ks = Object.keys(o);
    const k = Array.isArray(o) ? rnd(o.length + 1) : (ks.length > 0 && rnd(4) > 0 ? ks[rnd(ks.length)] : 'extra');
    switch (rnd(20)) {
      case 18: delete o[k]; break;
      case 19:
        // Grown past a bound: 8 marks, 20 lines, 50 columns, 200
        // values, 500 rows, 2,000 points (or to just under it).
        if (Array.isArray(o) && o.length > 0) {
          const to = [8, 20, 50, 200, 500, 2000][rnd(6)] + rnd(2);
          // (An earlier change may have made a cycle or a BigInt: then the
          // same member, shared.)
          const copyOf = (x) => { try { return JSON.parse(JSON.stringify(x)); } catch (e) { return x; } };
          while (o.length < to) o.push(copyOf(o[o.length - 1]));
        } else o[k] = -0;
        break;
      case 0: o[k] = undefined; break;
      case 1: o[k] = NaN; break;
      case 2: o[k] = -Infinity; break;
      case 3: o[k] = -0; break;
      case 4: o[k] = new Date(0); break;
      case 5: o[k] = new Map(); break;
      case 6: o[k] = new Thing(); break;
      case 7: {
        const n = Object.create(null);
        const was = o[k];
        if (typeof was === 'object' && was !== null && !Array.isArray(was)) Object.assign(n, was);
        o[k] = n;
        break;
      }
      case 8: o[k] = () => 1; break;
      case 9: o[Symbol('s')] = 1; break;
      case 10: Object.defineProperty(o, 'hidden', { value: 1, enumerable: false }); break;
      case 11: {
        const was = o[k];
        Object.defineProperty(o, k, { get() { return was; }, enumerable: true, configurable: true });
        break;
      }
      case 12: o[k] = nodes[rnd(nodes.length)]; break;
      case 13: if (Array.isArray(o)) o.length += 1; else o[k] = 10n; break;
      case 14: o[k] = 1e300 * 10; break;
      case 15: if (Array.isArray(o) && o.length > 0) o.push(o[0]); else o[k] = -0; break;
      case 16: if (Array.isArray(o) && o.length > 0) o.pop(); else o[k] = 'x'; break;
      default: {
        // A copy of a member somewhere else in the same object or list:
        // a name repeated, a point twice, a row of another width.
        const src = nodes[rnd(nodes.length)];
        try { o[k] = JSON.parse(JSON.stringify(src)); } catch (e) { o[k] = src; } // a cycle or BigInt: shared
      }
    }
  }
  return d.views;
}`

// answerAlike folds data (tweakFold's), then a probe, through the pool
// with the fused walk and the one without, and fails unless both answer
// the same header and views and the probe found only what JSON gives.
func answerAlike(t *testing.T, fused, unfused *Pool, prog *Program, data string) childHeader {
	t.Helper()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	page := []Event{event(1, at, data), event(2, at, `{"probe":true}`)}
	h1, out1, err1 := fused.call(context.Background(), prog, json.RawMessage(`{}`), page, 0)
	h2, out2, err2 := unfused.call(context.Background(), prog, json.RawMessage(`{}`), page, 0)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if h1 != h2 || string(out1) != string(out2) {
		t.Fatalf("of %s:\nfused:   %+v %.400s\nunfused: %+v %.400s", data, h1, out1, h2, out2)
	}
	if h1.Kind == KindRaised {
		t.Fatalf("of %s: the next fold was given what JSON would not give: %s", data, h1.Error)
	}
	return h1
}

// The fused walk (each view copied and checked in one visit) answers
// what copying every view and then checking it answers: the same stall,
// in the same words, or the same views to the byte, given to the next
// fold as JSON would give them (a probe that follows every case says
// so), for views of every shape made from valid and nearly valid JSON
// and then changed into what JSON does not keep.
func TestFusedWalkAnswersAsCopyThenCheck(t *testing.T) {
	t.Parallel()
	n := 150
	if os.Getenv("QUIRE_TEST_LONG") != "" {
		n = 6000
	}
	fused := newTestPool(t, Limits{})
	unfused, err := NewPool(PoolOptions{unfused: true})
	if err != nil {
		t.Fatal(err)
	}
	defer unfused.Close()
	shapes := map[string]string{"s": "series", "c": "categories", "t": "table", "x": "text"}
	prog := jsProgram(tweakFold, shapes)
	r := rand.New(rand.NewSource(12))
	kinds := map[string]int{}
	for range n {
		var views []string
		for _, k := range r.Perm(4)[:1+r.Intn(2)] {
			name := "sctx"[k : k+1]
			views = append(views, fmt.Sprintf("%q:%s", name, genShape(r, shapes[name])))
		}
		data := fmt.Sprintf(`{"seed":%d,"tweaks":%d,"views":{%s}}`, r.Intn(1<<30), []int{0, 0, 1, 1, 2, 3}[r.Intn(6)], strings.Join(views, ","))
		kinds[answerAlike(t, fused, unfused, prog, data).Kind]++
	}
	for _, k := range []string{"", kindShapeCheck, KindUnfit} {
		if kinds[k] < n/16 {
			t.Fatalf("%v: too few of kind %q to compare", kinds, k)
		}
	}
	t.Log(kinds)
}

// Each rule of each shape broken once, and each thing JSON does not keep
// put once in each shape's records, judged alike with the fused walk and
// without it (what TestFusedWalkAnswersAsCopyThenCheck meets by chance,
// here every time).
func TestFusedWalkAnswersAsCopyThenCheckRuleByRule(t *testing.T) {
	t.Parallel()
	fused := newTestPool(t, Limits{})
	unfused, err := NewPool(PoolOptions{unfused: true})
	if err != nil {
		t.Fatal(err)
	}
	defer unfused.Close()
	prog := jsProgram(tweakFold, map[string]string{"s": "series", "c": "categories", "t": "table", "x": "text"})
	bases := map[string]string{
		"s": `{"unit":"u","period":"day","origin":"2026-01-01","lines":[{"name":"a","points":[{"at":"2026-01-01","value":1,"low":0,"high":2},{"at":"2026-01-02","value":2}]},{"name":"b","points":[]}],"marks":[{"label":"m","value":1}]}`,
		"c": `{"unit":"u","values":[{"name":"a","value":1,"low":0,"high":2},{"name":"b","value":2}]}`,
		"t": `{"columns":[{"name":"a","unit":"u"},{"name":"b"}],"rows":[["x",1],[true,null]]}`,
		"x": `{"text":"hello"}`,
	}
	type edit = []any
	p := func(keys ...any) []any { return keys }
	edits := map[string][]edit{
		"s": {
			{p("s", "unit"), "set", ""}, {p("s", "unit"), "set", 1}, {p("s", "period"), "set", "days"}, {p("s", "period"), "delete", nil},
			{p("s", "origin"), "set", "2026-01"}, {p("s", "origin"), "set", 5}, {p("s", "lines"), "set", []any{}}, {p("s", "lines"), "delete", nil},
			{p("s", "lines"), "grow", 21}, {p("s", "lines"), "grow", 20}, {p("s", "lines", 1, "name"), "set", "a"}, {p("s", "lines", 1, "points"), "delete", nil},
			{p("s", "lines", 1, "name"), "delete", nil}, {p("s", "lines", 1, "extra"), "set", 1}, {p("s", "lines", 0, "points"), "grow", 2001},
			{p("s", "lines", 0, "points", 1, "at"), "set", "2026-01-01"}, {p("s", "lines", 0, "points", 1, "at"), "set", "2026-1-2"},
			{p("s", "lines", 0, "points", 0, "low"), "set", 1.5}, {p("s", "lines", 0, "points", 0, "high"), "set", 0.5},
			{p("s", "lines", 0, "points", 0, "value"), "delete", nil}, {p("s", "lines", 0, "points", 0, "at"), "delete", nil},
			{p("s", "marks"), "grow", 9}, {p("s", "marks"), "grow", 8}, {p("s", "marks", 0, "label"), "delete", nil}, {p("s", "marks", 0, "value"), "set", "1"},
			{p("s", "marks", 0, "other"), "set", 1}, {p("s", "marks"), "set", map[string]any{}}, {p("s", "extra"), "set", 1},
		},
		"c": {
			{p("c", "values"), "set", []any{}}, {p("c", "values"), "delete", nil}, {p("c", "values"), "grow", 201}, {p("c", "values", 1, "name"), "set", "a"},
			{p("c", "values", 1, "name"), "set", ""}, {p("c", "values", 0, "low"), "set", 3}, {p("c", "values", 0, "other"), "set", 3}, {p("c", "unit"), "set", nil},
		},
		"t": {
			{p("t", "columns"), "set", []any{}}, {p("t", "columns"), "grow", 51}, {p("t", "columns", 1, "name"), "set", "a"}, {p("t", "columns", 1, "name"), "delete", nil},
			{p("t", "columns", 0, "unit"), "set", ""}, {p("t", "columns", 0, "x"), "set", "y"}, {p("t", "rows"), "grow", 501}, {p("t", "rows"), "grow", 500},
			{p("t", "rows", 0), "set", []any{"x"}}, {p("t", "rows", 0, 0), "set", map[string]any{}}, {p("t", "rows", 0, 0), "set", []any{}},
			{p("t", "rows"), "delete", nil}, {p("t", "columns"), "delete", nil}, {p("t", "rows", 0), "hole", nil},
		},
		"x": {{p("x", "text"), "set", 1}, {p("x", "text"), "delete", nil}, {p("x", "other"), "set", "y"}},
	}
	// What JSON does not keep, at each kind of place of each shape.
	places := map[string][][]any{
		"s": {p("s", "lines", 0, "points", 0), p("s", "lines", 0, "points", 1), p("s", "marks", 0), p("s", "lines", 0), p("s")},
		"c": {p("c", "values", 0), p("c", "values", 1), p("c")},
		"t": {p("t", "columns", 0), p("t", "rows", 0), p("t")},
		"x": {p("x")},
	}
	for name, list := range places {
		for _, at := range list {
			for _, v := range []string{"negzero", "nan", "inf", "undef", "date", "map", "fn", "big", "thing"} {
				edits[name] = append(edits[name], edit{append(append([]any{}, at...), "value"), "set", v})
				edits[name] = append(edits[name], edit{append(append([]any{}, at[:len(at)-1]...), at[len(at)-1]), "set", v})
			}
			for _, op := range []string{"nullproto", "getter", "hidden", "symbol", "classed", "reverse"} {
				edits[name] = append(edits[name], edit{at, op, nil})
			}
			edits[name] = append(edits[name], edit{at, "share", at[len(at)-1]})
		}
	}
	kinds := map[string]int{}
	// Changes made together.
	together := map[string][][]edit{
		"s": {
			{{p("s", "lines"), "set", []any{map[string]any{"name": "a", "points": []any{map[string]any{"at": "2026-13-01", "value": 1}}}}}},
			{{p("s", "lines", 1, "points"), "set", []any{map[string]any{"at": "2026-01-01", "value": 1}}}, {p("s", "origin"), "set", "2026-02-30"}},
			{{p("s", "lines"), "lines", 21}}, {{p("s", "lines"), "lines", 20}},
			{{p("s", "lines", 0, "points"), "days", 2001}}, {{p("s", "lines", 0, "points"), "days", 2000}},
			{{p("s", "lines", 0, "points"), "days", 1000}, {p("s", "lines", 1, "points"), "days", 1001}},
			{{p("s", "marks", 0, "value"), "delete", nil}}, {{p("s", "marks", 0, "label"), "set", "x"}, {p("s", "marks", 0, "value"), "set", -0}},
		},
		"c": {{{p("c", "values"), "named", 201}}, {{p("c", "values"), "named", 200}}},
		"t": {
			{{p("t", "columns"), "set", []any{}}, {p("t", "rows"), "set", []any{}}},
			{{p("t", "columns"), "columns", 51}, {p("t", "rows"), "set", []any{}}},
			{{p("t", "columns"), "columns", 50}, {p("t", "rows"), "set", []any{}}},
		},
	}
	for name, list := range edits {
		for _, e := range list {
			together[name] = append(together[name], []edit{e})
		}
	}
	for _, name := range []string{"s", "c", "t", "x"} {
		for _, e := range append([][]edit{nil}, together[name]...) {
			es := "[]"
			if e != nil {
				b, _ := json.Marshal(e)
				es = string(b)
			}
			data := fmt.Sprintf(`{"edits":%s,"views":{%q:%s}}`, es, name, bases[name])
			h1 := answerAlike(t, fused, unfused, prog, data)
			if e == nil && h1.Kind != "" {
				t.Fatalf("the base of %s stalled: %+v", name, h1)
			}
			kinds[h1.Kind]++
		}
	}
	t.Log(kinds)
}

// The fused walk never takes views for smaller than they are: with the
// views' limit set a byte or so either side of their size, for views of
// every shape grown record by record (points, values, marks, columns,
// rows, text), it stalls as too large exactly where copying and then
// checking does, and passes the same views where that passes: both where
// the views pass their limit.
func TestFusedWalkBoundsTheSize(t *testing.T) {
	t.Parallel()
	const limit = 1500
	fused := newTestPool(t, Limits{ViewsBytes: limit})
	unfused, err := NewPool(PoolOptions{Limits: Limits{ViewsBytes: limit}, unfused: true})
	if err != nil {
		t.Fatal(err)
	}
	defer unfused.Close()
	prog := jsProgram(tweakFold, map[string]string{"s": "series", "c": "categories", "t": "table", "x": "text"})
	grow := map[string]func(i int) string{
		"s": func(i int) string {
			var ps []string
			for j := range i {
				ps = append(ps, fmt.Sprintf(`{"at":"%s","value":%d}`, time.Date(2026, 1, 1+j, 0, 0, 0, 0, time.UTC).Format("2006-01-02"), j))
			}
			return `{"s":{"unit":"u","period":"day","lines":[{"name":"a","points":[` + strings.Join(ps, ",") + `]}]}}`
		},
		"m": func(i int) string {
			var ms []string
			for j := range min(i, 8) {
				ms = append(ms, fmt.Sprintf(`{"label":"mark %d é","value":%d}`, j, j*1000))
			}
			return `{"s":{"lines":[{"name":"a","points":[]}],"marks":[` + strings.Join(ms, ",") + `]},"x":{"text":"` + strings.Repeat("t", i*7) + `"}}`
		},
		"c": func(i int) string {
			var vs []string
			for j := range i {
				vs = append(vs, fmt.Sprintf(`{"name":"name %d","value":%d.5}`, j, j))
			}
			return `{"c":{"values":[` + strings.Join(vs, ",") + `]}}`
		},
		"t": func(i int) string {
			var cs, rs []string
			for j := range min(i, 50) {
				cs = append(cs, fmt.Sprintf(`{"name":"c%d"}`, j))
			}
			for j := range i {
				row := make([]string, len(cs))
				for k := range row {
					row[k] = []string{`"x"`, `1.25`, `true`, `null`}[(j+k)%4]
				}
				rs = append(rs, "["+strings.Join(row, ",")+"]")
			}
			return `{"t":{"columns":[` + strings.Join(cs, ",") + `],"rows":[` + strings.Join(rs, ",") + `]}}`
		},
	}
	for name, views := range grow {
		// The views are written as JSON.stringify writes them: their
		// length is their size.
		i := 1
		for len(views(i)) <= limit {
			i++
		}
		for _, j := range []int{i - 2, i - 1, i, i + 1} {
			want := ""
			if len(views(j)) > limit {
				want = KindSize
			}
			if h := answerAlike(t, fused, unfused, prog, `{"views":`+views(j)+`}`); h.Kind != want {
				t.Fatalf("%s: views of %d bytes under a limit of %d: %+v", name, len(views(j)), limit, h)
			}
		}
	}
}
