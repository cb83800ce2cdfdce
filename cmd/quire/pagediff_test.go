package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// demoVault makes a vault as testdata/demo.sh does, in small: the playbook
// operations with the demo's workflows named, and days of their runs as the
// demo records them (morning-social-content's and fulfill-order's, where
// named). It answers the vault's folder, its --vault flag and HEAD after
// each day.
func demoVault(t *testing.T, days int, workflows ...string) (dir, v string, heads []string) {
	t.Helper()
	dir, v, project := newCLIVault(t)
	quire(t, "", v, "call", "create_playbook", "--args", `{"playbook":"operations","name":"Operations"}`)
	saved := map[string]bool{}
	for _, w := range workflows {
		saved[w] = true
		src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "vault", w+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		args, _ := json.Marshal(map[string]string{"playbook": "operations", "type": "workflow", "name": w, "source": string(src), "actor": "ana"})
		if code, out, errs := quire(t, string(args), v, "call", "create_definition", "--args", "-"); code != 0 {
			t.Fatalf("create_definition %s: %d %s %s", w, code, out, errs)
		}
	}
	run := func(name, day, at, output string) {
		t.Helper()
		if !saved[name] {
			return
		}
		code, out, errs := quire(t, "", v, "run", "start", "--playbook", "operations", "--name", name, "--member-of", project,
			"--executor", "agent-7", "--authorized-by", "ana", "--time", day+"T07:00:00Z", "--json")
		var r struct {
			RunID string `json:"run_id"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
			t.Fatalf("run start: %d %s %s", code, out, errs)
		}
		if code, out, errs := quire(t, "", v, "run", "end", "succeeded", "--playbook", "operations", "--run", r.RunID, "--actor", "agent-7",
			"--time", day+at, "--output", output); code != 0 {
			t.Fatalf("run end: %d %s %s", code, out, errs)
		}
	}
	for d := 9; d < 9+days; d++ {
		day := fmt.Sprintf("2026-11-%02d", d)
		run("morning-social-content", day, "T09:00:00Z", fmt.Sprintf(`{"date":%q,"posts":[{"channel":"X","title":"Post of %s","url":"https://example.com/drafts/%d"}]}`, day, day, d))
		run("fulfill-order", day, "T08:00:00Z", fmt.Sprintf(`{"order":"A-10%d","channel":"Web","total":%d.25}`, d, d*7))
		out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
		if err != nil {
			t.Fatal(err)
		}
		heads = append(heads, strings.TrimSpace(string(out)))
	}
	return dir, v, heads
}

// quire page diff between two commits of the demo vault names the views
// that changed, with their old and new values, and the Markdown's lines;
// against the vault as it stands it says what changed since; a commit that
// is none is refused naming it, by page diff and by page render --at.
func TestCLIPageDiffNamesTheChangedViews(t *testing.T) {
	t.Parallel()
	_, v, heads := demoVault(t, 2, "fulfill-order")
	page := []string{v, "page", "diff", "--playbook", "operations", "--name", "fulfill-order"}
	code, out, errs := quire(t, "", append(page, heads[0], heads[1])...)
	if code != 0 {
		t.Fatalf("page diff: %d %s %s", code, out, errs)
	}
	for _, want := range []string{"--- " + heads[0] + "\n+++ " + heads[1] + "\n", "view revenue:\n", "view channels:\n", `→ `, "\n-", "\n+"} {
		if !strings.Contains(out, want) {
			t.Fatalf("page diff lacks %q:\n%s", want, out)
		}
	}
	code, out, errs = quire(t, "", append(page, heads[0][:10], "--json")...)
	var d struct {
		Old, New string
		Views    []struct {
			View    string
			Changes []struct {
				Pointer  string
				Old, New json.RawMessage
			}
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &d) != nil {
		t.Fatalf("page diff --json: %d %s %s", code, out, errs)
	}
	if d.Old != heads[0] || d.New != "" || len(d.Views) == 0 {
		t.Fatalf("page diff against the vault as it stands: %s", out)
	}
	code, out, _ = quire(t, "", append(page, heads[1], heads[1])...)
	if code != 0 || !strings.Contains(out, "The Markdown is the same.\nNo view changed.\n") {
		t.Fatalf("page diff of a commit with itself: %d %s", code, out)
	}
	code, _, errs = quire(t, "", append(page, "no-such-ref")...)
	if code == 0 || !strings.Contains(errs, `old: "no-such-ref" names no commit`) {
		t.Fatalf("page diff of no commit: %d %s", code, errs)
	}
	render := []string{v, "page", "render", "--playbook", "operations", "--name", "fulfill-order", "--at"}
	if code, out, errs := quire(t, "", append(render, heads[0])...); code != 0 || !strings.Contains(out, "# runs\n") {
		t.Fatalf("page render --at: %d %s %s", code, out, errs)
	}
	code, _, errs = quire(t, "", append(render, "no-such-ref")...)
	if code == 0 || !strings.Contains(errs, `at: "no-such-ref" names no commit`) {
		t.Fatalf("page render --at of no commit: %d %s", code, errs)
	}
}
