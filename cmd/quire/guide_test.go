package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// The guide (docs/guide.md) is run as a user would follow it, so that it
// can never go stale. Its fenced blocks are of two kinds, and any other
// fence fails the test:
//
//   - a file, whose info string names it: ```yaml file=close-the-month.yaml.
//     Its text is written to that path in the session's folder at that
//     point of the guide (a later block of the same name overwrites it, as
//     a reader editing the file would). The info string does not show when
//     the guide is rendered, so the prose since the block before names the
//     file, `close-the-month.yaml`, in backticks;
//   - a console session, ```console: each line that starts with "$ " is a
//     command (a line ending with " \" continues it), and the lines up to
//     the next command are what it prints, standard output and standard
//     error together, compared line by line.
//
// Every command runs, in the order of the guide, in one bash, whose PATH
// starts with a `quire` that is this test binary acting as the CLI (see
// init below), so shell variables, `cd`, pipes and jq work as they do for
// a reader. In what a command prints, the guide writes a value that
// changes from one run to the next as a placeholder:
//
//   - <name> (lowercase letters, digits, spaces and hyphens) matches the
//     value printed there and names it: every later <name> must be that
//     same value, and a later command's <name> is replaced by it, as a
//     reader pastes the id they were given;
//   - <…> matches any value and names nothing (times of the clock).
//
// A file the guide writes under the name of one of testdata/vault's
// examples (close-the-month.yaml) must, in one of its versions, be that
// example, so the guide's steps reach the spec's page.
//
// QUIRE_GUIDE_DUMP=FILE appends each command, how long it took and what it
// printed to FILE, for whoever writes the guide.
//
// The one line a command may print beside what the guide shows is the
// progress of a fold that took over a second (a busy machine), which
// quire writes on standard error; it is dropped before comparing.
//
// When the guide's session runs `quire`, it runs this test binary with
// guideRunAsQuire set: it is then the CLI, main without the tests
// (TestMain).
const guideRunAsQuire = "QUIRE_GUIDE_RUN_AS_QUIRE"

// guideItem is one fenced block of the guide: a file to write, or a
// command and what it prints.
type guideItem struct {
	line    int    // its line in the guide
	file    string // a file block's path
	text    string // a file's text, or a command
	printed []string
}

var guideFile = regexp.MustCompile(`(?:^|\s)file=(\S+)`)

// guideItems reads the guide's fenced blocks, in order.
func guideItems(t *testing.T, guide []byte) []guideItem {
	t.Helper()
	lineOf := func(offset int) int { return bytes.Count(guide[:offset], []byte("\n")) + 1 }
	var items []guideItem
	since := 0 // where the prose since the last block begins
	doc := goldmark.New().Parser().Parse(text.NewReader(guide))
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		fence, ok := n.(*ast.FencedCodeBlock)
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		var body strings.Builder
		lines := fence.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			body.Write(seg.Value(guide))
		}
		at := 0
		if lines.Len() > 0 {
			at = lineOf(lines.At(0).Start) - 1
		}
		info := ""
		if fence.Info != nil {
			info = string(fence.Info.Segment.Value(guide))
		}
		switch m := guideFile.FindStringSubmatch(info); {
		case m != nil:
			items = append(items, guideItem{line: at, file: m[1], text: body.String()})
			if opening := bytes.LastIndex(guide[:lines.At(0).Start-1], []byte("\n")) + 1; !bytes.Contains(guide[since:opening], []byte("`"+m[1]+"`")) {
				t.Errorf("docs/guide.md:%d: the prose before the block does not name its file, `%s`", at, m[1])
			}
		case info == "console":
			items = append(items, consoleItems(t, at, body.String())...)
		default:
			t.Errorf("docs/guide.md:%d: a fenced block that is neither a file (```yaml file=PATH) nor a session (```console): %q", at, info)
		}
		if lines.Len() > 0 {
			since = lines.At(lines.Len() - 1).Stop
		}
		return ast.WalkSkipChildren, nil
	})
	return items
}

// consoleItems splits a console block into its commands.
func consoleItems(t *testing.T, at int, body string) []guideItem {
	var items []guideItem
	continued := false
	for i, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		switch {
		case continued:
			items[len(items)-1].text += "\n" + line
		case strings.HasPrefix(line, "$ "):
			items = append(items, guideItem{line: at + 1 + i, text: strings.TrimPrefix(line, "$ ")})
		case len(items) == 0:
			t.Errorf("docs/guide.md:%d: a console block starts with a line that is no command: %q", at+1+i, line)
			return nil
		default:
			items[len(items)-1].printed = append(items[len(items)-1].printed, line)
		}
		continued = len(items) > 0 && strings.HasSuffix(line, " \\") && (continued || strings.HasPrefix(line, "$ "))
	}
	return items
}

var guideProgress = regexp.MustCompile(`(?m)^quire: fold(ing|ed) the history of .* events/s\n`)

var guidePlaceholder = regexp.MustCompile(`<([a-z][a-z0-9 -]*|…)>`)

// guideMatch compares what a command printed with what the guide shows,
// binding the guide's placeholders in names. It answers "" when they
// agree, or what differs.
func guideMatch(want []string, got string, names map[string]string) string {
	gotLines := strings.Split(strings.TrimRight(got, "\n"), "\n")
	if got == "" || strings.TrimRight(got, "\n") == "" {
		gotLines = nil
	}
	if len(gotLines) != len(want) {
		return fmt.Sprintf("%d lines printed, the guide shows %d", len(gotLines), len(want))
	}
	for i, w := range want {
		var re strings.Builder
		var fresh []string
		re.WriteString("^")
		last := 0
		for _, m := range guidePlaceholder.FindAllStringSubmatchIndex(w, -1) {
			re.WriteString(regexp.QuoteMeta(w[last:m[0]]))
			last = m[1]
			name := w[m[2]:m[3]]
			if v, ok := names[name]; ok && name != "…" {
				re.WriteString(regexp.QuoteMeta(v))
				continue
			}
			re.WriteString("(.+?)")
			fresh = append(fresh, name)
		}
		re.WriteString(regexp.QuoteMeta(w[last:]) + "$")
		m := regexp.MustCompile(re.String()).FindStringSubmatch(gotLines[i])
		if m == nil {
			return fmt.Sprintf("line %d: printed\n\t%s\nthe guide shows\n\t%s", i+1, gotLines[i], w)
		}
		for j, name := range fresh {
			if name == "…" {
				continue
			}
			if v, ok := names[name]; ok && v != m[j+1] {
				return fmt.Sprintf("line %d: <%s> is %q here and %q before", i+1, name, m[j+1], v)
			}
			names[name] = m[j+1]
		}
	}
	return ""
}

// guideShell is one bash that runs the guide's commands in turn.
type guideShell struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

const guideMark = "\x1equire-guide-done\x1e"

// do runs one command and answers what it printed.
func (s *guideShell) do(t *testing.T, command string) string {
	t.Helper()
	// The command reads /dev/null unless it redirects or pipes its own
	// input, so it never reads the rest of the script; its standard error
	// goes where its output goes, as on a terminal.
	fmt.Fprintf(s.in, "{ %s\n} </dev/null 2>&1; printf '\\n%s\\n'\n", command, guideMark)
	var out strings.Builder
	done := make(chan error, 1)
	go func() {
		for {
			line, err := s.out.ReadString('\n')
			if err != nil {
				done <- err
				return
			}
			if line == guideMark+"\n" {
				done <- nil
				return
			}
			out.WriteString(line)
		}
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the guide's shell ended at %q: %v\n%s", command, err, out.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("the guide's command %q ran over 2 minutes", command)
	}
	return strings.TrimSuffix(out.String(), "\n")
}

// TestGuide follows docs/guide.md from its first block to its last.
func TestGuide(t *testing.T) {
	t.Parallel() // it changes neither the environment nor the folder: its bash has its own
	guide, err := os.ReadFile("../../docs/guide.md")
	if err != nil {
		t.Fatal(err)
	}
	items := guideItems(t, guide)
	if t.Failed() {
		return
	}
	tsc, _ := filepath.Abs("../../.tools/node_modules/.bin/tsc")
	if _, err := os.Stat(tsc); err != nil {
		t.Fatalf("the guide saves pages, whose modules need the TypeScript compiler: run `make tools` (%v)", err)
	}
	for _, tool := range []string{"bash", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the guide's sessions run in bash and use jq, as its reader does: install %s (%v)", tool, err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	wrapper := fmt.Sprintf("#!/bin/sh\n%s=1 exec %q \"$@\"\n", guideRunAsQuire, self)
	if err := os.WriteFile(filepath.Join(bin, "quire"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	sh := exec.Command("bash", "--noprofile", "--norc")
	sh.Dir = home
	sh.Env = []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + home,
		"XDG_CACHE_HOME=" + cacheHome(t), "QUIRE_TSC=" + tsc, "LANG=C.UTF-8", "TZ=UTC"}
	for _, keep := range []string{"GOCOVERDIR", "GORACE"} { // for this binary, built with -cover or -race
		if v, ok := os.LookupEnv(keep); ok {
			sh.Env = append(sh.Env, keep+"="+v)
		}
	}
	sh.Stderr = os.Stderr
	in, _ := sh.StdinPipe()
	out, _ := sh.StdoutPipe()
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	s := &guideShell{cmd: sh, in: in, out: bufio.NewReader(out)}
	defer func() { in.Close(); sh.Wait() }()

	names := map[string]string{}
	versions := map[string][]string{} // the texts the guide gave each file
	for _, it := range items {
		if it.file != "" {
			versions[it.file] = append(versions[it.file], it.text)
			path := filepath.Join(home, it.file)
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(it.text), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		command := guidePlaceholder.ReplaceAllStringFunc(it.text, func(p string) string {
			v, ok := names[p[1:len(p)-1]]
			if !ok {
				t.Fatalf("docs/guide.md:%d: %s in a command before any output gave it", it.line, p)
			}
			return v
		})
		start := time.Now()
		got := guideProgress.ReplaceAllString(s.do(t, command)+"\n", "")
		if os.Getenv("QUIRE_GUIDE_DUMP") != "" {
			f, _ := os.OpenFile(os.Getenv("QUIRE_GUIDE_DUMP"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			fmt.Fprintf(f, "=== %d %s (%s)\n%s\n", it.line, command, time.Since(start), got)
			f.Close()
		}
		if diff := guideMatch(it.printed, got, names); diff != "" {
			t.Errorf("docs/guide.md:%d: $ %s\n%s\n\nit printed:\n%s", it.line, it.text, diff, got)
		}
	}

	examples, _ := filepath.Glob("../../testdata/vault/*.yaml")
	for _, ex := range examples {
		texts, ok := versions[filepath.Base(ex)]
		if !ok {
			continue
		}
		want, _ := os.ReadFile(ex)
		if !slices.Contains(texts, string(want)) {
			t.Errorf("none of the %d versions of %s in the guide is testdata/vault/%[2]s", len(texts), filepath.Base(ex))
		}
	}
	if len(versions["close-the-month.yaml"]) == 0 {
		t.Error("the guide no longer builds close-the-month.yaml")
	}
}
