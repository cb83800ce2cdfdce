package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"quire/internal/gittest"
)

// Two homes of different playbooks record runs at once against one
// remote, each serving with --push: their pushes are refused in turn, and
// each meets the other's commits. Once they settle, a clone of the remote
// holds every run, event and index line exactly once, quire check
// --history and git fsck --strict are clean, and a person who pulls both
// homes into a clone of their own has the same vault: the same files, the
// index's lines in another order at most, and the same answers.
// make test records 20 runs each; QUIRE_TEST_LONG the 500.
func TestTwoHomesRecordAtOnceAgainstOneRemote(t *testing.T) {
	t.Parallel()
	n := 20
	if os.Getenv("QUIRE_TEST_LONG") != "" {
		n = 500
	}
	dirA, vA, project := newCLIVault(t)
	for _, pb := range []string{"finance", "ops"} {
		quire(t, "", vA, "call", "create_playbook", "--args", fmt.Sprintf(`{"playbook":%q,"name":%q}`, pb, pb))
		if code, out, errs := quire(t, "", vA, "call", "create_definition", "--args", fmt.Sprintf(`{"playbook":%q,"type":"workflow","name":"close","source":"document:\n  name: close\n"}`, pb)); code != 0 {
			t.Fatalf("create_definition: %s %s", out, errs)
		}
	}
	bare := homeWithRemote(t, dirA, "alpha", "finance")
	dirB := filepath.Join(t.TempDir(), "b")
	if code, out, errs := quire(t, "", "clone", "file://"+bare, dirB); code != 0 {
		t.Fatalf("quire clone: %s %s", out, errs)
	}
	vB := "--vault=" + dirB
	quire(t, "", vB, "node", "set", "beta")
	if code, out, errs := quire(t, "", vB, "playbook", "move", "ops", "--home", "beta"); code != 0 {
		t.Fatalf("move ops: %s %s", out, errs)
	}
	gitIn(t, dirB, "push", "-q", "origin", "HEAD:refs/heads/main")

	homes := []struct{ dir, playbook, base string }{{dirA, "finance", ""}, {dirB, "ops", ""}}
	for i := range homes {
		homes[i].base = startServe(t, homes[i].dir, "--push", "origin")
	}
	post := func(url, body string) ([]byte, error) {
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			return nil, fmt.Errorf("POST %s: %s %s", url, resp.Status, b)
		}
		return b, nil
	}
	done := make(chan error, len(homes))
	for _, h := range homes {
		go func() {
			for i := range n {
				b, err := post(h.base+"/v1/orgs/acme/playbooks/"+h.playbook+"/definitions/workflow/close/runs",
					fmt.Sprintf(`{"member_of":[%q],"executor":"agent-7","authorized_by":"ana"}`, project))
				var r struct {
					RunID string `json:"run_id"`
				}
				if err == nil {
					err = json.Unmarshal(b, &r)
				}
				if err == nil {
					_, err = post(h.base+"/v1/orgs/acme/playbooks/"+h.playbook+"/runs/"+r.RunID+"/events",
						fmt.Sprintf(`{"event":"step_completed","step":"do/%d/x","actor":"agent-7"}`, i+1))
				}
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range homes {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 120*time.Second, "both homes' commits in the remote", func() bool {
		for _, h := range homes {
			head := gitIn(t, h.dir, "rev-parse", "HEAD")
			if exec.Command("git", "--git-dir", bare, "merge-base", "--is-ancestor", head, "refs/heads/main").Run() != nil {
				return false
			}
		}
		return true
	})
	if out, err := exec.Command("git", "--git-dir", bare, "fsck", "--strict").CombinedOutput(); err != nil {
		t.Fatalf("git fsck --strict of the remote: %v %s", err, out)
	}
	if merges, _ := exec.Command("git", "--git-dir", bare, "log", "--merges", "--format=%s", "refs/heads/main").Output(); !strings.Contains(string(merges), "Merge what origin holds") {
		t.Fatalf("no home met the other: %s", merges)
	}

	// A clone of the remote, and a person's clone that pulls both homes.
	dirC := filepath.Join(t.TempDir(), "c")
	if out, err := exec.Command("git", "clone", "-q", "-b", "main", bare, dirC).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v %s", err, out)
	}
	dirD := filepath.Join(t.TempDir(), "d")
	if out, err := exec.Command("git", "clone", "-q", "-b", "main", dirA, dirD).CombinedOutput(); err != nil {
		t.Fatalf("git clone of alpha: %v %s", err, out)
	}
	gitIn(t, dirD, "config", "user.name", "A person")
	gitIn(t, dirD, "config", "user.email", "person@example.com")
	gitIn(t, dirD, "pull", "-q", "--no-rebase", "--no-edit", dirB, "main")
	answers := map[string]string{}
	for _, dir := range []string{dirC, dirD} {
		v := "--vault=" + dir
		if code, out, _ := quire(t, "", v, "check", "--history"); code != 0 {
			t.Fatalf("check --history on %s: %s", filepath.Base(dir), out)
		}
		if out, err := gittest.Fsck(dir, "--strict"); err != nil {
			t.Fatalf("git fsck --strict on %s: %v %s", filepath.Base(dir), err, out)
		}
		index, err := os.ReadFile(filepath.Join(dir, "vault", "00-index.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(index), "\n"), "\n")
		if sorted := slices.Compact(slices.Sorted(slices.Values(lines))); len(sorted) != len(lines) {
			t.Fatalf("%s: the index holds a line twice", filepath.Base(dir))
		}
		var all strings.Builder
		for _, h := range homes {
			code, out, errs := quire(t, "", v, "call", "list_runs", "--args", fmt.Sprintf(`{"playbook":%q,"limit":1000}`, h.playbook))
			var page struct {
				Runs []struct {
					RunID string `json:"run_id"`
				} `json:"runs"`
			}
			if code != 0 || json.Unmarshal([]byte(out), &page) != nil || len(page.Runs) != n {
				t.Fatalf("%s: list_runs %s: %d runs (want %d) %s", filepath.Base(dir), h.playbook, len(page.Runs), n, errs)
			}
			all.WriteString(out)
			for _, r := range page.Runs {
				folder, _ := filepath.Glob(filepath.Join(dir, "playbook-runs", "*-"+r.RunID+"-*"))
				if len(folder) != 1 {
					t.Fatalf("%s: run %s has %d folders", filepath.Base(dir), r.RunID, len(folder))
				}
				log, err := os.ReadFile(filepath.Join(folder[0], "run.jsonl"))
				if err != nil || strings.Count(string(log), "\n") != 2 || strings.Count(string(index), `"uid":"`+r.RunID+`"`) != 1 {
					t.Fatalf("%s: run %s: %d events, %d index lines: %v", filepath.Base(dir), r.RunID, strings.Count(string(log), "\n"), strings.Count(string(index), `"uid":"`+r.RunID+`"`), err)
				}
			}
			code, out, errs = quire(t, "", v, "call", "list_playbook_events", "--args", fmt.Sprintf(`{"playbook":%q,"limit":1000}`, h.playbook))
			if code != 0 {
				t.Fatalf("%s: list_playbook_events: %s", filepath.Base(dir), errs)
			}
			all.WriteString(out)
		}
		answers[dir] = all.String()
	}
	if answers[dirC] != answers[dirD] {
		t.Fatalf("the remote's clone and the person's pull of both homes answer otherwise")
	}
	// The same files: the index's lines in another order at most.
	files := func(dir string) map[string]string {
		out := gitIn(t, dir, "ls-tree", "-r", "HEAD")
		m := map[string]string{}
		for _, l := range strings.Split(out, "\n") {
			if meta, path, ok := strings.Cut(l, "\t"); ok {
				m[path] = meta
			}
		}
		return m
	}
	fc, fd := files(dirC), files(dirD)
	if len(fc) != len(fd) {
		t.Fatalf("the remote's clone holds %d files, the person's %d", len(fc), len(fd))
	}
	for path, meta := range fc {
		if fd[path] == meta {
			continue
		}
		c, _ := os.ReadFile(filepath.Join(dirC, path))
		d, _ := os.ReadFile(filepath.Join(dirD, path))
		lc, ld := strings.Split(string(c), "\n"), strings.Split(string(d), "\n")
		slices.Sort(lc)
		slices.Sort(ld)
		if !slices.Equal(lc, ld) {
			t.Fatalf("%s differs between the remote's clone and the person's pull", path)
		}
	}
}

// homeWithRemote makes the vault at dir the node of that name and the
// home of playbook, with a new bare repository as its remote origin that
// holds all of it (the move to the home among it), and answers the bare
// repository's folder.
func homeWithRemote(t *testing.T, dir, node, playbook string) string {
	t.Helper()
	v := "--vault=" + dir
	bare, url := bareRemote(t)
	quire(t, "", v, "remote", "add", "origin", url)
	quire(t, "", v, "node", "set", node)
	gitIn(t, dir, "push", "-q", "origin", "HEAD:refs/heads/main")
	if code, out, errs := quire(t, "", v, "playbook", "move", playbook, "--home", node); code != 0 {
		t.Fatalf("move %s to %s: %s %s", playbook, node, out, errs)
	}
	gitIn(t, dir, "push", "-q", "origin", "HEAD:refs/heads/main")
	return bare
}
