package serve

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sdkClient is the folder of the official MCP TypeScript SDK's client,
// whose packages `make mcp-client` installs. Without node or the packages
// the test fails, saying so: it is how quire is driven as a third-party
// agent host drives it, and is never skipped.
func sdkClient(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is needed to drive quire with the official MCP TypeScript SDK: make mcp-client installs it (%v)", err)
	}
	dir, _ := filepath.Abs(filepath.Join("testdata", "mcp-client"))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Fatalf("the official MCP TypeScript SDK is not installed in %s: make mcp-client installs it (%v)", dir, err)
	}
	return dir
}

// storyConfig is story.mjs's configuration, with the workflow and the
// playbook's page.
func storyConfig(t *testing.T, cfg map[string]any) string {
	cfg["source"] = workflowSource(t) + "  glance:\n    headline: '{{ output.month }} closed'\n    runs: '{{ run.status }}'\n"
	cfg["playbook_page"] = playbookPage(t)
	b, _ := json.Marshal(cfg)
	p := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

type storySaw struct {
	Tools, Calls     int
	Playbook         string
	Result, Standing string
	Glance           map[string]string
	Reader           string
}

func runStoryScript(t *testing.T, dir, config string, short bool) storySaw {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "story.mjs", config)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node story.mjs: %v\n%s%s", err, out, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var saw storySaw
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &saw); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if short {
		if saw.Tools < 5 || saw.Calls != 4 || saw.Playbook != "finance" {
			t.Fatalf("the SDK's client saw %+v", saw)
		}
		return saw
	}
	want := map[string]string{"headline": "2026-10 closed", "runs": "succeeded"}
	if saw.Result != "2026-10 closed with $182,450 of revenue." || saw.Standing == "" || saw.Calls < 17 ||
		saw.Glance["headline"] != want["headline"] || saw.Glance["runs"] != want["runs"] {
		t.Fatalf("the SDK's client saw %+v", saw)
	}
	return saw
}

// The official TypeScript SDK's client drives a whole run, the page's reads
// among it, over streamable HTTP with tokens for two principals; the SDK
// checks every structured result against its tool's output schema.
func TestSDKStoryOverHTTP(t *testing.T) {
	dir := sdkClient(t)
	l := newLedger(t)
	admin, err := CreateToken(l, "ana", []string{"admin"})
	if err != nil {
		t.Fatal(err)
	}
	reader, err := CreateToken(l, "rui", []string{"playbook:read"})
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := newTestServer(t, newServer(l, false, nil))
	saw := runStoryScript(t, dir, storyConfig(t, map[string]any{"url": ts.URL + "/mcp", "token": admin, "reader": reader}), false)
	if saw.Reader == "" {
		t.Fatalf("the reader saw no standing: %+v", saw)
	}
	t.Logf("the SDK's client over HTTP: %+v", saw)
}

// The same run over stdio, the test binary serving as `quire mcp`; without
// QUIRE_TEST_LONG, its short variant (a playbook made and read, a refusal).
func TestSDKStoryOverStdio(t *testing.T) {
	long := os.Getenv("QUIRE_TEST_LONG") != ""
	dir := sdkClient(t)
	l := newLedger(t)
	env := map[string]string{"QUIRE_TEST_STDIO": l.Root(), "PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME")}
	if v := os.Getenv("QUIRE_TSC"); v != "" {
		env["QUIRE_TSC"] = v
	}
	saw := runStoryScript(t, dir, storyConfig(t, map[string]any{"command": os.Args[0], "args": []string{"-test.run=^$"}, "env": env, "short": !long}), !long)
	t.Logf("the SDK's client over stdio: %+v", saw)
}
