package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The run page's reads through quire call: a run's files, and its commits,
// which the next call finds after a person's git commit too.
func TestCLIRunFilesAndCommits(t *testing.T) {
	dir, v, project := newCLIVault(t)
	quire(t, "", v, "call", "create_playbook", "--args", `{"playbook":"finance","name":"Finance"}`)
	quire(t, `{"playbook":"finance","type":"workflow","name":"close","source":"document:\n  name: close\n"}`, v, "call", "create_definition", "--args", "-")
	code, out, errs := quire(t, "", v, "run", "start", "--playbook", "finance", "--name", "close", "--member-of", project,
		"--executor", "agent-7", "--authorized-by", "ana", "--json")
	var r struct {
		RunID string `json:"run_id"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("run start: %d %s %s", code, out, errs)
	}
	run := `{"playbook":"finance","run_id":"` + r.RunID + `"}`
	code, out, errs = quire(t, "", v, "call", "get_run_files", "--args", run)
	var files struct {
		Context string
		Thread  string
		State   struct {
			RunID string `json:"run_id"`
		}
		Artifacts []struct{ Name string }
	}
	if code != 0 || json.Unmarshal([]byte(out), &files) != nil || files.State.RunID != r.RunID || !strings.Contains(files.Context, "authorized by ana") || files.Artifacts == nil {
		t.Fatalf("get_run_files: %d %s %s", code, out, errs)
	}
	subjects := func() []string {
		t.Helper()
		code, out, errs := quire(t, "", v, "call", "list_run_commits", "--args", run)
		var page struct {
			Commits []struct{ Author, Subject string }
		}
		if code != 0 || json.Unmarshal([]byte(out), &page) != nil {
			t.Fatalf("list_run_commits: %d %s %s", code, out, errs)
		}
		var s []string
		for _, c := range page.Commits {
			s = append(s, c.Author+" | "+c.Subject)
		}
		return s
	}
	if got := strings.Join(subjects(), "; "); got != "ana | close "+r.RunID[len(r.RunID)-8:]+": run created" {
		t.Fatalf("commits: %s", got)
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=rui", "-c", "user.email=rui@example.com"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	os.WriteFile(filepath.Join(dir, "notes.md"), []byte("checked\n"), 0o644)
	git("add", "notes.md")
	git("commit", "-q", "-m", "Checked the close\n\nRun-Id: "+r.RunID)
	if got := strings.Join(subjects(), "; "); got != "rui | Checked the close; ana | close "+r.RunID[len(r.RunID)-8:]+": run created" {
		t.Fatalf("commits after git commit: %s", got)
	}
}

// An artifact through the CLI holds at most what a request over HTTP can
// (1 MiB), said in the refusal, from a file or from standard input, and
// nothing is written; one of 1 MiB is taken.
func TestCLIArtifactBound(t *testing.T) {
	dir, v, project := newCLIVault(t)
	quire(t, "", v, "call", "create_playbook", "--args", `{"playbook":"finance","name":"Finance"}`)
	quire(t, `{"playbook":"finance","type":"workflow","name":"close","source":"document:\n  name: close\n"}`, v, "call", "create_definition", "--args", "-")
	_, out, _ := quire(t, "", v, "run", "start", "--playbook", "finance", "--name", "close", "--member-of", project,
		"--executor", "agent-7", "--authorized-by", "ana", "--json")
	var r struct {
		RunID string `json:"run_id"`
		Path  string `json:"path"`
	}
	json.Unmarshal([]byte(out), &r)
	big := filepath.Join(t.TempDir(), "big.bin")
	os.WriteFile(big, make([]byte, 1<<20+1), 0o644)
	put := func(stdin, file string) (int, string) {
		code, _, errs := quire(t, stdin, v, "run", "artifact", "--playbook", "finance", "--run", r.RunID, "--actor", "agent-7", "big.bin", file)
		return code, errs
	}
	for _, c := range []struct{ stdin, file string }{{"", big}, {string(make([]byte, 1<<20+1)), "-"}} {
		code, errs := put(c.stdin, c.file)
		if code != 1 || !strings.Contains(errs, "is 1048577 bytes; an artifact holds at most 1 MiB") {
			t.Fatalf("a 1 MiB + 1 artifact from %q: exit %d, %s", c.file, code, errs)
		}
		if _, err := os.Stat(filepath.Join(dir, r.Path, "artifacts", "big.bin")); err == nil {
			t.Fatal("the refused artifact was written")
		}
	}
	os.WriteFile(big, make([]byte, 1<<20), 0o644)
	if code, errs := put("", big); code != 0 {
		t.Fatalf("a 1 MiB artifact: exit %d, %s", code, errs)
	}
}
