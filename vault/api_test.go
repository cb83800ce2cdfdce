package vault

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The vault's API, and that of the packages of git's formats its API
// names (vault/git/...), names no type of go-git's: go-git is how the vault
// reads what its own readers do not know, not a word of its contract.
func TestAPINamesNoGoGitType(t *testing.T) {
	dirs, _ := filepath.Glob("git/*")
	for _, dir := range append([]string{"."}, dirs...) {
		fset := token.NewFileSet()
		names, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		files := map[string]*ast.File{}
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files[name] = f
		}
		for name, f := range files {
			goGit := map[string]bool{}
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if !strings.HasPrefix(path, "github.com/go-git/") {
					continue
				}
				local := filepath.Base(path)
				if imp.Name != nil {
					local = imp.Name.Name
				}
				goGit[local] = true
			}
			check := func(what string, n ast.Node) {
				if n == nil {
					return
				}
				ast.Inspect(n, func(n ast.Node) bool {
					if sel, ok := n.(*ast.SelectorExpr); ok {
						if x, ok := sel.X.(*ast.Ident); ok && goGit[x.Name] {
							t.Errorf("%s: %s names go-git's %s.%s", name, what, x.Name, sel.Sel.Name)
						}
					}
					return true
				})
			}
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Name.IsExported() && (d.Recv == nil || exportedRecv(d.Recv)) {
						check(d.Name.Name, d.Type)
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							if !s.Name.IsExported() {
								continue
							}
							if st, ok := s.Type.(*ast.StructType); ok {
								for _, fl := range st.Fields.List {
									for _, n := range fl.Names {
										if n.IsExported() {
											check(s.Name.Name+"."+n.Name, fl.Type)
										}
									}
								}
								continue
							}
							check(s.Name.Name, s.Type)
						case *ast.ValueSpec:
							for _, n := range s.Names {
								if n.IsExported() {
									check(n.Name, s.Type)
									for _, v := range s.Values {
										check(n.Name, v)
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

func exportedRecv(r *ast.FieldList) bool {
	t := r.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}
