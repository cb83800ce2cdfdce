package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/txtar"
	"rsc.io/script"
	"rsc.io/script/scripttest"
)

// TestScripts runs the scripts of testdata/script/ (rsc.io/script) as a
// person types them at a shell: quire is this test binary standing in for
// the command (TestMain), started once a line in the script's folder with
// the script's environment. Besides the engine's commands, a script has
//
//	quire ARGS...      run quire; its output is what stdout and stderr match
//	status N           the last quire's exit code was N
//	capture VAR REGEXP set $VAR to REGEXP's first group in the last stdout
//
// walkthrough.txt is the README's "Using it" (TestREADMEWalkthrough holds
// the two to each other), refusals.txt the usage errors and refusals.
func TestScripts(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"QUIRE_TEST_AS_QUIRE=1"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "QUIRE_") && !strings.HasPrefix(kv, "XDG_CACHE_HOME=") {
			env = append(env, kv)
		}
	}
	// The compiler of pages' modules, where `quire tools install` puts it
	// (the user's cache): this quire runs outside the source tree, with
	// no QUIRE_TSC, as an installed one does.
	cache := cacheHome(t)
	if c, err := findTSCForTest(root); err == nil {
		bin := filepath.Join(cache, "quire", "tools", "node_modules", ".bin")
		os.MkdirAll(bin, 0o755)
		if err := os.Symlink(c, filepath.Join(bin, "tsc")); err != nil {
			t.Fatal(err)
		}
	}
	env = append(env, "XDG_CACHE_HOME="+cache)
	engine := &script.Engine{Cmds: scripttest.DefaultCmds(), Conds: scripttest.DefaultConds()}
	codes := &sync.Map{}
	engine.Cmds["quire"] = quireCmd(codes)
	engine.Cmds["status"] = statusCmd(codes)
	engine.Cmds["capture"] = captureCmd()
	files, _ := filepath.Glob("testdata/script/*.txt")
	if len(files) == 0 {
		t.Fatal("no scripts in testdata/script")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			t.Parallel()
			work := t.TempDir()
			s, err := script.NewState(context.Background(), work, env)
			if err != nil {
				t.Fatal(err)
			}
			a, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.ExtractFiles(a); err != nil {
				t.Fatal(err)
			}
			s.Setenv("WORK", work)
			// The source tree's testdata/, which the README names.
			s.Setenv("SRC", root)
			scripttest.Run(t, engine, s, file, strings.NewReader(string(a.Comment)))
		})
	}
}

func findTSCForTest(root string) (string, error) {
	p := filepath.Join(root, ".tools", "node_modules", ".bin", "tsc")
	_, err := os.Stat(p)
	return p, err
}

func quireCmd(codes *sync.Map) script.Cmd {
	return script.Command(script.CmdUsage{Summary: "run quire", Args: "args..."},
		func(s *script.State, args ...string) (script.WaitFunc, error) {
			cmd := exec.CommandContext(s.Context(), os.Args[0], args...)
			cmd.Dir, cmd.Env = s.Getwd(), s.Environ()
			var out, errb strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
				err = fmt.Errorf("exit status %d", code)
			} else if err != nil {
				return nil, err
			}
			codes.Store(s, code)
			return func(*script.State) (string, string, error) { return out.String(), errb.String(), err }, nil
		})
}

func statusCmd(codes *sync.Map) script.Cmd {
	return script.Command(script.CmdUsage{Summary: "check the last quire's exit code", Args: "code"},
		func(s *script.State, args ...string) (script.WaitFunc, error) {
			if len(args) != 1 {
				return nil, script.ErrUsage
			}
			want, err := strconv.Atoi(args[0])
			if err != nil {
				return nil, script.ErrUsage
			}
			got, _ := codes.Load(s)
			if got != want {
				return nil, fmt.Errorf("quire exited %v, want %d", got, want)
			}
			return nil, nil
		})
}

func captureCmd() script.Cmd {
	return script.Command(script.CmdUsage{Summary: "set a variable from the last stdout", Args: "VAR regexp",
		RegexpArgs: func(raw ...string) []int { return []int{1} }},
		func(s *script.State, args ...string) (script.WaitFunc, error) {
			if len(args) != 2 {
				return nil, script.ErrUsage
			}
			re, err := regexp.Compile(args[1])
			if err != nil {
				return nil, err
			}
			m := re.FindStringSubmatch(s.Stdout())
			if len(m) < 2 {
				return nil, fmt.Errorf("capture: %s matches nothing in:\n%s", args[1], s.Stdout())
			}
			return nil, s.Setenv(args[0], m[1])
		})
}

// TestREADMEWalkthrough holds README.md's "Using it" to the script that
// runs it: every quire command of the README's block (but the servers,
// which do not end) is a line of walkthrough.txt, with <project uid> and
// <run id> as $PROJECT and $RUN.
func TestREADMEWalkthrough(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "## Using it\n")
	if !ok {
		t.Fatal("README.md has no ## Using it")
	}
	block, _, _ = strings.Cut(block, "\n## ")
	scr, err := os.ReadFile("testdata/script/walkthrough.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(string(scr), "\n") {
		lines[strings.Join(strings.Fields(l), " ")] = true
	}
	n := 0
	sc := bufio.NewScanner(strings.NewReader(block))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(l, "quire ") || !strings.HasPrefix(sc.Text(), "    ") {
			continue
		}
		if i := strings.Index(l, "  #"); i >= 0 {
			l = l[:i]
		}
		l = strings.NewReplacer("<project uid>", "$PROJECT", "<run id>", "$RUN", "<id>", "$TOKEN").Replace(l)
		l = strings.Join(strings.Fields(l), " ")
		switch strings.Fields(l)[1] {
		case "serve", "mcp":
			continue
		}
		n++
		if !lines[l] {
			t.Errorf("README's %q is not in walkthrough.txt", l)
		}
	}
	if n < 10 {
		t.Errorf("only %d quire commands in README's Using it", n)
	}
}
