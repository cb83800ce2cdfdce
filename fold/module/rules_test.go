package module

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

func TestRules(t *testing.T) {
	fold := "export function fold(view: View, event: Event): View {\n  return view;\n}\n"
	cases := []struct {
		name, ts string
		line     int // in the document, where the module starts on line 20
		words    string
	}{
		{"no fold", "export function other(view: View, event: Event): View {\n  return view;\n}\n", 20, "does not export fold: it needs export function fold(view: View, event: Event): View"},
		{"fold of another signature", "export function fold(view: View): View {\n  return view;\n}\n", 20, "fold has the signature fold(view: View): View, but it needs"},
		{"fold without a return type", "\nexport function fold(view: View, event: Event) {\n  return view;\n}\n", 21, "but it needs"},
		{"fold generic", "export function fold<T>(view: View, event: Event): View {\n  return view;\n}\n", 20, "but it needs"},
		{"top-level let", fold + "let count = 0;\n", 23, "a top-level let"},
		{"top-level const", fold + "const limit = 50;\n", 23, "a top-level const"},
		{"top-level class", fold + "class A {}\n", 23, "a top-level class"},
		{"function not exported", fold + "function helper(): number {\n  return 1;\n}\n", 23, "a function the module does not export"},
		{"expression statement", fold + "fold({}, { id: '', type: '', source: '' });\n", 23, "a top-level statement other than a type or an exported function"},
		{"export list", fold + "export { fold as other };\n", 23, "an export list"},
		{"default export", fold + "export default function (): number {\n  return 1;\n}\n", 23, "a default export"},
		{"import", "import { x } from './x';\n" + fold, 20, "import is refused: a module stands alone"},
		{"import()", strings.Replace(fold, "return view;", "void import('./x');\n  return view;", 1), 21, "import()"},
		{"import.meta", strings.Replace(fold, "return view;", "void import.meta;\n  return view;", 1), 21, "import.meta"},
		{"require", strings.Replace(fold, "return view;", "require('x');\n  return view;", 1), 21, "require"},
		{"eval", strings.Replace(fold, "return view;", "eval('1');\n  return view;", 1), 21, "eval"},
		{"new Function", strings.Replace(fold, "return view;", "new Function('return 1');\n  return view;", 1), 21, "new Function"},
		{"declare global", "declare global {\n  var x: number;\n}\n" + fold, 20, "declare"},
		{"declare const", "declare const x: number;\n" + fold, 20, "declare"},
		{"async", strings.Replace(fold, "return view;", "const f = async () => 1;\n  return view;", 1), 21, "async"},
		{"await", strings.Replace(fold, "return view;", "await 1;\n  return view;", 1), 21, "await"},
		{"exported generator", fold + "export function* steps(): Generator<number> {\n  yield 1;\n}\n", 23, "an exported generator"},
		{"enum", "enum Color { Red }\n" + fold, 20, "An enum"},
		{"enum inside", strings.Replace(fold, "return view;", "enum Color { Red }\n  return view;", 1), 21, "An enum"},
		{"namespace", "namespace N {\n  export type T = number;\n}\n" + fold, 20, "A namespace"},
		{"parameter property", strings.Replace(fold, "return view;", "class P {\n    constructor(private readonly n: number) {}\n  }\n  return view;", 1), 22, "A parameter property (private readonly)"},
		{"own View", "type View = { [name: string]: unknown };\n" + fold, 20, "declares its own View"},
		{"answer", fold + "export function answer(): number {\n  return 1;\n}\n", 23, "exports answer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, issues, err := Check(context.Background(), Source{TS: c.ts, FirstLine: 20}, Options{Mode: SyntaxOnly})
			if err != nil {
				t.Fatal(err)
			}
			for _, is := range issues {
				if is.Line == c.line && strings.Contains(is.Message, c.words) && is.Path == "/source" {
					return
				}
			}
			t.Fatalf("want line %d %q, got %v", c.line, c.words, issues)
		})
	}
}

func TestRulesAllowTypesAndHelpers(t *testing.T) {
	ts := `type Point = { at: string; value: number }
type Pair =
  | { a: number }
  | { b: string }
interface Shape {
  name: string
}
export type Exported = Point[]
export interface Also { x: number }
export function helper(points: Point[]): number {
  const re = /"\/\}\{'[}{]/u; // a regex with quotes and braces: } { ' "
  const s = ` + "`${points.length} } { ${`nested ${'}'}`}`" + `;
  return points.length + re.source.length + s.length;
}
export function fold(view: View, event: Event): View {
  const text = 'import eval async await'; /* import eval */
  if (event.id === text) return view;
  return view;
}
`
	_, issues, err := Check(context.Background(), Source{TS: ts, FirstLine: 1}, Options{Mode: SyntaxOnly})
	if err != nil || len(issues) > 0 {
		t.Fatalf("err=%v issues=%v", err, issues)
	}
	c := compiler(t)
	_, issues, err = Check(context.Background(), Source{TS: ts, FirstLine: 1}, Options{Compiler: c, Timeout: testTimeout})
	if err != nil || len(issues) > 0 {
		t.Fatalf("type check: err=%v issues=%v", err, issues)
	}
}

func TestAssignments(t *testing.T) {
	body := func(n int) string {
		var b strings.Builder
		b.WriteString("export function fold(view: View, event: Event): View {\n  let n = 0;\n")
		for i := 2; i < n; i++ {
			b.WriteString("  n += 1;\n")
		}
		b.WriteString("  const helper = (x: number): number => {\n    let y = x;\n    y++;\n    return y;\n  };\n")
		b.WriteString("  view.revenue = undefined;\n") // a property: not counted
		b.WriteString("  return n > helper(1) ? view : view;\n}\n")
		return b.String()
	}
	views := []View{{"revenue", "series"}}
	_, issues, _ := Check(context.Background(), Source{TS: body(500), FirstLine: 1, Views: views}, Options{Mode: SyntaxOnly})
	if len(issues) != 0 {
		t.Fatalf("500: %v", issues)
	}
	_, issues, _ = Check(context.Background(), Source{TS: body(501), FirstLine: 7, Views: views}, Options{Mode: SyntaxOnly})
	if len(issues) != 1 || issues[0].Line != 7 || !strings.Contains(issues[0].Message, "the function fold makes 501 assignments to variables, but a function makes at most 500") {
		t.Fatalf("501: %v", issues)
	}
}

func TestTypeErrorsQuoteTheCompiler(t *testing.T) {
	c := compiler(t)
	ts := "export function fold(view: View, event: Event): View {\n  const n: number = event.subject;\n  return { revenue: { lines: [] }, extra: 1 };\n}\n"
	_, issues, err := Check(context.Background(), Source{TS: ts, FirstLine: 40, Views: []View{{"revenue", "series"}}}, Options{Compiler: c, Timeout: testTimeout})
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(issues)
	if len(issues) != 2 || issues[0].Line != 41 || !strings.Contains(issues[0].Message, "Type 'string | undefined' is not assignable to type 'number'") ||
		issues[1].Line != 42 || !strings.Contains(issues[1].Message, "'extra'") {
		t.Fatalf("issues = %s", got)
	}
	// exactOptionalPropertyTypes: undefined is not an absent view.
	ts = "export function fold(view: View, event: Event): View {\n  return { revenue: undefined };\n}\n"
	_, issues, _ = Check(context.Background(), Source{TS: ts, FirstLine: 1, Views: []View{{"revenue", "series"}}}, Options{Compiler: c, Timeout: testTimeout})
	if len(issues) != 1 || !strings.Contains(issues[0].Message, "exactOptionalPropertyTypes") {
		t.Fatalf("exactOptionalPropertyTypes: %v", issues)
	}
}
