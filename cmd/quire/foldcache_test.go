package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every vault of a user folds with the QuickJS compiled once into the
// user's cache directory: a new vault, or a clone, compiles nothing of its
// own for its first fold (seconds of CPU, tens under the race detector,
// which a replica's first page waited for).
func TestVaultsShareTheCompiledQuickJS(t *testing.T) {
	t.Parallel()
	cache := cacheHome(t)
	for _, name := range []string{"one", "two"} {
		dir, v, project := newCLIVault(t)
		quire(t, "", v, "call", "create_playbook", "--args", `{"playbook":"finance","name":"Finance"}`)
		if code, out, errs := quire(t, "", v, "definition", "save", "../../testdata/vault/close-the-month.yaml", "--playbook", "finance"); code != 0 {
			t.Fatalf("%s: definition save: %s %s", name, out, errs)
		}
		code, out, errs := quire(t, "", v, "run", "start", "--playbook", "finance", "--name", "close-the-month", "--member-of", project,
			"--executor", "agent-7", "--authorized-by", "ana", "--json")
		var r struct {
			RunID string `json:"run_id"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
			t.Fatalf("%s: run start: %s %s", name, out, errs)
		}
		end := fmt.Sprintf(`{"playbook":"finance","run_id":%q,"status":"succeeded","output":{"month":"2026-10","revenue":182450},"actor":"agent-7"}`, r.RunID)
		if code, out, errs := quire(t, "", v, "call", "end_run", "--args", end); code != 0 {
			t.Fatalf("%s: end_run: %s %s", name, out, errs)
		}
		cmd := quireProcess([]string{"XDG_CACHE_HOME=" + cache}, v, "call", "render_page", "--args",
			`{"playbook":"finance","type":"workflow","name":"close-the-month"}`)
		page, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(page), `182450`) {
			t.Fatalf("%s: render_page: %v %s", name, err, page)
		}
		if _, err := os.Stat(filepath.Join(dir, ".quire", "qjs-cache")); !os.IsNotExist(err) {
			t.Errorf("%s: the vault compiled QuickJS into its own .quire/qjs-cache (%v)", name, err)
		}
	}
	if entries, _ := filepath.Glob(filepath.Join(cache, "quire", "qjs", "*", "*")); len(entries) == 0 {
		t.Errorf("nothing compiled in the user's cache %s", filepath.Join(cache, "quire", "qjs"))
	}
}
