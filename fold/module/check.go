package module

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"quire/internal/jsscan"
	"quire/words/refusal"
)

// Source is one module to check.
type Source struct {
	TS        string // the module's text
	FirstLine int    // the document's line of the module's first line (1 if the module is the document)
	Path      string // the JSON pointer of the issues: "/source", or "/page" for the playbook's page; "/source" if empty
	Views     []View // data.views, in the order written
}

// Mode is how much of the check runs.
type Mode int

const (
	// Full transpiles, applies the module rules and type-checks with tsc.
	Full Mode = iota
	// SyntaxOnly is the vault's `typecheck: syntax-only`: esbuild's syntax
	// check and the module rules, and no compiler.
	SyntaxOnly
)

// Options configure a check.
type Options struct {
	Mode Mode
	// Root is the module root whose .tools/ holds the compiler; empty to
	// find it from the working directory and the executable.
	Root string
	// Setting is the vault's `tsc:` (quire.yaml), an absolute path; empty
	// when the vault sets none. Find says where it comes in the lookup.
	Setting string
	// Compiler, when set, is used as is, and nothing is searched.
	Compiler *Compiler
	// Timeout bounds the compiler's run; 2 seconds if zero.
	Timeout time.Duration
}

// Check checks a page's module at save: the module rules (rules.go),
// esbuild's syntax check and, in Full mode, tsc in strict mode with
// exactOptionalPropertyTypes against the runtime's declarations and the
// sandbox's library (lib.go).
//
// It answers the module transpiled to ES2023 ESM when the module is
// accepted, and otherwise the issues, each at its line in the document and
// in the words of the rule or of the compiler. err is a refusal of code
// unavailable when the compiler is missing, or
// another error for a fault of the runtime; issues and err are never both
// set. A type check past its timeout is an issue at the module's first
// line, as the page format's limit on the check at save says (invalid_input).
func Check(ctx context.Context, src Source, opts Options) (js string, issues []refusal.Issue, err error) {
	path := src.Path
	if path == "" {
		path = "/source"
	}
	first := src.FirstLine
	if first < 1 {
		first = 1
	}
	at := func(line int) int {
		if line < 1 {
			line = 1
		}
		return first + line - 1
	}
	untypable := false
	for _, p := range checkRules(jsscan.Scan(src.TS)) {
		issues = append(issues, refusal.Issue{Path: path, Line: at(p.line), Message: p.msg})
		untypable = untypable || p.untypable
	}
	js, err = Transpile(src.TS)
	var se SyntaxErrors
	if errors.As(err, &se) {
		for _, e := range se {
			issues = append(issues, refusal.Issue{Path: path, Line: at(e.Line), Message: e.Message})
		}
		return "", sortIssues(issues), nil
	} else if err != nil {
		return "", nil, err
	}
	// A module that names another file is refused before tsc runs: tsc
	// would read the file, and its diagnostics would quote it (reach.go).
	if ps, names := reaches(src.TS, jsscan.Scan(src.TS)); names {
		for _, p := range ps {
			issues = append(issues, refusal.Issue{Path: path, Line: at(p.line), Message: p.msg})
		}
		if len(issues) == 0 {
			issues = append(issues, refusal.Issue{Path: path, Line: at(1), Message: "The module names another file: a module stands alone and loads nothing."})
		}
		return "", sortIssues(issues), nil
	}
	if opts.Mode == SyntaxOnly || untypable {
		if len(issues) > 0 {
			return "", sortIssues(issues), nil
		}
		return js, nil, nil
	}
	var c Compiler
	if opts.Compiler != nil {
		c = *opts.Compiler
	} else if c, err = Find(opts.Root, opts.Setting); err != nil {
		return "", nil, &refusal.Error{Code: refusal.Unavailable, Message: err.Error()}
	}
	ds, err := typeCheck(ctx, c, src, opts.Timeout)
	var te *timeoutError
	if errors.As(err, &te) {
		// The page format's limit: the check at save takes at most 2
		// seconds, and a module past it is refused as invalid_input.
		issues = append(issues, refusal.Issue{Path: path, Line: at(1), Message: fmt.Sprintf("The module's type check took longer than the %s a check at save may take.", te.after)})
		return "", sortIssues(issues), nil
	} else if err != nil {
		return "", nil, err
	}
	for _, d := range ds {
		issues = append(issues, refusal.Issue{Path: path, Line: at(d.Line), Message: d.Message + " (" + d.Code + ")"})
	}
	if len(issues) > 0 {
		return "", sortIssues(issues), nil
	}
	return js, nil, nil
}

func sortIssues(is []refusal.Issue) []refusal.Issue {
	sort.SliceStable(is, func(a, b int) bool { return is[a].Line < is[b].Line })
	return is
}

const tsconfig = `{
  "compilerOptions": {
    "strict": true,
    "exactOptionalPropertyTypes": true,
    "noEmit": true,
    "noLib": true,
    "skipLibCheck": true,
    "target": "es2023",
    "module": "esnext",
    "moduleDetection": "force",
    "types": [],
    "typeRoots": [],
    "paths": {},
    "noResolve": true,
    "isolatedModules": true
  },
  "files": [%s]
}
`

// typeCheck runs tsc over the module in a directory of its own and
// answers the diagnostics of module.ts.
func typeCheck(ctx context.Context, c Compiler, src Source, timeout time.Duration) ([]diagnostic, error) {
	lib, err := sandboxLib(c.LibDir)
	if err != nil {
		return nil, err
	}
	decls, err := declarations(src.Views)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "quire-module-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	files := make([]string, 0, len(lib.names)+2)
	write := func(name, text string) error {
		files = append(files, fmt.Sprintf("%q", name))
		return os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600)
	}
	for k, name := range lib.names {
		if err := write(name, lib.texts[k]); err != nil {
			return nil, err
		}
	}
	if err := write("quire.d.ts", decls); err != nil {
		return nil, err
	}
	if err := write("module.ts", src.TS); err != nil {
		return nil, err
	}
	cfg := fmt.Sprintf(tsconfig, strings.Join(files, ", "))
	if err := os.WriteFile(filepath.Join(dir, "tsconfig.json"), []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	// The limit is the compiler's processor time, which is the module's
	// doing, not the wall time, which a loaded machine stretches (a module
	// a quiet machine takes must not be refused on a busy one). A compiler
	// that is kept waiting past ten times the limit is stopped all the same.
	ctx, cancel := context.WithTimeout(ctx, 10*timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Path, append([]string{"-p", dir, "--pretty", "false"}, tscExtra...)...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return nil, &timeoutError{timeout}
	}
	if ps := cmd.ProcessState; ps != nil && ps.UserTime()+ps.SystemTime() > timeout {
		return nil, &timeoutError{timeout}
	}
	var exitErr *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exitErr) {
		return nil, fmt.Errorf("module: running %s: %w", c.Path, runErr)
	}
	var mine []diagnostic
	for _, d := range parseDiagnostics(out.String()) {
		if d.File == "module.ts" {
			mine = append(mine, d)
			continue
		}
		// A diagnostic anywhere else is a fault of the runtime's own files.
		return nil, fmt.Errorf("module: the compiler refused the runtime's declarations: %s(%d): %s %s", d.File, d.Line, d.Code, d.Message)
	}
	if runErr != nil && len(mine) == 0 {
		return nil, fmt.Errorf("module: the compiler failed: %s", strings.TrimSpace(out.String()))
	}
	return mine, nil
}

// tscExtra are further arguments to tsc.
var tscExtra = []string{"--singleThreaded"}

// timeoutError is a type check that ran out of its time.
type timeoutError struct{ after time.Duration }

func (e *timeoutError) Error() string {
	return fmt.Sprintf("the type check took longer than %s", e.after)
}
