package ledger

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// The table is one table: every operation points at a named method of
// Ledger spelled as the operation (run_definition: runDefinition), and no
// init function anywhere in the ledger adds to it.
func TestTheTableIsOneTable(t *testing.T) {
	ops := Ops()
	if len(ops) < 35 {
		t.Fatalf("%d operations", len(ops))
	}
	for _, op := range ops {
		parts := strings.Split(op.Name, "_")
		for i := 1; i < len(parts); i++ {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
		if want := "quire/ledger.(*Ledger)." + strings.Join(parts, ""); op.Handler != want {
			t.Errorf("%s is handled by %s, want %s", op.Name, op.Handler, want)
		}
	}
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == "init" {
				t.Errorf("%s: an init function; the table is ops.go's list alone", fset.Position(fd.Pos()))
			}
		}
	}
}
