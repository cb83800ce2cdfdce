package vault

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func TestInitCommitsCleanly(t *testing.T) {
	dir := t.TempDir()
	v, err := Init(dir, "acme", time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if s := gitOut(t, dir, "status", "--porcelain"); s != "" {
		t.Fatalf("git status not clean:\n%s", s)
	}
	gitOut(t, dir, "fsck", "--strict")
	log := gitOut(t, dir, "log", "--format=%an|%s")
	if !strings.Contains(log, "quire|Make the vault of acme") {
		t.Fatalf("log: %s", log)
	}
	for _, f := range []string{"quire.yaml", "vault/00-index.jsonl", "playbook-runs/AGENTS.md", ".gitignore"} {
		if !strings.Contains(gitOut(t, dir, "ls-files"), f) {
			t.Errorf("%s not committed", f)
		}
	}
	if b := gitOut(t, dir, "rev-parse", "--abbrev-ref", "HEAD"); b != "main\n" {
		t.Fatalf("HEAD is on %q, not main", b)
	}
	if bare := gitOut(t, dir, "config", "core.bare"); bare != "false\n" {
		t.Fatalf("core.bare %q", bare)
	}
	if _, err := Init(dir, "acme", time.Now()); err == nil {
		t.Fatal("second init accepted")
	}
}

// quire's binary links none of go-git's network transports (ssh, http and
// their crypto): the vault makes its repository at the storage level, and
// quire never fetches or pushes.
func TestNoNetworkTransportLinked(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "quire/cmd/quire").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "go-git/v5/plumbing/transport") || strings.HasPrefix(dep, "golang.org/x/crypto/ssh") || dep == "github.com/go-git/go-git/v5" {
			t.Errorf("quire links %s", dep)
		}
	}
}

func TestCommitOnlyChanges(t *testing.T) {
	dir := t.TempDir()
	v, err := Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	write := func(rel, s string) {
		abs := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(abs), 0o755)
		if err := os.WriteFile(abs, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("playbook-runs/a/run.jsonl", "{}\n")
	write("playbook-runs/a/artifacts/.gitkeep", "")
	write("playbook-runs/b/run.jsonl", "{}\n")
	commit := func(paths ...string) string {
		var id string
		err := v.Locked(func() error {
			var err error
			id, err = v.Commit(paths, Signature{Name: "agent-7", When: time.Now()}, "finance: run a: step_completed")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	commit("playbook-runs/a", "playbook-runs/b")
	write("playbook-runs/a/run.jsonl", "{}\n{}\n")
	id := commit("playbook-runs/a")
	if id == "" {
		t.Fatal("no commit for a change")
	}
	if again := commit("playbook-runs/a"); again != "" {
		t.Fatal("commit without a change")
	}
	os.Remove(filepath.Join(dir, "playbook-runs/b/run.jsonl"))
	commit("playbook-runs/b")
	if s := gitOut(t, dir, "status", "--porcelain"); s != "" {
		t.Fatalf("git status not clean:\n%s", s)
	}
	gitOut(t, dir, "fsck", "--strict")
	if got := gitOut(t, dir, "log", "-1", "--format=%an"); strings.TrimSpace(got) != "agent-7" {
		t.Fatalf("author %q", got)
	}
	if err := v.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	gitOut(t, dir, "fsck", "--strict")
	write("playbook-runs/a/run.jsonl", "{}\n{}\n{}\n")
	commit("playbook-runs/a")
	gitOut(t, dir, "fsck", "--strict")
	if s := gitOut(t, dir, "status", "--porcelain"); s != "" {
		t.Fatalf("git status not clean after compaction:\n%s", s)
	}
}

func TestJoinRefusesEscapes(t *testing.T) {
	dir := t.TempDir()
	v, err := Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	os.Symlink("/etc", filepath.Join(dir, "link"))
	for _, bad := range []string{"../x", "/etc/passwd", "a/../../x", "link/passwd", "", "a\\b"} {
		if _, err := v.Join(bad); err == nil {
			t.Errorf("Join(%q) accepted", bad)
		}
	}
	if _, err := v.Join("playbook-runs/x/artifacts/a.txt"); err != nil {
		t.Error(err)
	}
}

func TestAppendLineRepairsTornTail(t *testing.T) {
	p := filepath.Join(t.TempDir(), "run.jsonl")
	os.WriteFile(p, []byte("{\"a\":1}\n{\"b\":"), 0o644)
	if _, err := AppendLine(p, []byte("{\"c\":3}\n")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if string(got) != "{\"a\":1}\n{\"c\":3}\n" {
		t.Fatalf("got %q", got)
	}
}

// AppendLineAt tells before where the line will start once the tail is
// mended (a torn line cut, a whole one given its newline), and writes
// nothing when before refuses; it appends to a file that exists, never
// makes one.
func TestAppendLineAtTellsWhereFirst(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ before, want string }{
		{"{\"a\":1}\n{\"b\":", "{\"a\":1}\n"},              // torn: cut
		{"{\"a\":1}\n{\"b\":2}", "{\"a\":1}\n{\"b\":2}\n"}, // whole: its newline
		{"{\"a\":1}\n", "{\"a\":1}\n"},
		{"", ""},
	} {
		p := filepath.Join(dir, "run.jsonl")
		os.WriteFile(p, []byte(c.before), 0o644)
		var told int64 = -1
		off, err := AppendLineAt(p, []byte("{\"c\":3}\n"), func(at int64) error { told = at; return nil })
		if err != nil || told != int64(len(c.want)) || off != told {
			t.Fatalf("%q: told %d, answered %d (%v), want %d", c.before, told, off, err, len(c.want))
		}
		if got, _ := os.ReadFile(p); string(got) != c.want+"{\"c\":3}\n" {
			t.Fatalf("%q: %q", c.before, got)
		}
		refused := errors.New("no seq")
		if _, err := AppendLineAt(p, []byte("{\"d\":4}\n"), func(int64) error { return refused }); err != refused {
			t.Fatalf("a refusal of before: %v", err)
		}
		if got, _ := os.ReadFile(p); string(got) != c.want+"{\"c\":3}\n" {
			t.Fatalf("%q: after a refusal, %q", c.before, got)
		}
	}
	if _, err := AppendLineAt(filepath.Join(dir, "none.jsonl"), []byte("{}\n"), nil); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a file that is not there: %v", err)
	}
}
