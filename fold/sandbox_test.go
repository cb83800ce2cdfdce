package fold

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"quire/words/refusal"
)

var textView = map[string]string{"out": "text"}

// probe folds one event with a fold whose body is expr's JavaScript, its
// value put in a text view as JSON; it answers that text, or the stall.
func probe(t *testing.T, p *Pool, expr string) (string, *Stall) {
	t.Helper()
	js := fmt.Sprintf("export function fold(view, event) {\n  const v = (() => { %s })();\n  return { out: { text: JSON.stringify(v) ?? 'undefined' } };\n}\n", expr)
	r := foldAll(t, p, jsProgram(js, textView), []Event{event(1, time.Date(2026, 11, 1, 9, 30, 0, 0, time.UTC), `{}`)})
	if r.Stall != nil {
		return "", r.Stall
	}
	var got struct{ Out struct{ Text string } }
	if err := jsonUnmarshal(r.Views, &got); err != nil {
		t.Fatal(err)
	}
	return got.Out.Text, nil
}

func TestAbsentGlobals(t *testing.T) {
	t.Parallel()
	p := newTestPool(t, Limits{})
	for _, name := range []string{"Math.random", "eval", "Function", "WeakRef", "FinalizationRegistry", "Promise", "console",
		"fetch", "setTimeout", "setInterval", "clearTimeout", "clearInterval", "queueMicrotask", "Intl", "print", "std", "os",
		"performance", "navigator", "gc", "scriptArgs", "bjson", "structuredClone", "require", "SharedArrayBuffer", "Atomics"} {
		got, st := probe(t, p, "return typeof "+name)
		if st != nil || got != `"undefined"` {
			t.Errorf("typeof %s = %s %v", name, got, st)
		}
	}
	for _, expr := range []string{
		"return (function(){}).constructor('return 1')()",
		"return (function*(){}).constructor('yield 1')",
		"return (() => 1).constructor('return 1')()",
		"return eval('1')",
		"return new Function('return 1')()",
		"return Math.random()",
		"return new Date().getHours()",
		"return new Date().getTimezoneOffset()",
		"return new Date().setHours(1)",
	} {
		if got, st := probe(t, p, expr); st == nil || st.Kind != KindRaised {
			t.Errorf("%s: %s %+v, want raised", expr, got, st)
		}
	}
	// What the language has stays.
	got, st := probe(t, p, "return [[3,1,2].toSorted(), Object.groupBy([1,2,3], (x) => x % 2 ? 'odd' : 'even'), [...new Set([1]).union(new Set([2]))], [1,2,3].values().map((x) => x * 2).toArray(), String(10n ** 20n), typeof Map.groupBy, [1,2].findLast((x) => x < 2)]")
	if st != nil || got != `[[1,2,3],{"odd":[1,3],"even":[2]},[1,2],[2,4,6],"100000000000000000000","function",1]` {
		t.Errorf("the library: %s %+v", got, st)
	}
}

func TestDateRules(t *testing.T) {
	t.Parallel()
	p := newTestPool(t, Limits{})
	works := map[string]string{
		"return Date.now()":                                      `1793525400000`,
		"return new Date().toISOString()":                        `"2026-11-01T09:30:00.000Z"`,
		"return new Date(0).toISOString()":                       `"1970-01-01T00:00:00.000Z"`,
		"return new Date(new Date(86400000)).toISOString()":      `"1970-01-02T00:00:00.000Z"`,
		"return new Date('2026-01-01').toISOString()":            `"2026-01-01T00:00:00.000Z"`,
		"return new Date('2026-01-01T10:00:00+02:00').getTime()": `1767254400000`,
		"return new Date('2026-01-01T10:00:00Z').getUTCHours()":  `10`,
		"return Date.UTC(2026, 0, 1)":                            `1767225600000`,
		"return new Date(Date.UTC(2026, 0, 1)).getUTCDay()":      `4`,
		"return Date.parse('2026-01-01T00:00:00.000Z')":          `1767225600000`,
		"return new Date(0) instanceof Date":                     `true`,
		"return JSON.stringify({d: new Date(0)})":                `"{\"d\":\"1970-01-01T00:00:00.000Z\"}"`,
		"return new Date(0).toUTCString()":                       `"Thu, 01 Jan 1970 00:00:00 GMT"`,
		"return new Date(5) - new Date(2)":                       `3`,
	}
	for expr, want := range works {
		if got, st := probe(t, p, expr); st != nil || got != want {
			t.Errorf("%s = %s %+v, want %s", expr, got, st, want)
		}
	}
	for _, expr := range []string{
		"return new Date(2026, 0, 1)",
		"return new Date('2026-01-01T10:00:00')",
		"return new Date('January 1, 2026')",
		"return Date()",
		"return String(new Date(0))",
		"return new Date(0).toString()",
		"return new Date(0).toLocaleString()",
		"return new Date(0).toLocaleDateString()",
		"return `${new Date(0)}`",
		"return new Date(0) + ''",
		"return Date.parse('2026-01-01T10:00:00')",
	} {
		if got, st := probe(t, p, expr); st == nil || st.Kind != KindRaised {
			t.Errorf("%s: %s %+v, want raised", expr, got, st)
		}
	}
}

// Each event's time is its own Date.now(), within one page.
func TestDateNowIsTheEventTime(t *testing.T) {
	t.Parallel()
	p := newTestPool(t, Limits{})
	prog := jsProgram(`export function fold(view, event) {
  return { out: { text: (view.out?.text ?? '') + (Date.now() === Date.parse(event.time) && new Date().toISOString() === new Date(event.time).toISOString() ? 'y' : 'n') } };
}`, textView)
	var evs []Event
	for i := range 5 {
		evs = append(evs, event(int64(i+1), time.Date(2026, 3, 1+i, 8, i, 0, 0, time.UTC), `{}`))
	}
	r := foldAll(t, p, prog, evs)
	if r.Stall != nil || string(r.Views) != `{"out":{"text":"yyyyy"}}` {
		t.Fatalf("%s %+v", r.Views, r.Stall)
	}
}

// Nothing a fold writes outside its views reaches the next fold.
func TestFrozen(t *testing.T) {
	t.Parallel()
	p := newTestPool(t, Limits{})
	prog := jsProgram(`export function helper() { return 1; }
export function fold(view, event) {
  const seen = [typeof Math.leak, typeof Array.prototype.leak, typeof globalThis.leak, typeof helper.leak,
    typeof Object.prototype.leak, typeof [].values().leak, typeof (function*(){})().leak, Math.max === Math.min];
  const tries = [
    () => { Math.leak = 1; }, () => { Array.prototype.leak = 1; }, () => { globalThis.leak = 1; },
    () => { helper.leak = 1; }, () => { Object.prototype.leak = 1; },
    () => { Object.getPrototypeOf([].values()).leak = 1; },
    () => { Object.getPrototypeOf(Object.getPrototypeOf((function*(){})())).leak = 1; },
    () => { Math.max = Math.min; }, () => { JSON.parse = null; }, () => { Date.now = () => 0; },
  ];
  let refused = 0;
  for (const f of tries) { try { f(); } catch (e) { refused++; } }
  return { out: { text: (view.out?.text ?? '') + JSON.stringify([seen, refused]) + ';' } };
}`, textView)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := foldAll(t, p, prog, []Event{event(1, at, `{}`), event(2, at, `{}`)})
	one := `[["undefined","undefined","undefined","undefined","undefined","undefined","undefined",false],10];`
	if r.Stall != nil || string(r.Views) != `{"out":{"text":"`+strings.ReplaceAll(one+one, `"`, `\"`)+`"}}` {
		t.Fatalf("%s %+v", r.Views, r.Stall)
	}
}

// The next fold is given the views as JSON gives them back.
func TestViewsAsJSONGivesThemBack(t *testing.T) {
	t.Parallel()
	p := newTestPool(t, Limits{})
	prog := jsProgram(`export function fold(view, event) {
  if (!view.a) {
    const shared = { text: 'x' };
    const v = { a: shared, b: shared };
    Object.defineProperty(v.a, 'hidden', { value: 1, enumerable: false });
    v.a[Symbol.for('s')] = 1;
    return v;
  }
  view.a.text = 'changed';
  const keys = Reflect.ownKeys(view.a).map(String).join(',');
  return { b: { text: view.b.text + '|' + keys + '|' + Object.isFrozen(view.b) }, a: view.a };
}`, map[string]string{"a": "text", "b": "text"})
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := foldAll(t, p, prog, []Event{event(1, at, `{}`), event(2, at, `{}`)})
	if r.Stall != nil || string(r.Views) != `{"b":{"text":"x|text|false"},"a":{"text":"changed"}}` {
		t.Fatalf("%s %+v", r.Views, r.Stall)
	}
}

// Deep views are copied without overflowing the sandbox's small stack;
// keys that Object.prototype has are kept as members; -0 becomes 0.
func TestCopyOfDeepAndOddViews(t *testing.T) {
	t.Parallel()
	p, err := NewPool(PoolOptions{Check: func(string, []byte) []refusal.Issue { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	prog := jsProgram(`export function fold(view, event) {
  if (!view.out) {
    let o = { end: true };
    for (let i = 0; i < 505; i++) o = i % 2 ? [o] : { o };
    const odd = JSON.parse('{"__proto__": 1}');
    Object.defineProperty(odd, 'toString', { value: 2, enumerable: true, writable: true, configurable: true });
    return { out: { deep: o, odd, zero: -0 } };
  }
  let d = 0;
  for (let o = view.out.deep; !o.end; o = Array.isArray(o) ? o[0] : o.o) d++;
  return { out: { text: [d, Object.keys(view.out.odd).join(), Object.getPrototypeOf(view.out.odd) === Object.prototype, Object.is(view.out.zero, -0)].join(' ') } };
}`, textView)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := foldAll(t, p, prog, []Event{event(1, at, `{}`), event(2, at, `{}`)})
	if r.Stall != nil || string(r.Views) != `{"out":{"text":"505 __proto__,toString true false"}}` {
		t.Fatalf("%s %+v", r.Views, r.Stall)
	}
}

// The size a stall of size names is the views' length in UTF-8 as
// JSON.stringify writes them, whatever their text holds: ASCII, two,
// three and four bytes a character, escapes, and lone surrogates (which
// JSON.stringify writes as \u escapes). Random texts about the bound,
// their expected size from a model of JSON.stringify here.
func TestViewsSizeIsTheirLengthInUTF8(t *testing.T) {
	t.Parallel()
	const limit = 600
	p := newTestPool(t, Limits{ViewsBytes: limit})
	prog := jsProgram(`export function fold(view, event) {
  return { out: { text: String.fromCharCode(...event.data.u) } };
}`, textView)
	// Code units: ASCII, an escaped quote, backslash, newline and control
	// character, é (2 bytes), € (3), a surrogate pair (4), and each half
	// alone.
	palette := [][]uint16{{'a'}, {'"'}, {'\\'}, {'\n'}, {1}, {0xe9}, {0x20ac}, {0xd83d, 0xde00}, {0xd800}, {0xdc00}, {0x7ff}, {0x800}}
	size := func(u []uint16) int {
		n := len(`{"out":{"text":""}}`)
		for i := 0; i < len(u); i++ {
			c := u[i]
			switch {
			case c == '"' || c == '\\' || c == '\n':
				n += 2
			case c < 0x20:
				n += 6
			case c < 0x80:
				n++
			case c < 0x800:
				n += 2
			case c >= 0xd800 && c < 0xdc00 && i+1 < len(u) && u[i+1] >= 0xdc00 && u[i+1] < 0xe000:
				n += 4
				i++
			case c >= 0xd800 && c < 0xe000:
				n += 6
			default:
				n += 3
			}
		}
		return n
	}
	rnd := rand.New(rand.NewPCG(28, 6))
	at := time.Date(2026, 11, 1, 9, 30, 0, 0, time.UTC)
	over := 0
	// The text is counted 65,536 units at a time: a pair of surrogates,
	// or a lone one, about that edge.
	ascii := func(n int) []uint16 {
		u := make([]uint16, n)
		for i := range u {
			u[i] = 'a'
		}
		return u
	}
	edges := [][]uint16{
		append(ascii(65535-len(`{"out":{"text":"`)), 0xd83d, 0xde00, 0xe9),
		append(ascii(65534-len(`{"out":{"text":"`)), 0xd83d, 0xde00),
		append(ascii(65535-len(`{"out":{"text":"`)), 0xd800, 'b', 0x20ac),
		append(ascii(65535-len(`{"out":{"text":"`)), 0xdc00, 0xd83d, 0xde00),
	}
	for round := range 60 + len(edges) {
		if round < len(edges) {
			u := edges[round]
			units, _ := json.Marshal(u)
			r := foldAll(t, p, prog, []Event{event(1, at, `{"u":`+string(units)+`}`)})
			words := fmt.Sprintf("the views take %d bytes as JSON, more than %d", size(u), limit)
			if r.Stall == nil || r.Stall.Kind != KindSize || !strings.Contains(r.Stall.Error, words) {
				t.Fatalf("edge %d: %+v, want a stall with %q", round, r.Stall, words)
			}
			continue
		}
		var u []uint16
		// Runs of one kind and mixtures, so that the runs of ASCII and of
		// the others meet every way.
		for n := 60 + rnd.IntN(240); len(u) < n; {
			pick := palette[rnd.IntN(len(palette))]
			for range 1 + rnd.IntN(4) {
				u = append(u, pick...)
			}
			if rnd.IntN(3) == 0 {
				u = append(u, palette[rnd.IntN(len(palette))]...)
			}
		}
		units, _ := json.Marshal(u)
		r := foldAll(t, p, prog, []Event{event(1, at, `{"u":`+string(units)+`}`)})
		want := size(u)
		if want > limit {
			over++
			words := fmt.Sprintf("the views take %d bytes as JSON, more than %d", want, limit)
			if r.Stall == nil || r.Stall.Kind != KindSize || !strings.Contains(r.Stall.Error, words) {
				t.Fatalf("round %d, units %v: %+v, want a stall with %q", round, u, r.Stall, words)
			}
			continue
		}
		if r.Stall != nil || len(r.Views) != want {
			t.Fatalf("round %d, units %v: views of %d bytes, stall %+v; want %d bytes", round, u, len(r.Views), r.Stall, want)
		}
	}
	if over < 15 || over > 45 {
		t.Fatalf("%d of 60 texts past the bound: the test's sizes no longer straddle it", over)
	}
}
