package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A symbolic link in one run's folder (git carries links in a pull) refuses
// that run's writes, naming the link, and no other's: another run's
// boundary commits, a comment is made, and quire check lists the link.
func TestALinkInOneRunFolderTouchesThatRunAlone(t *testing.T) {
	t.Parallel()
	dir, v, a := newCloseRun(t)
	_, out, _ := quire(t, "", v, "run", "start", "--playbook", "finance", "--name", "close", "--member-of", projectOf(t, v),
		"--executor", "agent-7", "--authorized-by", "ana", "--json")
	var b struct {
		RunID string `json:"run_id"`
	}
	json.Unmarshal([]byte(out), &b)
	m, _ := filepath.Glob(filepath.Join(dir, "playbook-runs", "close-"+a+"-*"))
	link := filepath.Join(m[0], "artifacts", "notes.md")
	if err := os.Symlink("/etc/hostname", link); err != nil {
		t.Fatal(err)
	}
	linkRel, _ := filepath.Rel(dir, link)
	event := func(run string) (int, string, string) {
		return quire(t, "", v, "call", "record_event", "--args",
			`{"playbook":"finance","run_id":"`+run+`","event":"step_completed","step":"do/1/a","actor":"agent-7"}`)
	}
	if code, _, errs := event(a); code != 1 || !strings.Contains(errs, filepath.ToSlash(linkRel)+" is a symbolic link") {
		t.Fatalf("a write to the run with the link: exit %d %s", code, errs)
	}
	code, out, errs := event(b.RunID)
	var ev struct{ Committed *bool }
	if code != 0 || json.Unmarshal([]byte(out), &ev) != nil || ev.Committed == nil || !*ev.Committed {
		t.Fatalf("another run's boundary: %d %s %s", code, out, errs)
	}
	if code, out, errs := quire(t, "", v, "call", "make_comment", "--args", `{"playbook":"finance","address":"playbooks/finance","text":"hi","author":"ana"}`); code != 0 || !strings.Contains(out, `"committed": true`) {
		t.Fatalf("a comment: %d %s %s", code, out, errs)
	}
	if _, out, _ := quire(t, "", v, "check", "--json"); !strings.Contains(out, filepath.ToSlash(linkRel)) {
		t.Errorf("quire check does not list the link: %s", out)
	}
}

// projectOf answers the uid of the vault's first project.
func projectOf(t *testing.T, v string) string {
	t.Helper()
	_, out, _ := quire(t, "", v, "call", "list_projects")
	var ps []struct{ UID string }
	if json.Unmarshal([]byte(out), &ps) != nil || len(ps) == 0 {
		t.Fatalf("list_projects: %s", out)
	}
	return ps[0].UID
}
