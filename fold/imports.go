package fold

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/evanw/esbuild/pkg/api"
)

// moduleImport finds what the module imports, with esbuild's parser: an
// import declaration, an export … from, a require or an import() of a
// written-out name. qjs gives every runtime the modules qjs:std and
// qjs:os (files, clocks, std.evalScript), so a module that imports
// anything does not load. fold/module refuses import at save; this is
// the sandbox's own guard. An import() of a computed name is not found
// here: it needs the runtime's job loop, which a fold never runs.
func moduleImport(js string) (string, bool) {
	var mu sync.Mutex
	var found []string
	api.Build(api.BuildOptions{
		Stdin:    &api.StdinOptions{Contents: js, Loader: api.LoaderJS, Sourcefile: moduleFile},
		Bundle:   true,
		Write:    false,
		Format:   api.FormatESModule,
		LogLevel: api.LogLevelSilent,
		Plugins: []api.Plugin{{
			Name: "imports",
			Setup: func(b api.PluginBuild) {
				b.OnResolve(api.OnResolveOptions{Filter: ".*"}, func(args api.OnResolveArgs) (api.OnResolveResult, error) {
					mu.Lock()
					found = append(found, args.Path)
					mu.Unlock()
					return api.OnResolveResult{Path: args.Path, External: true}, nil
				})
			},
		}},
	})
	if len(found) == 0 {
		return "", false // a syntax error is QuickJS's to tell
	}
	sort.Strings(found)
	return found[0], true
}

// importError is the refusal of a module that imports name, at the line
// of the JavaScript that first names it.
func importError(js, name string) *jsError {
	line := 0
	for _, q := range []string{"'" + name + "'", `"` + name + `"`, "`" + name + "`"} {
		if i := strings.Index(js, q); i >= 0 {
			line = strings.Count(js[:i], "\n") + 1
			break
		}
	}
	return &jsError{Text: fmt.Sprintf("SyntaxError: the module imports %q: a page's module imports nothing", name), JSLine: line}
}
