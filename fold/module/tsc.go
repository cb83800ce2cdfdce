package module

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Compiler is a native TypeScript compiler (tsc of npm typescript@7 or
// later): the binary to run and the directory of its lib files.
type Compiler struct {
	Path   string // the native binary
	LibDir string // the directory holding lib.es5.d.ts
}

// ErrNoCompiler is returned by FindCompiler when no compiler is installed.
var ErrNoCompiler = errors.New("the TypeScript compiler is not installed: run `make tools`, or `npm install typescript@7` in .tools/ at the module's root, or set QUIRE_TSC to the path of tsc")

// InstallHint is the sentence a refusal gives when the compiler is missing.
const InstallHint = "The TypeScript compiler (tsc of npm typescript@7) is not installed: run `make tools`, or `npm install typescript@7` in .tools/, or set QUIRE_TSC to its path; or set the vault's `typecheck: syntax-only`."

// FindCompiler finds the compiler, in this order:
//
//  1. the path in the environment variable QUIRE_TSC;
//  2. root/.tools/node_modules/.bin/tsc, the copy `make tools` installs,
//     where root is the given module root, or else the first directory
//     holding go.mod walking up from the working directory and then from
//     the executable;
//  3. tsc on the PATH, when `tsc --version` says 7 or later.
//
// A path that is npm's JavaScript wrapper (typescript/bin/tsc) is resolved
// to the native binary of @typescript/typescript-<os>-<arch> beside it, so
// a check does not start node. The answer is kept for the process.
func FindCompiler(root string) (Compiler, error) {
	findMu.Lock()
	defer findMu.Unlock()
	key := root + "\x00" + os.Getenv("QUIRE_TSC")
	if c, ok := found[key]; ok {
		return c, nil
	}
	c, err := findCompiler(root)
	if err == nil {
		found[key] = c
	}
	return c, err
}

var (
	findMu sync.Mutex
	found  = map[string]Compiler{}
)

func findCompiler(root string) (Compiler, error) {
	if p := os.Getenv("QUIRE_TSC"); p != "" {
		c, err := resolve(p)
		if err != nil {
			return Compiler{}, fmt.Errorf("QUIRE_TSC=%s: %w", p, err)
		}
		return c, nil
	}
	var roots []string
	if root != "" {
		roots = append(roots, root)
	} else {
		if wd, err := os.Getwd(); err == nil {
			if r := moduleRoot(wd); r != "" {
				roots = append(roots, r)
			}
		}
		if exe, err := os.Executable(); err == nil {
			if r := moduleRoot(filepath.Dir(exe)); r != "" {
				roots = append(roots, r)
			}
		}
	}
	for _, r := range roots {
		p := filepath.Join(r, ".tools", "node_modules", ".bin", "tsc")
		if _, err := os.Stat(p); err == nil {
			if c, err := resolve(p); err == nil {
				return c, nil
			}
		}
	}
	if p, err := exec.LookPath("tsc"); err == nil {
		if c, err := resolve(p); err == nil && majorVersion(c.Path) >= 7 {
			return c, nil
		}
	}
	return Compiler{}, ErrNoCompiler
}

// moduleRoot walks up from dir to the first directory holding go.mod.
func moduleRoot(dir string) string {
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			return ""
		}
		dir = up
	}
}

// resolve turns a tsc path into the native binary and its lib directory.
func resolve(p string) (Compiler, error) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return Compiler{}, err
	}
	if hasLib(filepath.Dir(real)) {
		return Compiler{Path: real, LibDir: filepath.Dir(real)}, nil
	}
	// npm's wrapper: <pkg>/bin/tsc with <pkg> = …/node_modules/typescript.
	pkg := filepath.Dir(filepath.Dir(real))
	native := "typescript-" + runtime.GOOS + "-" + goarchNode()
	for _, dir := range []string{
		filepath.Join(pkg, "node_modules", "@typescript", native, "lib"),
		filepath.Join(filepath.Dir(pkg), "@typescript", native, "lib"),
	} {
		bin := filepath.Join(dir, "tsc")
		if runtime.GOOS == "windows" {
			bin += ".exe"
		}
		if _, err := os.Stat(bin); err == nil && hasLib(dir) {
			return Compiler{Path: bin, LibDir: dir}, nil
		}
	}
	return Compiler{}, fmt.Errorf("no native compiler (@typescript/%s) beside %s", native, real)
}

func hasLib(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "lib.es5.d.ts"))
	return err == nil
}

func goarchNode() string {
	switch runtime.GOARCH {
	case "amd64":
		return "x64"
	case "386":
		return "ia32"
	}
	return runtime.GOARCH
}

var versionRe = regexp.MustCompile(`Version (\d+)\.`)

func majorVersion(bin string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return 0
	}
	m := versionRe.FindSubmatch(out)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// diagnostic is one line of tsc's plain output.
type diagnostic struct {
	File    string
	Line    int
	Code    string
	Message string
}

var diagRe = regexp.MustCompile(`^(.+?)\((\d+),(\d+)\): error (TS\d+): (.*)$`)

// parseDiagnostics reads `tsc --pretty false`: one diagnostic a line, with
// its continuation lines indented below it.
func parseDiagnostics(out string) []diagnostic {
	var ds []diagnostic
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimRight(line, "\r")
		if m := diagRe.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[2])
			ds = append(ds, diagnostic{File: filepath.Base(m[1]), Line: n, Code: m[4], Message: m[5]})
			continue
		}
		if strings.HasPrefix(line, "  ") && len(ds) > 0 {
			ds[len(ds)-1].Message += " " + strings.TrimSpace(line)
			continue
		}
		if strings.HasPrefix(line, "error TS") {
			ds = append(ds, diagnostic{Message: line})
		}
	}
	return ds
}
