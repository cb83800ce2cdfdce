package ledger

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// The playbooks' histories are written by the write transaction alone: in
// package ledger, only the methods of *tx call a method of package history
// that writes (whose doc says the caller holds the vault's lock). Every
// exported method of the history's types is named below as a read or a
// write, so a new one is placed on purpose.
func TestOnlyTheTxWritesTheHistory(t *testing.T) {
	const hp = "quire/ledger/history"
	writes := map[string]bool{
		"Store.Of": true, "Store.FollowGit": true, "Store.Adopt": true, "Store.Commit": true, "Store.FinishPending": true, "Store.WillCommit": true, "Store.Appended": true,
		"History.Repair": true, "History.Reserve": true,
	}
	reads := map[string]bool{
		"Store.Read": true, "Store.Peek": true, "Store.Reset": true, "Store.Stale": true, "Store.StaleSized": true, "Store.Pending": true, "Store.AdoptFor": true, "Store.AdoptAllFor": true,
		"Store.EachEvent": true, "Store.NthEvent": true, "Store.GitMoved": true,
		"History.Len": true, "History.Page": true, "History.Verify": true, "History.VerifyFrom": true, "History.Chain": true,
	}
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	exports := map[string]string{}
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		if p, file, ok := strings.Cut(sc.Text(), "\t"); ok {
			exports[p] = file
		}
	}
	names, err := exec.Command("go", "list", "-f", "{{join .GoFiles \"\\n\"}}", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range strings.Fields(string(names)) {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		return os.Open(exports[path])
	})}
	info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
	pkg, err := conf.Check("quire/ledger", fset, files, info)
	if err != nil {
		t.Fatal(err)
	}
	// Every exported method is a read or a write.
	var hist *types.Package
	for _, p := range pkg.Imports() {
		if p.Path() == hp {
			hist = p
		}
	}
	if hist == nil {
		t.Fatalf("package ledger does not import %s", hp)
	}
	for _, typ := range []string{"Store", "History"} {
		named := hist.Scope().Lookup(typ).Type().(*types.Named)
		ms := types.NewMethodSet(types.NewPointer(named))
		for i := range ms.Len() {
			m := ms.At(i).Obj()
			if name := typ + "." + m.Name(); m.Exported() && !writes[name] && !reads[name] {
				t.Errorf("%s.%s is neither a read nor a write of this test", hp, name)
			}
		}
	}
	// Only *tx's methods call the writes.
	called := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			inTx := false
			if fn.Recv != nil {
				if star, ok := fn.Recv.List[0].Type.(*ast.StarExpr); ok {
					if id, ok := star.X.(*ast.Ident); ok && id.Name == "tx" {
						inTx = true
					}
				}
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				s, ok := info.Selections[sel]
				if !ok || s.Kind() != types.MethodVal || s.Obj().Pkg() != hist {
					return true
				}
				recv := types.Unalias(s.Recv())
				if p, ok := recv.(*types.Pointer); ok {
					recv = types.Unalias(p.Elem())
				}
				named, ok := recv.(*types.Named)
				if !ok {
					return true
				}
				name := named.Obj().Name() + "." + s.Obj().Name()
				if writes[name] {
					called[name] = true
					if !inTx {
						t.Errorf("%s: %s writes the history outside the write transaction (a method of *tx)", fset.Position(sel.Pos()), name)
					}
				}
				return true
			})
		}
	}
	var never []string
	for name := range writes {
		if !called[name] {
			never = append(never, name)
		}
	}
	sort.Strings(never)
	if len(never) > 0 {
		t.Errorf("no method of *tx calls %v: the test looks in the wrong place", never)
	}
}
