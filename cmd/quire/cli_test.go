package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"quire/fold"
)

// newCLIVault makes a vault of acme with the project Operations through the
// CLI, and answers its folder, the --vault flag and the project's uid.
func newCLIVault(t *testing.T) (dir, vaultFlag, project string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "vault")
	if code, out, errs := quire(t, "", "init", dir, "--org", "acme"); code != 0 || !strings.Contains(out, "Made the vault of acme") {
		t.Fatalf("init: %d %s %s", code, out, errs)
	}
	vaultFlag = "--vault=" + dir
	code, out, _ := quire(t, "", vaultFlag, "call", "create_project", "--args", `{"name":"Operations"}`)
	var p struct{ UID string }
	if code != 0 || json.Unmarshal([]byte(out), &p) != nil || p.UID == "" {
		t.Fatalf("create_project: %d %s", code, out)
	}
	return dir, vaultFlag, p.UID
}

// newCloseRun makes the vault of newCLIVault with the playbook finance,
// its workflow close and one run of it (executor agent-7, authorized by
// ana), and answers the vault's folder, the --vault flag and the run's id.
func newCloseRun(t *testing.T) (dir, vaultFlag, runID string) {
	t.Helper()
	return newCloseRunOf(t, "document:\n  name: close\n")
}

// newCloseRunOf is newCloseRun with the workflow close's source.
func newCloseRunOf(t *testing.T, source string) (dir, vaultFlag, runID string) {
	t.Helper()
	dir, vaultFlag, project := newCLIVault(t)
	quire(t, "", vaultFlag, "call", "create_playbook", "--args", `{"playbook":"finance","name":"Finance"}`)
	def, _ := json.Marshal(map[string]string{"playbook": "finance", "type": "workflow", "name": "close", "source": source})
	if code, out, errs := quire(t, "", vaultFlag, "call", "create_definition", "--args", string(def)); code != 0 {
		t.Fatalf("create_definition: %d %s %s", code, out, errs)
	}
	code, out, errs := quire(t, "", vaultFlag, "run", "start", "--playbook", "finance", "--name", "close", "--member-of", project,
		"--executor", "agent-7", "--authorized-by", "ana", "--json")
	var r struct {
		RunID string `json:"run_id"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("run start: %d %s %s", code, out, errs)
	}
	return dir, vaultFlag, r.RunID
}

// The CLI as a person and a script use it: quire init, quire call, the run
// commands, quire runs, quire check and quire shape check.
func TestCLIRunStory(t *testing.T) {
	dir, v, project := newCLIVault(t)
	quire(t, "", v, "call", "create_playbook", "--args", `{"playbook":"finance","name":"Finance"}`)
	// Arguments from standard input.
	if code, out, _ := quire(t, `{"playbook":"finance","type":"workflow","name":"close","source":"document:\n  name: close\n"}`, v, "call", "create_definition", "--args", "-"); code != 0 {
		t.Fatalf("create_definition: %s", out)
	}
	// A refusal: the object on stdout, the message on stderr, exit 1.
	code, out, errs := quire(t, "", v, "call", "get_playbook", "--args", `{"playbook":"Nope"}`)
	if code != 1 || !strings.Contains(out, `"code": "invalid_input"`) || !strings.Contains(errs, "/playbook") {
		t.Fatalf("refusal: %d %s %s", code, out, errs)
	}
	code, out, _ = quire(t, "", v, "run", "start", "--playbook", "finance", "--name", "close", "--member-of", project,
		"--executor", "agent-7", "--authorized-by", "ana", "--json")
	var r struct {
		RunID string `json:"run_id"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("run start: %d %s", code, out)
	}
	if code, out, _ := quire(t, "", v, "run", "event", "step_completed", "--playbook", "finance", "--run", r.RunID, "--step", "do/1/review", "--actor", "agent-7"); code != 0 || !regexp.MustCompile(`^seq 4  step_completed  `+r.RunID+`_2\n$`).MatchString(out) {
		t.Fatalf("run event: %d %q", code, out)
	}
	if code, _, errs := quire(t, "", v, "run", "end", "succeeded", "--playbook", "finance", "--run", r.RunID, "--actor", "mallory"); code != 1 || !strings.Contains(errs, "rule 4") {
		t.Fatalf("rule 4 over the CLI: %d %s", code, errs)
	}
	out2 := filepath.Join(t.TempDir(), "out.json")
	os.WriteFile(out2, []byte(`{"month":"2026-10"}`), 0o644)
	if code, out, _ := quire(t, "", v, "run", "end", "succeeded", "--output", "@"+out2, "--playbook", "finance", "--run", r.RunID, "--actor", "agent-7"); code != 0 || !strings.Contains(out, "complete (succeeded)") {
		t.Fatalf("run end: %d %s", code, out)
	}
	if code, out, _ := quire(t, "", v, "runs", "--playbook", "finance"); code != 0 || !strings.Contains(out, r.RunID+"  workflow/close") || !strings.HasPrefix(out, "RUN ") {
		t.Fatalf("runs: %d %s", code, out)
	}
	if code, out, _ := quire(t, "", v, "check"); code != 0 || !strings.HasSuffix(out, "1 run, 5 events, 0 problems\n") {
		t.Fatalf("check: %d %s", code, out)
	}
	// A broken run folder: check names the path and exits 1.
	runs, _ := filepath.Glob(filepath.Join(dir, "playbook-runs", "close-*"))
	os.Remove(filepath.Join(runs[0], "context.md"))
	if code, out, _ := quire(t, "", v, "check"); code != 1 || !strings.Contains(out, "rule 6: the run folder lacks context.md") {
		t.Fatalf("check of a broken vault: %d %s", code, out)
	}
}

func TestCLIShapeCheck(t *testing.T) {
	f := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(f, []byte(`{"lines":[{"name":"A","points":[{"at":"2026-01-02T00:00:00Z","value":1},{"at":"2026-01-01T00:00:00Z","value":2}]}]}`), 0o644)
	code, out, _ := quire(t, "", "shape", "check", "series", f)
	if code != 1 || out != "/lines/0/points/1/at: Expected a time later than the point before it.\n" {
		t.Fatalf("%d %q", code, out)
	}
	os.WriteFile(f, []byte(`{"values":[{"name":"A","value":1}]}`), 0o644)
	if code, out, _ := quire(t, "", "shape", "check", "categories", f); code != 0 || !strings.Contains(out, "fits the shape categories") {
		t.Fatalf("%d %q", code, out)
	}
	if code, _, errs := quire(t, "", "shape", "check", "pie", f); code != 1 || !strings.Contains(errs, "SHAPE") {
		t.Fatalf("%d %q", code, errs)
	}
}

func TestFlagsAfterArguments(t *testing.T) {
	app := newApp(&env{})
	for _, c := range []struct{ in, want string }{
		{"quire call get_run --args {}", "quire call --args {} get_run"},
		{"quire init DIR --org acme", "quire init --org acme DIR"},
		{"quire mcp --vault /v", "quire --vault /v mcp"},
		{"quire run event step_started --playbook p --json", "quire run event --playbook p --json step_started"},
		{"quire --vault=/v check --json", "quire --vault=/v check --json"},
	} {
		got := strings.Join(flagsFirst(app, strings.Fields(c.in)), " ")
		if got != c.want {
			t.Errorf("%s: got %s, want %s", c.in, got, c.want)
		}
	}
}

// quire token create --expires, list and revoke: the token is printed once
// and found nowhere after, its id is printed, and list shows what it is.
func TestCLITokens(t *testing.T) {
	dir, v, _ := newCLIVault(t)
	code, tok, errs := quire(t, "", v, "token", "create", "--principal", "ana", "--scope", "playbook:write", "--scope", "playbook:delegate:finance", "--expires", "90d")
	id := regexp.MustCompile(`tok-[0-9a-f]{12}`).FindString(errs)
	if code != 0 || !strings.HasPrefix(tok, "quire_") || id == "" || !strings.Contains(errs, "expires 20") {
		t.Fatalf("token create: %d %q %q", code, tok, errs)
	}
	tok = strings.TrimSpace(tok)
	if code, _, errs := quire(t, "", v, "token", "create", "--principal", "ana", "--scope", "admin", "--expires", "soon"); code != 1 || !strings.Contains(errs, "/expires") {
		t.Fatalf("--expires soon: %d %s", code, errs)
	}
	code, out, _ := quire(t, "", v, "token", "list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "ID  ") || !strings.Contains(lines[0], "LAST USED") ||
		!regexp.MustCompile(`^`+id+`\s+ana\s+playbook:write,playbook:delegate:finance\s+\S+Z\s+\S+Z\s+never$`).MatchString(lines[1]) {
		t.Fatalf("token list: %d\n%s", code, out)
	}
	code, out, _ = quire(t, "", v, "token", "list", "--json")
	if code != 0 || !strings.Contains(out, `"id": "`+id+`"`) || !strings.Contains(out, `"expires": "`) {
		t.Fatalf("token list --json: %d %s", code, out)
	}
	yaml, _ := os.ReadFile(filepath.Join(dir, "quire.yaml"))
	for _, where := range []string{out, string(yaml)} {
		if strings.Contains(where, tok) || strings.Contains(where, tok[len("quire_"):]) {
			t.Fatalf("the token itself is written: %s", where)
		}
	}
	if code, out, _ := quire(t, "", v, "token", "revoke", id); code != 0 || !strings.Contains(out, "Revoked "+id) {
		t.Fatalf("token revoke: %d %s", code, out)
	}
	if code, _, errs := quire(t, "", v, "token", "revoke", id); code != 1 || !strings.Contains(errs, "no token") {
		t.Fatalf("token revoke twice: %d %s", code, errs)
	}
	if code, out, _ := quire(t, "", v, "token", "list"); code != 0 || strings.Contains(out, id) {
		t.Fatalf("token list after revoke: %d %s", code, out)
	}
}

// quire call prints every refusal with its issues, at the argument at fault.
func TestCLIRefusalIssues(t *testing.T) {
	_, v, _ := newCLIVault(t)
	quire(t, "", v, "call", "create_playbook", "--args", `{"playbook":"finance","name":"Finance"}`)
	for _, c := range [][3]string{
		{"get_run", `{"playbook":"finance","run_id":"019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3e"}`, "/run_id"},
		{"get_playbook", `{"playbook":"nowhere"}`, "/playbook"},
		{"get_definition", `{"playbook":"finance","type":"workflow","name":"nowhere"}`, "/name"},
	} {
		op, args, at := c[0], c[1], c[2]
		code, out, _ := quire(t, "", v, "call", op, "--args", args)
		var r struct {
			Error struct {
				Code   string
				Issues []struct{ Path string }
			}
		}
		if code != 1 || json.Unmarshal([]byte(out), &r) != nil || r.Error.Code != "not_found" || len(r.Error.Issues) != 1 || r.Error.Issues[0].Path != at {
			t.Errorf("%s %s: %d %s", op, args, code, out)
		}
	}
}

// --limit 0 and limit: 0 are refused; a run's input nests at most 512 levels.
func TestCLILimitZeroAndADeepInput(t *testing.T) {
	_, v, project := newCLIVault(t)
	quire(t, "", v, "call", "create_playbook", "--args", `{"playbook":"finance","name":"Finance"}`)
	quire(t, "", v, "call", "create_definition", "--args", `{"playbook":"finance","type":"workflow","name":"close","source":"document:\n  name: close\n"}`)
	if code, _, errs := quire(t, "", v, "runs", "--playbook", "finance", "--limit", "0"); code != 1 || !strings.Contains(errs, "/limit") {
		t.Errorf("runs --limit 0: %d %s", code, errs)
	}
	if code, out, _ := quire(t, "", v, "call", "list_playbook_events", "--args", `{"playbook":"finance","limit":0}`); code != 1 || !strings.Contains(out, `"path": "/limit"`) {
		t.Errorf("list_playbook_events limit 0: %d %s", code, out)
	}
	input := strings.Repeat("[", 513) + strings.Repeat("]", 513)
	args := `{"playbook":"finance","type":"workflow","name":"close","member_of":["` + project + `"],"executor":"agent-7","authorized_by":"ana","input":` + input + `}`
	if code, out, _ := quire(t, "", v, "call", "run_definition", "--args", args); code != 1 || !strings.Contains(out, `"path": "/input"`) {
		t.Errorf("an input of 513 levels: %d %s", code, out)
	}
}

// cacheHome is a user's cache directory (XDG_CACHE_HOME) for a quire run
// as a fresh user's would be, but for the compiled QuickJS, which it
// shares with this test binary's user (fold.CompiledCache): compiling it
// costs seconds of CPU, tens under the race detector.
func cacheHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	if own := fold.CompiledCache(""); own != "" {
		os.MkdirAll(filepath.Join(home, "quire"), 0o700)
		if err := os.Symlink(own, filepath.Join(home, "quire", "qjs")); err != nil {
			t.Fatal(err)
		}
	}
	return home
}
