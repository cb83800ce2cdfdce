package module

import (
	"errors"
	"strings"
	"testing"
)

func TestTranspile(t *testing.T) {
	ts := "type A = { x?: number };\n\nexport function fold(view: View, event: Event): View {\n  const n: number = 1;\n  return view;\n}\n"
	js, lines, err := TranspileMapped(ts)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(js, "number") || !strings.Contains(js, "function fold(view, event)") || !strings.Contains(js, "export {") {
		t.Fatalf("js = %q", js)
	}
	jsLines := strings.Split(js, "\n")
	for i, l := range jsLines {
		if strings.Contains(l, "const n = 1") && lines.TS(i+1) != 4 {
			t.Fatalf("const n maps to %d, want 4 (%v)", lines.TS(i+1), lines)
		}
		if strings.Contains(l, "function fold") && lines.TS(i+1) != 3 {
			t.Fatalf("fold maps to %d, want 3", lines.TS(i+1))
		}
	}
}

func TestTranspileSyntaxError(t *testing.T) {
	_, err := Transpile("export function fold(view: View, event: Event): View {\n  return view +;\n}\n")
	var se SyntaxErrors
	if !errors.As(err, &se) || se[0].Line != 2 {
		t.Fatalf("err = %v", err)
	}
}
