package index

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// git's untracked cache, as git status writes it (untracked files, an
// untracked folder, an ignored one, a .gitignore), reads and writes back
// byte for byte; a folder forgotten is read again by git, which still
// lists what is untracked.
func TestUntrackedCacheRoundTripsAsGitWrote(t *testing.T) {
	t.Parallel() // each form waits out a second, so that git trusts its stat
	for _, form := range forms {
		t.Run(form.name, func(t *testing.T) {
			t.Parallel()
			dir := gitIndex(t, 3, form.set)
			git(t, dir, "config", "core.untrackedCache", "true")
			run := filepath.Join(dir, "playbook-runs", "close-019a4012-0002-2026-11-01")
			os.WriteFile(filepath.Join(run, "note.txt"), []byte("n\n"), 0o644)
			os.MkdirAll(filepath.Join(dir, "loose", "deep"), 0o755)
			os.WriteFile(filepath.Join(dir, "loose", "deep", "a.txt"), []byte("a\n"), 0o644)
			os.MkdirAll(filepath.Join(dir, "built"), 0o755)
			os.WriteFile(filepath.Join(dir, "built", "out.o"), []byte("o\n"), 0o644)
			os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("built/\n"), 0o644)
			time.Sleep(1100 * time.Millisecond) // no folder as new as the index
			want := git(t, dir, "status", "--porcelain")
			d, _ := read(t, dir)
			if d.Untracked == nil {
				t.Fatal("git status wrote no untracked cache")
			}
			u, err := DecodeUntracked(d.Untracked)
			if err != nil {
				t.Fatal(err)
			}
			if got := u.Append(nil); !bytes.Equal(got, d.Untracked) {
				t.Fatalf("the untracked cache written back differs from git's (%d bytes, git's %d)", len(got), len(d.Untracked))
			}
			// Forget the run's folder and the root, and write the index
			// again: git reads those two again and lists the same.
			u.Invalidate("playbook-runs/close-019a4012-0002-2026-11-01")
			u.Invalidate("")
			u.Invalidate("no/such/folder")
			ext := AppendExtension(nil, "UNTR", u.Append(nil))
			var out []byte
			if d.Shared != nil {
				out = EncodeSplitExt(nil, Diff(d.Shared, d.Entries), d.SharedID, d.Version == 4, ext)
			} else {
				out = EncodeExt(nil, d.Entries, d.Version == 4, ext)
			}
			if err := os.WriteFile(filepath.Join(dir, ".git", "index"), out, 0o644); err != nil {
				t.Fatal(err)
			}
			if got := git(t, dir, "status", "--porcelain"); got != want {
				t.Fatalf("git status with folders forgotten:\n%s\nwas:\n%s", got, want)
			}
			if !strings.Contains(want, "?? playbook-runs/close-019a4012-0002-2026-11-01/note.txt") || !strings.Contains(want, "?? loose/") {
				t.Fatalf("git status:\n%s", want)
			}
		})
	}
}

// A damaged untracked cache is an error, never a panic: cut anywhere, or
// any byte changed.
func TestDecodeUntrackedRefusesDamage(t *testing.T) {
	dir := gitIndex(t, 3, forms[0].set)
	git(t, dir, "config", "core.untrackedCache", "true")
	time.Sleep(1100 * time.Millisecond)
	git(t, dir, "status", "--porcelain")
	d, _ := read(t, dir)
	for n := 0; n < len(d.Untracked)-1; n++ {
		if _, err := DecodeUntracked(d.Untracked[:n]); err == nil && n > 0 {
			// Some prefixes end where a cache may end; each must end
			// in a NUL.
			if d.Untracked[n-1] != 0 {
				t.Fatalf("a cache cut at %d bytes read without error", n)
			}
		}
	}
	for i := range d.Untracked {
		for _, b := range []byte{0, 1, 0x7f, 0x80, 0xff} {
			p := bytes.Clone(d.Untracked)
			p[i] = b
			if u, err := DecodeUntracked(p); err == nil {
				u.Invalidate("playbook-runs/close-019a4012-0002-2026-11-01")
				u.Append(nil)
			}
		}
	}
}

// The cache-tree AppendCacheTree writes is read by git as valid: git
// write-tree answers its root without making a tree.
func TestGitTrustsTheCacheTreeWritten(t *testing.T) {
	dir := gitIndex(t, 3, forms[2].set)
	git(t, dir, "rm", "-q", "--cached", "new.md")
	git(t, dir, "commit", "-q", "-m", "a person's commit")
	d, _ := read(t, dir)
	root := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD^{tree}"))
	var subs []TreeNode
	for _, l := range strings.Split(strings.TrimSpace(git(t, dir, "ls-tree", "HEAD")), "\n") {
		f := strings.Fields(l)
		if f[1] != "tree" {
			continue
		}
		n := TreeNode{Name: f[3]}
		copy(n.Tree[:], mustHex(t, f[2]))
		for _, e := range d.Entries {
			if strings.HasPrefix(e.Name, n.Name+"/") {
				n.Count++
			}
		}
		subs = append(subs, n)
	}
	os.Remove(filepath.Join(dir, "new.md"))
	os.Remove(filepath.Join(dir, "playbook-runs", "close-019a4012-0001-2026-11-01", "thread.md"))
	var rh [20]byte
	copy(rh[:], mustHex(t, root))
	ext := AppendExtension(nil, "TREE", AppendCacheTree(nil, rh, len(d.Entries), subs))
	os.WriteFile(filepath.Join(dir, ".git", "index"), EncodeExt(nil, d.Entries, true, ext), 0o644)
	if d2, _ := read(t, dir); d2.CacheTree.String() != root {
		t.Fatalf("cache-tree root read back %s, written %s", d2.CacheTree, root)
	}
	if got := strings.TrimSpace(git(t, dir, "write-tree")); got != root {
		t.Fatalf("git write-tree %s, HEAD's tree %s", got, root)
	}
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("git status:\n%s", st)
	}
	os.WriteFile(filepath.Join(dir, "x", "run.sh"), []byte("changed"), 0o755)
	git(t, dir, "add", "x/run.sh")
	if st := git(t, dir, "status", "--porcelain"); st != "M  x/run.sh\n" {
		t.Fatalf("git status of a change staged over quire's cache-tree:\n%s", st)
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	var b []byte
	for i := 0; i+1 < len(s); i += 2 {
		var v byte
		for _, c := range s[i : i+2] {
			v <<= 4
			switch {
			case c >= '0' && c <= '9':
				v |= byte(c - '0')
			case c >= 'a' && c <= 'f':
				v |= byte(c-'a') + 10
			}
		}
		b = append(b, v)
	}
	return b
}

// git's file system monitor cache, as git status writes it with a hook
// (here one that says nothing changed), reads with each entry's bit and
// writes back byte for byte.
func TestFSMonitorRoundTripsAsGitWrote(t *testing.T) {
	t.Parallel() // each form waits out a second, so that git trusts its stat
	for _, form := range forms {
		t.Run(form.name, func(t *testing.T) {
			t.Parallel()
			dir := gitIndex(t, 3, form.set)
			hook := filepath.Join(dir, ".git", "fsmonitor-test")
			os.WriteFile(hook, []byte("#!/bin/sh\nprintf 'token-1\\0'\n"), 0o755)
			git(t, dir, "config", "core.fsmonitor", hook)
			git(t, dir, "config", "core.fsmonitorHookVersion", "2")
			time.Sleep(1100 * time.Millisecond)
			git(t, dir, "status", "--porcelain")
			git(t, dir, "status", "--porcelain")
			data, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
			if err != nil {
				t.Fatal(err)
			}
			d, _ := read(t, dir)
			if d.FSMonitor == nil {
				t.Fatal("no monitor's extension read")
			}
			valid := 0
			for _, e := range d.Entries {
				if e.FSMonitorValid {
					valid++
				}
			}
			if valid == 0 {
				t.Fatal("no entry valid for the monitor")
			}
			body := AppendFSMonitor(nil, d.FSMonitor, d.Entries)
			if !bytes.Contains(data, AppendExtension(nil, "FSMN", body)) {
				t.Fatalf("the monitor's extension written back is not git's: %q", body)
			}
		})
	}
}
