package web

import (
	"go/ast"
	goparser "go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The pages read the vault through the operations alone: no file of
// package web (nor of its assets) imports the packages that read files or
// run programs, or reaches the vault's folder or its files past the
// table. An artifact's download, which streams through ledger's
// OpenRunFile once get_run allowed it, is the one exception, and it is
// the ledger that opens the file.
func TestWebReadsNoFileOfTheVault(t *testing.T) {
	forbidden := map[string]string{
		"os":            "reads files",
		"os/exec":       "runs programs",
		"io/ioutil":     "reads files",
		"path/filepath": "walks folders",
		"syscall":       "reads files",
	}
	// What a page may not ask of the ledger: the vault's folder, a run's
	// files read past get_run_files.
	ledgerCalls := map[string]bool{"Root": true, "ReadRunFile": true}
	fsCalls := map[string]bool{"ReadFile": true, "ReadDir": true, "WalkDir": true, "Glob": true}
	var files []string
	for _, dir := range []string{".", "assets"} {
		m, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := goparser.ParseFile(fset, name, src, goparser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if why, bad := forbidden[p]; bad {
				t.Errorf("%s imports %s, which %s: the pages read the vault through the operations", fset.Position(imp.Pos()), p, why)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "fs" && fsCalls[sel.Sel.Name] {
				t.Errorf("%s: fs.%s reads files; the pages read the vault through the operations", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			if ledgerCalls[sel.Sel.Name] {
				t.Errorf("%s: %s reaches the vault past the operations", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
	if checked < 5 {
		t.Fatalf("checked %d files; the package has more", checked)
	}
}
