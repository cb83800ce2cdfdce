package vault

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"quire/internal/gitcmd"
)

// A hook's answers of protocol version 2, as git reads them: the token,
// then the paths each ended by a NUL (a folder may end in "/"), or "/"
// for a monitor that knows nothing; no token is no answer.
func TestMonitorAnswersReadAsGitReadsThem(t *testing.T) {
	for _, c := range []struct {
		out  string
		ok   bool
		want MonitorAnswer
	}{
		{"c:1:2:3:4\x00", true, MonitorAnswer{Token: "c:1:2:3:4"}},
		{"t\x00a/b\x00c/\x00", true, MonitorAnswer{Token: "t", Paths: []string{"a/b", "c/"}}},
		{"t\x00a/b", true, MonitorAnswer{Token: "t", Paths: []string{"a/b"}}},
		{"t\x00/", true, MonitorAnswer{Token: "t", All: true}},
		{"t\x00/\x00a", true, MonitorAnswer{Token: "t", All: true}},
		{"\x00a", false, MonitorAnswer{}},
		{"no token", false, MonitorAnswer{}},
		{"", false, MonitorAnswer{}},
	} {
		got, ok := parseMonitorAnswer([]byte(c.out))
		if ok != c.ok || got.Token != c.want.Token || got.All != c.want.All || !slices.Equal(got.Paths, c.want.Paths) {
			t.Errorf("%q: %+v %v, want %+v %v", c.out, got, ok, c.want, c.ok)
		}
	}
}

func FuzzParseMonitorAnswer(f *testing.F) {
	for _, s := range []string{"c:1:2:3:4\x00", "t\x00a/b\x00c/\x00", "t\x00/", "\x00", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		a, ok := parseMonitorAnswer(out)
		if !ok {
			return
		}
		if a.Token == "" || strings.Contains(a.Token, "\x00") {
			t.Fatalf("token %q", a.Token)
		}
		for _, p := range a.Paths {
			if p == "" || strings.Contains(p, "\x00") {
				t.Fatalf("path %q", p)
			}
		}
	})
}

// git's Watchman hook and quire's question over Watchman's socket
// (askWatchman) answer alike, against Watchman itself: after any edits by
// hand (files made, changed, removed and renamed, folders made and
// removed), asked since the same clock, the same paths; a root not
// watched, a clock that is not Watchman's or one of another instance, as
// knowing nothing. It needs Watchman installed (make test installs it as
// root; .ci/run does).
func TestWatchmanAnswersAsItsHook(t *testing.T) {
	if _, err := exec.LookPath("watchman"); err != nil {
		t.Fatal("watchman is needed for this test: apt-get install watchman (as root, make test installs it)")
	}
	dir := t.TempDir()
	v, err := Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	sample, err := gitcmd.WatchmanHook()
	if err != nil {
		t.Fatalf("git's Watchman hook: %v", err)
	}
	hook := ".git/hooks/query-watchman"
	os.MkdirAll(filepath.Join(dir, ".git", "hooks"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, hook), sample, 0o755); err != nil {
		t.Fatal(err)
	}
	if !v.isWatchmanHook(hook) {
		t.Fatal("git's Watchman hook is not taken for one")
	}
	real, _ := filepath.EvalSymlinks(dir)
	t.Cleanup(func() { exec.Command("watchman", "watch-del", real).Run() })
	ctx := context.Background()

	first, ok := v.askWatchman(ctx, "")
	if !ok || !first.All || !strings.HasPrefix(first.Token, "c:") {
		t.Fatalf("a root not watched: %+v %v", first, ok)
	}
	rng := rand.New(rand.NewPCG(7, 28))
	var files []string
	token := first.Token
	for round := 0; round < 10; round++ {
		for k := rng.IntN(6); k >= 0; k-- {
			switch op := rng.IntN(5); {
			case op == 0 || len(files) == 0:
				p := filepath.Join(fmt.Sprintf("d%d", rng.IntN(3)), fmt.Sprintf("e%d", rng.IntN(3)), fmt.Sprintf("f%d.md", rng.IntN(100)))
				os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
				os.WriteFile(filepath.Join(dir, p), []byte("new"), 0o644)
				files = append(files, p)
			case op == 1:
				p := files[rng.IntN(len(files))]
				os.WriteFile(filepath.Join(dir, p), []byte(fmt.Sprint("changed ", round)), 0o644)
			case op == 2:
				i := rng.IntN(len(files))
				os.Remove(filepath.Join(dir, files[i]))
				files = append(files[:i], files[i+1:]...)
			case op == 3:
				i := rng.IntN(len(files))
				to := files[i] + ".moved"
				os.Rename(filepath.Join(dir, files[i]), filepath.Join(dir, to))
				files[i] = to
			default:
				os.RemoveAll(filepath.Join(dir, fmt.Sprintf("d%d", rng.IntN(3)), fmt.Sprintf("e%d", rng.IntN(3))))
				files = slices.DeleteFunc(files, func(p string) bool { _, err := os.Lstat(filepath.Join(dir, p)); return err != nil })
			}
		}
		h, hok := v.runMonitorHook(ctx, hook, token)
		n, nok := v.askWatchman(ctx, token)
		if !hok || !nok {
			t.Fatalf("round %d: the hook %v, the socket %v", round, hok, nok)
		}
		slices.Sort(h.Paths)
		slices.Sort(n.Paths)
		if h.All || n.All || !slices.Equal(h.Paths, n.Paths) {
			t.Fatalf("round %d, since %s: the hook said %+v, the socket %+v", round, token, h, n)
		}
		token = n.Token
	}
	// Clocks Watchman does not know: it knows nothing of what changed.
	for _, clock := range []string{"", "1765000000", "c:1:2:3:4"} {
		if n, ok := v.askWatchman(ctx, clock); !ok || !n.All || len(n.Paths) != 0 {
			t.Fatalf("since %q: %+v %v", clock, n, ok)
		}
	}
}
