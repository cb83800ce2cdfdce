package module

import (
	"fmt"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// SyntaxError is esbuild's complaint about the module's text. Line counts
// from 1 in the module text (not the document); Message is esbuild's words.
type SyntaxError struct {
	Line    int
	Column  int
	Message string
}

// SyntaxErrors is every complaint of one transpile, in esbuild's order.
type SyntaxErrors []SyntaxError

func (e SyntaxErrors) Error() string {
	parts := make([]string, len(e))
	for i, s := range e {
		parts[i] = fmt.Sprintf("line %d: %s", s.Line, s.Message)
	}
	return strings.Join(parts, "; ")
}

// Transpile turns the module's TypeScript into ES2023 ESM JavaScript with
// esbuild's Go API. The types are dropped; nothing is bundled or minified.
// A syntax error is returned as SyntaxErrors.
//
// esbuild does not keep lines; use TranspileMapped for a table from the
// JavaScript's lines back to the TypeScript's.
func Transpile(ts string) (js string, err error) {
	js, _, err = TranspileMapped(ts)
	return js, err
}

// TranspileMapped is Transpile that also returns lines: lines[i] is the
// TypeScript line (from 1) that JavaScript line i+1 came from, or 0 for a
// line esbuild made up. Use Lines.TS to map an error's line.
func TranspileMapped(ts string) (js string, lines Lines, err error) {
	res := api.Transform(ts, api.TransformOptions{
		Loader:     api.LoaderTS,
		Format:     api.FormatESModule,
		Target:     api.ES2023,
		Sourcemap:  api.SourceMapExternal,
		Sourcefile: "module.ts",
		LogLevel:   api.LogLevelSilent,
		// No tsconfig file is read; this keeps class fields as written.
		TsconfigRaw: `{"compilerOptions":{"useDefineForClassFields":true,"verbatimModuleSyntax":false}}`,
	})
	if len(res.Errors) > 0 {
		errs := make(SyntaxErrors, 0, len(res.Errors))
		for _, m := range res.Errors {
			se := SyntaxError{Message: m.Text}
			if m.Location != nil {
				se.Line = m.Location.Line
				se.Column = m.Location.Column
			}
			errs = append(errs, se)
		}
		return "", nil, errs
	}
	lines, err = decodeLines(res.Map, strings.Count(string(res.Code), "\n")+1)
	if err != nil {
		return "", nil, fmt.Errorf("module: reading esbuild's source map: %w", err)
	}
	return string(res.Code), lines, nil
}
