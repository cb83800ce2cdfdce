package module

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"quire/internal/gomod"
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

// NoCompiler is the error of a lookup that found no compiler: it names
// every place it looked and what it found there, and says how to install
// one. errors.Is(err, ErrNoCompiler) holds for it.
type NoCompiler struct {
	Looked []string // each place, with what was wrong there
}

func (e *NoCompiler) Error() string {
	return "The TypeScript compiler (tsc of npm typescript@7) was not found. quire looked at " + strings.Join(e.Looked, "; ") + ". " + installHint()
}

// installHint says how to get a compiler.
func installHint() string {
	return "Run `quire tools install` (npm install typescript@7 into " + CacheDir() + "), or `make tools` in the source tree, " +
		"or set QUIRE_TSC or the vault's `tsc:` in quire.yaml to a tsc of TypeScript 7; or set the vault's `typecheck: syntax-only`."
}

func (e *NoCompiler) Is(target error) bool { return target == ErrNoCompiler }

// ErrNoCompiler is what a failed lookup's error is (errors.Is).
var ErrNoCompiler = errors.New("the TypeScript compiler is not installed")

// CacheDir is where `quire tools install` puts typescript@7: quire/tools
// under the user's cache directory (os.UserCacheDir: $XDG_CACHE_HOME or
// ~/.cache on Linux, ~/Library/Caches on macOS, %LocalAppData% on
// Windows).
func CacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "quire-tools")
	}
	return filepath.Join(dir, "quire", "tools")
}

// SourceTree is the source tree quire was installed from, set by `make
// install` (-ldflags -X quire/fold/module.SourceTree=…): an installed
// binary finds the .tools/ that `make tools` filled there.
var SourceTree string

// FindCompiler finds the compiler without a vault's setting; see Find.
func FindCompiler(root string) (Compiler, error) {
	return Find(root, "")
}

// Find finds the compiler, in this order:
//
//  1. the path in the environment variable QUIRE_TSC;
//  2. setting, the vault's `tsc:` in quire.yaml (made absolute by the
//     caller);
//  3. tsc on the PATH, when `tsc --version` says TypeScript 7 or later;
//  4. .tools/node_modules/.bin/tsc (the copy `make tools` installs) beside
//     the executable, and at the root of the source tree: SourceTree (the
//     one `make install` built from), root when given, else the first
//     directory holding go.mod walking up from the working directory and
//     then from the executable;
//  5. the user's cache directory (CacheDir), where `quire tools install`
//     puts it.
//
// A path that is npm's JavaScript wrapper (typescript/bin/tsc) is resolved
// to the native binary of @typescript/typescript-<os>-<arch> beside it, so
// a check does not start node. A place that is set but holds no usable
// compiler (QUIRE_TSC, the setting) is an error naming it, not passed
// over. The answer is kept for the process; without one, the error is a
// *NoCompiler naming every place looked.
func Find(root, setting string) (Compiler, error) {
	findMu.Lock()
	defer findMu.Unlock()
	key := root + "\x00" + setting + "\x00" + os.Getenv("QUIRE_TSC") + "\x00" + os.Getenv("PATH")
	if c, ok := found[key]; ok {
		return c, nil
	}
	c, err := findCompiler(root, setting)
	if err == nil {
		found[key] = c
	}
	return c, err
}

var (
	findMu sync.Mutex
	found  = map[string]Compiler{}
)

func findCompiler(root, setting string) (Compiler, error) {
	if p := os.Getenv("QUIRE_TSC"); p != "" {
		c, err := resolve(p)
		if err != nil {
			return Compiler{}, fmt.Errorf("QUIRE_TSC=%s: %w. %s", p, err, installHint())
		}
		return c, nil
	}
	if setting != "" {
		c, err := resolve(setting)
		if err != nil {
			return Compiler{}, fmt.Errorf("the vault's tsc: %s in quire.yaml: %w. %s", setting, err, installHint())
		}
		return c, nil
	}
	looked := []string{"QUIRE_TSC (not set)", "the vault's tsc: in quire.yaml (not set)"}
	if p, err := exec.LookPath("tsc"); err != nil {
		looked = append(looked, "tsc on the PATH (none)")
	} else if c, err := resolve(p); err != nil {
		looked = append(looked, fmt.Sprintf("tsc on the PATH (%s: %v)", p, err))
	} else if v := majorVersion(c.Path); v < 7 {
		looked = append(looked, fmt.Sprintf("tsc on the PATH (%s is TypeScript %d, not 7 or later)", p, v))
	} else {
		return c, nil
	}
	var places []string
	at := func(dir string) string { return filepath.Join(dir, ".tools", "node_modules", ".bin", "tsc") }
	exe, exeErr := os.Executable()
	if exeErr == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		places = append(places, at(filepath.Dir(exe)))
	}
	if SourceTree != "" {
		places = append(places, at(SourceTree))
	}
	if root != "" {
		places = append(places, at(root))
	} else {
		if wd, err := os.Getwd(); err == nil {
			if r := gomod.Around(wd); r != "" {
				places = append(places, at(r))
			}
		}
		if exeErr == nil {
			if r := gomod.Around(filepath.Dir(exe)); r != "" {
				places = append(places, at(r))
			}
		}
	}
	places = append(places, filepath.Join(CacheDir(), "node_modules", ".bin", "tsc"))
	seen := map[string]bool{}
	for _, p := range places {
		if seen[p] {
			continue
		}
		seen[p] = true
		if _, err := os.Stat(p); err != nil {
			looked = append(looked, p+" (absent)")
			continue
		}
		c, err := resolve(p)
		if err == nil {
			return c, nil
		}
		looked = append(looked, fmt.Sprintf("%s (%v)", p, err))
	}
	return Compiler{}, &NoCompiler{Looked: looked}
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
