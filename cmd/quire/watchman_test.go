package main

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"quire/internal/gitcmd"
)

// fakeWatchman is a Watchman server on a socket of its own (WATCHMAN_SOCK):
// it answers each command with what the test says and keeps the commands.
type fakeWatchman struct {
	mu     sync.Mutex
	asked  [][]any
	answer func(cmd []any) map[string]any
}

func startFakeWatchman(t *testing.T) *fakeWatchman {
	t.Helper()
	dir, err := os.MkdirTemp("", "wm") // a socket's path is at most 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	l, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	t.Setenv("WATCHMAN_SOCK", filepath.Join(dir, "sock"))
	f := &fakeWatchman{}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadBytes('\n')
					if err != nil {
						return
					}
					var cmd []any
					json.Unmarshal(line, &cmd)
					f.mu.Lock()
					f.asked = append(f.asked, cmd)
					answer := f.answer
					f.mu.Unlock()
					a := map[string]any{"version": "4.9.0"}
					if answer != nil {
						a = answer(cmd)
					}
					// A log line first, as Watchman may send one: it
					// answers no command.
					out, _ := json.Marshal(map[string]any{"log": "a log line", "unilateral": true})
					c.Write(append(out, '\n'))
					out, _ = json.Marshal(a)
					c.Write(append(out, '\n'))
				}
			}()
		}
	}()
	return f
}

func (f *fakeWatchman) says(answer func(cmd []any) map[string]any) {
	f.mu.Lock()
	f.answer, f.asked = answer, nil
	f.mu.Unlock()
}

func (f *fakeWatchman) commands() [][]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.asked)
}

// A vault whose monitor hook is git's Watchman hook (README) is asked
// Watchman's question over Watchman's socket by quire itself, not through
// the hook's Perl and watchman processes (40-60 ms a question): the
// hook's query, since the token quire keeps, from the work tree's real
// path, and its answer taken as the hook's would be. When Watchman cannot
// be asked so, the hook is run, as before.
func TestCheckAsksWatchmanOverItsSocket(t *testing.T) {
	dir, v, rel := closeRunOfOneStep(t)
	real, _ := filepath.EvalSymlinks(dir)

	// git's own hook, with a line in front that leaves a mark when it runs.
	sample, err := gitcmd.WatchmanHook()
	if err != nil {
		t.Fatalf("git's Watchman hook: %v", err)
	}
	ran := filepath.Join(t.TempDir(), "ran")
	hookText := strings.Replace(string(sample), "use strict;", "use strict;\nopen(my $ran, '>>', '"+ran+"'); close($ran);", 1)
	os.MkdirAll(filepath.Join(dir, ".git", "hooks"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, ".git", "hooks", "query-watchman"), []byte(hookText), 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "config", "core.fsmonitor", ".git/hooks/query-watchman")
	hookRan := func() bool {
		_, err := os.Stat(ran)
		os.Remove(ran)
		return err == nil
	}

	wm := startFakeWatchman(t)
	clock := 0
	query := func(files []string, fresh bool) func([]any) map[string]any {
		return func(cmd []any) map[string]any {
			clock++
			return map[string]any{"version": "4.9.0", "clock": "c:1:2:3:" + string(rune('0'+clock)), "files": files, "is_fresh_instance": fresh}
		}
	}
	wm.says(query(nil, true))
	time.Sleep(150 * time.Millisecond)
	if code, rep := checkReads(t, v); code != 0 || !rep.Read.Vault {
		t.Fatalf("the first check: %d %+v", code, rep)
	}
	cmds := wm.commands()
	if len(cmds) != 1 || cmds[0][0] != "query" || cmds[0][1] != real {
		t.Fatalf("Watchman was asked %v, want one query of %s", cmds, real)
	}
	q, _ := json.Marshal(cmds[0][2])
	if want := `{"empty_on_fresh_instance":true,"expression":["not",["dirname",".git"]],"fields":["name"]}`; string(q) != want {
		t.Fatalf("the query with no token of its own: %s, want %s", q, want)
	}
	if hookRan() {
		t.Fatal("the hook ran, with Watchman answering over its socket")
	}

	// A committed line changed in place, its size kept: seen only when
	// Watchman names the file, as git trusts it.
	data, _ := os.ReadFile(filepath.Join(dir, rel))
	os.WriteFile(filepath.Join(dir, rel), []byte(strings.Replace(string(data), `"do/1"`, `"do/X"`, 1)), 0o644)
	wm.says(query([]string{}, false))
	if code, rep := checkReads(t, v); code != 0 || rep.Read.Runs != 0 || rep.Read.Vault {
		t.Fatalf("Watchman names nothing: the record answers, %d %+v", code, rep)
	}
	cmds = wm.commands()
	if len(cmds) != 1 || cmds[0][2].(map[string]any)["since"] != "c:1:2:3:1" {
		t.Fatalf("asked %v, want since the last answer's clock c:1:2:3:1", cmds)
	}
	found := func(rep checkRead) bool {
		for _, p := range rep.Problems {
			if p.Path == rel && p.Line == 2 {
				return true
			}
		}
		return false
	}
	for name, answer := range map[string]func([]any) map[string]any{
		"names the log":      query([]string{"playbook-runs", rel, path.Dir(rel)}, false),
		"knows nothing":      query([]string{}, true),
		"names it, fresh":    query([]string{rel}, true),
		"names the log only": query([]string{rel}, false),
	} {
		wm.says(answer)
		if code, rep := checkReads(t, v); code != 1 || !found(rep) {
			t.Fatalf("Watchman %s: %d %+v", name, code, rep)
		}
		if hookRan() {
			t.Fatalf("Watchman %s: the hook ran", name)
		}
	}

	// A root Watchman does not watch is watched, as the hook does, and
	// what changed before is unknown.
	wm.says(func(cmd []any) map[string]any {
		switch cmd[0] {
		case "query":
			return map[string]any{"error": "unable to resolve root " + real + ": directory " + real + " is not watched"}
		case "watch":
			return map[string]any{"watch": real, "watcher": "inotify"}
		}
		return map[string]any{"clock": "c:9:9:9:9"}
	})
	if code, rep := checkReads(t, v); code != 1 || !found(rep) {
		t.Fatalf("not watched: %d %+v", code, rep)
	}
	var names []string
	for _, c := range wm.commands() {
		names = append(names, c[0].(string))
	}
	if !slices.Equal(names, []string{"query", "watch", "clock"}) || hookRan() {
		t.Fatalf("not watched: asked %v", names)
	}

	// Watchman answers an error: the hook is run, as git runs it (here it
	// fails too, asking the same Watchman), and the check reads it all.
	wm.says(func([]any) map[string]any { return map[string]any{"error": "something broke"} })
	if code, rep := checkReads(t, v); code != 1 || !found(rep) {
		t.Fatalf("an error: %d %+v", code, rep)
	}
	if !hookRan() {
		t.Fatal("Watchman answered an error, and the hook did not run")
	}
}
