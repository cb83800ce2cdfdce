package module

import (
	"context"
	"errors"
	"os"
	"quire/internal/gomod"
	"strings"
	"testing"
	"time"

	"quire/words/refusal"
)

// compiler finds tsc for the tests, or skips them when it truly is not
// installed and CI is not "true".
func compiler(t testing.TB) *Compiler {
	t.Helper()
	c, err := FindCompiler("")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and no compiler: %v", err)
		}
		t.Skipf("no TypeScript compiler: %v", err)
	}
	return &c
}

var examples = map[string][]View{
	"morning-social-content": {{"posts_per_day", "series"}, {"by_channel", "categories"}},
	"close-the-month":        {{"revenue", "series"}},
	"fulfill-order": {{"figures", "categories"}, {"revenue", "series"}, {"channels", "categories"},
		{"sizes", "categories"}, {"latest", "table"}},
}

func readExample(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name + ".ts")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestExamplesPass(t *testing.T) {
	c := compiler(t)
	for name, views := range examples {
		t.Run(name, func(t *testing.T) {
			js, issues, err := Check(context.Background(), Source{TS: readExample(t, name), FirstLine: 30, Views: views}, Options{Compiler: c, Timeout: testTimeout})
			if err != nil || len(issues) > 0 {
				t.Fatalf("err=%v issues=%v", err, issues)
			}
			if !strings.Contains(js, "function fold(view, event)") {
				t.Fatalf("js = %s", js)
			}
		})
	}
}

func TestPacificDayPasses(t *testing.T) {
	c := compiler(t)
	ts := readExample(t, "close-the-month") + `
export function pacificDay(time: string): string {
  const at = Date.parse(time);
  const year = new Date(at).getUTCFullYear();
  const sunday = (month: number, nth: number): number =>
    Date.UTC(year, month, 1 + ((7 - new Date(Date.UTC(year, month, 1)).getUTCDay()) % 7) + 7 * (nth - 1));
  const summer = at >= sunday(2, 2) + 10 * 3_600_000 && at < sunday(10, 1) + 9 * 3_600_000;
  return new Date(at - (summer ? 7 : 8) * 3_600_000).toISOString().slice(0, 10);
}
`
	_, issues, err := Check(context.Background(), Source{TS: ts, FirstLine: 1, Views: examples["close-the-month"]}, Options{Compiler: c, Timeout: testTimeout})
	if err != nil || len(issues) > 0 {
		t.Fatalf("err=%v issues=%v", err, issues)
	}
}

// wrap puts a statement inside a fold that type-checks otherwise; the
// statement is on line 2.
func wrap(stmt string) string {
	return "export function fold(view: View, event: Event): View {\n  " + stmt + "\n  return view;\n}\n"
}

func TestAbsentGlobalsRefused(t *testing.T) {
	c := compiler(t)
	cases := map[string]string{
		"Math.random":           "const r = Math.random();",
		"eval":                  "const r: unknown = (globalThis as { e?: unknown }).e; void r;",
		"Function":              "const f = Function;",
		"WeakRef":               "const w = new WeakRef({});",
		"FinalizationRegistry":  "const f = new FinalizationRegistry(() => {});",
		"Promise":               "const p = Promise.resolve(1);",
		"console":               "console.log(1);",
		"fetch":                 "fetch('https://example.com');",
		"setTimeout":            "setTimeout(() => {}, 1);",
		"setInterval":           "setInterval(() => {}, 1);",
		"queueMicrotask":        "queueMicrotask(() => {});",
		"Intl":                  "const n = new Intl.NumberFormat('en');",
		"getHours":              "const h = new Date(0).getHours();",
		"getFullYear":           "const y = new Date(0).getFullYear();",
		"getTimezoneOffset":     "const z = new Date(0).getTimezoneOffset();",
		"setHours":              "new Date(0).setHours(1);",
		"toLocaleString":        "const s = new Date(0).toLocaleString();",
		"toLocaleDateString":    "const s = new Date(0).toLocaleDateString();",
		"number toLocaleString": "const s = (1).toLocaleString();",
		"Date()":                "const s: string = Date();",
		"Date(y, m)":            "const d = new Date(2026, 1);",
		"structuredClone":       "const s = structuredClone({});",
		"SharedArrayBuffer":     "const s = new SharedArrayBuffer(8);",
		"Atomics":               "const a = Atomics;",
	}
	for name, stmt := range cases {
		t.Run(name, func(t *testing.T) {
			_, issues, err := Check(context.Background(), Source{TS: wrap(stmt), FirstLine: 10}, Options{Compiler: c, Timeout: testTimeout})
			if err != nil {
				t.Fatal(err)
			}
			if name == "eval" {
				return // eval itself is refused by the rules; see TestRules
			}
			if len(issues) == 0 {
				t.Fatalf("%s type-checked", stmt)
			}
			if issues[0].Line != 11 || !strings.Contains(issues[0].Message, "(TS") {
				t.Fatalf("issues = %v", issues)
			}
		})
	}
}

func TestPresentLibraryTypeChecks(t *testing.T) {
	c := compiler(t)
	stmts := []string{
		"const a = [3, 1, 2].toSorted((x, y) => x - y).at(-1);",
		"const g = Map.groupBy([1, 2, 3], (x) => x % 2);",
		"const o = Object.groupBy([1, 2, 3], (x) => (x % 2 === 0 ? 'even' : 'odd'));",
		"const u = new Set([1]).union(new Set([2]));",
		"const it = [1, 2, 3].values().map((x) => x * 2).toArray();",
		"const b = 10n ** 20n;",
		"const d = new Date(Date.UTC(2026, 0, 1)).getUTCDay() + Date.now() + new Date().getTime();",
		"const s = new Date('2026-01-01').toISOString().localeCompare('x');",
		"const j = JSON.stringify({ a: [1] }) + String(Math.floor(1.5));",
		"const r = /a+/u.test('aa') && 'x'.replaceAll('x', 'y') === 'y';",
		"const f = [1, [2]].flat().findLast((x) => x > 0);",
		"const e = new Error('x', { cause: 1 });",
	}
	for _, stmt := range stmts {
		_, issues, err := Check(context.Background(), Source{TS: wrap(stmt), FirstLine: 1}, Options{Compiler: c, Timeout: testTimeout})
		if err != nil || len(issues) > 0 {
			t.Errorf("%s: err=%v issues=%v", stmt, err, issues)
		}
	}
}

func TestCompilerMissing(t *testing.T) {
	t.Setenv("QUIRE_TSC", "/nonexistent/tsc")
	_, issues, err := Check(context.Background(), Source{TS: readExample(t, "close-the-month"), Views: examples["close-the-month"]}, Options{})
	r, ok := refusal.As(err)
	if !ok || r.Code != refusal.Unavailable || !strings.Contains(r.Message, "make tools") || !strings.Contains(r.Message, "npm install typescript@7") || issues != nil {
		t.Fatalf("err=%v issues=%v", err, issues)
	}
	// Syntax-only mode needs no compiler.
	js, issues, err := Check(context.Background(), Source{TS: readExample(t, "close-the-month"), Views: examples["close-the-month"]}, Options{Mode: SyntaxOnly})
	if err != nil || issues != nil || js == "" {
		t.Fatalf("syntax-only: js=%q err=%v issues=%v", js, err, issues)
	}
	_ = errors.New
}

func TestSyntaxOnly(t *testing.T) {
	t.Setenv("QUIRE_TSC", "/nonexistent/tsc")
	// A type error passes; a syntax error and a rule do not.
	_, issues, err := Check(context.Background(), Source{TS: wrap("const n: number = 'x';"), FirstLine: 5}, Options{Mode: SyntaxOnly})
	if err != nil || issues != nil {
		t.Fatalf("type error in syntax-only: err=%v issues=%v", err, issues)
	}
	_, issues, _ = Check(context.Background(), Source{TS: wrap("const n = ;"), FirstLine: 5}, Options{Mode: SyntaxOnly})
	if len(issues) != 1 || issues[0].Line != 6 || !strings.Contains(issues[0].Message, "Unexpected") {
		t.Fatalf("syntax error: %v", issues)
	}
	_, issues, _ = Check(context.Background(), Source{TS: wrap("console.log(1);") + "let x = 1;\n", FirstLine: 5}, Options{Mode: SyntaxOnly})
	if len(issues) != 1 || issues[0].Line != 9 || !strings.Contains(issues[0].Message, "top-level let") {
		t.Fatalf("rule: %v", issues)
	}
}

func TestFindCompilerResolvesTheWrapper(t *testing.T) {
	c := compiler(t)
	// QUIRE_TSC may name npm's wrapper; the native binary beside it is used.
	wrapper := strings.TrimSuffix(gomod.Around("."), "/") + "/.tools/node_modules/.bin/tsc"
	if _, err := os.Stat(wrapper); err != nil {
		t.Skip("no .tools copy")
	}
	t.Setenv("QUIRE_TSC", wrapper)
	got, err := FindCompiler("")
	if err != nil || got.Path != c.Path || !strings.HasSuffix(got.LibDir, "/lib") {
		t.Fatalf("got %+v, %v; want %+v", got, err, c)
	}
}

// testTimeout is the compiler's timeout in tests: the machine the tests
// run on may be loaded far past what a server's check worker sees.
const testTimeout = 60 * time.Second

func TestTypeCheckPastItsTime(t *testing.T) {
	c := compiler(t)
	_, issues, err := Check(context.Background(), Source{TS: readExample(t, "close-the-month"), FirstLine: 9, Views: examples["close-the-month"]}, Options{Compiler: c, Timeout: time.Millisecond})
	if err != nil || len(issues) != 1 || issues[0].Line != 9 || !strings.Contains(issues[0].Message, "took longer than the 1ms") {
		t.Fatalf("err=%v issues=%v", err, issues)
	}
}
