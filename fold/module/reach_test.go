package module

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A module that names a file outside it is refused before tsc runs, and
// tsc reads nothing but the module and the runtime's declarations: no
// issue quotes a file planted outside.
func TestTypeCheckReadsNoFileOutside(t *testing.T) {
	c := compiler(t)
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.ts")
	if err := os.WriteFile(secret, []byte("const leak: PLANTED_SECRET_3 = 1;\nexport const x: number = 'PLANTED_SECRET_4';\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dts := filepath.Join(dir, "secret.d.ts")
	if err := os.WriteFile(dts, []byte("declare const leak: PLANTED_SECRET_5;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fold := "export function fold(view: View, event: Event): View {\n  return view;\n}\n"
	noExt := strings.TrimSuffix(secret, ".ts")
	for _, c2 := range []struct {
		name, ts string
		line     int
	}{
		{"reference path", fmt.Sprintf("/// <reference path=%q />\n", secret) + fold, 1},
		{"reference path d.ts", fmt.Sprintf("  ///<reference path='%s'/>\n", dts) + fold, 1},
		{"reference types", fmt.Sprintf("/// <reference types=%q />\n", dir) + fold, 1},
		{"reference lib", "/// <reference lib=\"dom\" />\n" + fold, 1},
		{"amd-dependency", fmt.Sprintf("/// <amd-dependency path=%q />\n", noExt) + fold, 1},
		{"import", fmt.Sprintf("import { x } from %q;\n", noExt) + fold, 1},
		{"import type", fmt.Sprintf("import type { x } from %q;\n", noExt) + fold, 1},
		{"import =", fmt.Sprintf("import s = require(%q);\n", noExt) + fold, 1},
		{"export from", fmt.Sprintf("export * from %q;\n", noExt) + fold, 1},
		{"import() type", "type T = typeof import(" + fmt.Sprintf("%q", noExt) + ");\n" + fold, 1},
	} {
		t.Run(c2.name, func(t *testing.T) {
			_, issues, err := Check(context.Background(), Source{TS: c2.ts, Views: []View{{"out", "text"}}}, Options{Compiler: c, Timeout: testTimeout})
			if err != nil {
				t.Fatalf("err %v", err)
			}
			if len(issues) == 0 || issues[0].Line != c2.line {
				t.Fatalf("issues %+v", issues)
			}
			if s := fmt.Sprint(issues); strings.Contains(s, "PLANTED_SECRET") || strings.Contains(s, "TS") && strings.Contains(s, "secret") {
				t.Fatalf("an issue quotes the file: %s", s)
			}
		})
	}
}
