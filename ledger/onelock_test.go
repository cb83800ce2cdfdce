package ledger

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// Every write goes through the one write transaction: outside package
// vault, which owns the lock, only ledger/tx.go takes it (Locked,
// LockedRead), and above the ledger (the doors, serve and cmd/quire) and in
// the words, fold and render no code imports the vault at all: runfolder,
// below the ledger, writes a run's folder in it.
// cmd/quire-bench builds the histories it measures at object level, as
// other quire processes would write them, and may do both.
func TestOnlyTheWriteTransactionTakesTheLockAndOnlyTheLedgerTheVault(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{"ledger/tx.go": true}
	fset := token.NewFileSet()
	var found int
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch {
			case rel == "vault", strings.HasPrefix(rel, "vault/"), rel == "cmd/quire-bench",
				strings.HasPrefix(d.Name(), "."), d.Name() == "node_modules", d.Name() == "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(rel, "ledger/") && !strings.HasPrefix(rel, "runfolder/") {
			for _, imp := range f.Imports {
				if path := strings.Trim(imp.Path.Value, `"`); path == "quire/vault" || strings.HasPrefix(path, "quire/vault/") {
					t.Errorf("%s imports %s: outside the ledger, nothing reaches the vault", rel, path)
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if ok && (sel.Sel.Name == "Locked" || sel.Sel.Name == "LockedRead") {
				if allowed[rel] {
					found++
				} else {
					t.Errorf("%s: %s takes the vault's lock outside the write transaction (ledger/tx.go)", fset.Position(call.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Fatal("ledger/tx.go takes no lock: the check looks in the wrong place")
	}
}
