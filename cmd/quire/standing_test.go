package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A page's standing names the commit its views reflect once they are
// live; after a person's git pull brings another clone's run, the views
// are live again only with the pulled run folded, and name the new HEAD.
func TestTheStandingNamesTheCommitItReflects(t *testing.T) {
	t.Parallel()
	dir, v, project := newCLIVault(t)
	quire(t, "", v, "call", "create_playbook", "--args", `{"playbook":"social","name":"Social"}`)
	doc, err := os.ReadFile(filepath.Join("..", "..", "testdata", "vault", "morning-social-content.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"playbook": "social", "type": "workflow", "name": "morning-social-content", "source": string(doc)})
	if code, out, errs := quire(t, string(args), v, "call", "create_definition", "--args", "-"); code != 0 {
		t.Fatalf("create_definition: %s %s", out, errs)
	}
	runOn := func(vault, date string) {
		t.Helper()
		code, out, _ := quire(t, "", vault, "run", "start", "--playbook", "social", "--name", "morning-social-content", "--member-of", project,
			"--executor", "agent-7", "--authorized-by", "ana", "--json")
		var r struct {
			RunID string `json:"run_id"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
			t.Fatalf("run start: %d %s", code, out)
		}
		output := `{"date":"` + date + `","posts":[{"channel":"X","title":"One","url":"https://example.com/1"}]}`
		if code, out, errs := quire(t, "", vault, "run", "end", "succeeded", "--playbook", "social", "--run", r.RunID, "--output", output, "--actor", "agent-7"); code != 0 {
			t.Fatalf("run end: %s %s", out, errs)
		}
	}
	standing := func() (state, commit string, folded float64) {
		t.Helper()
		code, out, errs := quire(t, "", v, "page", "status", "--playbook", "social", "--name", "morning-social-content", "--json")
		var d struct {
			Page struct {
				Standing struct {
					State  string
					Commit string
					Folded float64
				}
			}
		}
		if code != 0 || json.Unmarshal([]byte(out), &d) != nil {
			t.Fatalf("page status: %s %s", out, errs)
		}
		s := d.Page.Standing
		return s.State, s.Commit, s.Folded
	}
	runOn(v, "2026-11-01")
	if state, commit, folded := standing(); state != "live" || commit != gitIn(t, dir, "rev-parse", "HEAD") || folded != 1 {
		t.Fatalf("standing: %s %s %v", state, commit, folded)
	}
	clone := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "-q", dir, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v %s", err, out)
	}
	runOn("--vault="+clone, "2026-11-02")
	gitIn(t, dir, "pull", "-q", "--no-rebase", clone, "main")
	if state, commit, folded := standing(); state != "live" || commit != gitIn(t, dir, "rev-parse", "HEAD") || folded != 2 {
		t.Fatalf("standing after the pull: %s %s %v (HEAD %s)", state, commit, folded, gitIn(t, dir, "rev-parse", "HEAD"))
	}
}
