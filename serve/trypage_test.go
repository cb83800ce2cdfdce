package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"quire/ledger"
)

// doubled is close-the-month's document with a page whose module counts
// the revenue twice and whose result says so: the change a dry run shows.
func doubled(t *testing.T) string {
	src := workflowSource(t)
	for old, new := range map[string]string{
		"{ at: month, value: revenue }": "{ at: month, value: revenue * 2 }",
		"of revenue.":                   "of revenue, counted twice.",
	} {
		if !strings.Contains(src, old) {
			t.Fatalf("close-the-month no longer holds %q", old)
		}
		src = strings.Replace(src, old, new, 1)
	}
	return src
}

// vaultAsIs answers what tells a vault changed: its HEAD, git status
// and the files under .quire/views.
func vaultAsIs(t *testing.T, l *ledger.Ledger) string {
	t.Helper()
	var out []string
	for _, args := range [][]string{{"rev-parse", "HEAD"}, {"status", "--porcelain", "--ignored=no"}} {
		b, err := exec.Command("git", append([]string{"-C", l.Root()}, args...)...).Output()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	b, _ := exec.Command("sh", "-c", "cd "+l.Root()+"/.quire/views && find . -type f -exec cksum {} +").Output()
	return strings.Join(append(out, string(b)), "\n")
}

// The dry run of a changed page, over HTTP and MCP: the new render and
// views, each view's changes from today's as JSON pointers, and nothing
// of the vault changed (no commit, git status and check --history clean,
// today's views and page as they were).
func TestTryPageShowsTheChangedPageAndSavesNothing(t *testing.T) {
	t.Parallel()
	l := newLedger(t)
	project := seed(t, l)
	run := startRun(t, l, project)
	mustCall(t, l, "end_run", map[string]any{"playbook": "finance", "run_id": run, "status": "succeeded",
		"output": map[string]any{"month": "2026-10", "revenue": 182450}, "actor": "agent-7"})
	writer, _ := CreateToken(l, "ana", []string{"playbook:write"})
	reader, _ := CreateToken(l, "rui", []string{"playbook:read"})
	ts, c := newTestServer(t, newServer(l, false, nil))
	def := "/v1/orgs/acme/playbooks/finance/definitions/workflow/close-the-month"
	_, todayPage := c.with(writer).do("POST", def+"/render", map[string]any{})
	before := vaultAsIs(t, l)

	status, out := c.with(writer).do("POST", def+"/try", map[string]any{"source": doubled(t)})
	if status != 200 {
		t.Fatalf("try: %d %v", status, out)
	}
	page := out["page"].(map[string]any)
	if page["result"] != "2026-10 closed with $182,450 of revenue, counted twice." || !strings.Contains(fmt.Sprint(page["runs"]), `"value":364900`) {
		t.Errorf("the tried page: %v", page)
	}
	if st := page["standing"].(map[string]any); st["state"] != "live" || st["version"] != 2.0 || out["version"] != 2.0 {
		t.Errorf("the tried standing: %v, version %v", st, out["version"])
	}
	if got := fmt.Sprint(out["views"]); !strings.Contains(got, "value:364900") {
		t.Errorf("the tried views: %s", got)
	}
	changes, _ := json.Marshal(out["changes"])
	if want := `[{"changes":[{"new":364900,"old":182450,"pointer":"/lines/0/points/0/value"}],"view":"revenue"}]`; string(changes) != want {
		t.Errorf("changes:\n%s\nwant\n%s", changes, want)
	}

	if after := vaultAsIs(t, l); after != before {
		t.Errorf("the dry run changed the vault:\n%s\nwas\n%s", after, before)
	}
	if _, problems, err := l.CheckHistory(); err != nil || len(problems) > 0 {
		t.Errorf("check --history: %v %v", err, problems)
	}
	vaultClean(t, l)
	if _, again := c.with(writer).do("POST", def+"/render", map[string]any{}); fmt.Sprint(again["page"]) != fmt.Sprint(todayPage["page"]) {
		t.Errorf("today's page after the dry run:\n%v\nwas\n%v", again["page"], todayPage["page"])
	}

	// Over MCP, the same answer; a read token may not, as it runs code.
	cs, err := connectHTTP(t, ts.URL, writer)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "try_page",
		Arguments: map[string]any{"playbook": "finance", "type": "workflow", "name": "close-the-month", "source": doubled(t)}})
	if err != nil || res.IsError {
		t.Fatalf("try_page over MCP: %v %+v", err, res)
	}
	if mcpChanges, _ := json.Marshal(res.StructuredContent.(map[string]any)["changes"]); string(mcpChanges) != string(changes) {
		t.Errorf("changes over MCP: %s", mcpChanges)
	}
	if st, out := c.with(reader).do("POST", def+"/try", map[string]any{"source": doubled(t)}); st != 403 || code(out) != "forbidden" {
		t.Errorf("a read token: %d %v", st, out)
	}
}

// A document the save would refuse is refused as the save refuses it,
// with its line under /source, and so is one without a page.
func TestTryPageRefusesWhatASaveRefuses(t *testing.T) {
	t.Parallel()
	l := newLedger(t)
	seed(t, l)
	_, c := newTestServer(t, newServer(l, true, nil))
	def := "/v1/orgs/acme/playbooks/finance/definitions/workflow/close-the-month"
	broken := strings.Replace(workflowSource(t), "return { revenue:", "return { revenu:", 1)
	status, out := c.do("POST", def+"/try", map[string]any{"source": broken})
	issues, _ := json.Marshal(out["error"].(map[string]any)["issues"])
	if status != 400 || code(out) != "invalid_input" || !strings.Contains(string(issues), `{"line":33,"message":"Object literal may only specify known properties, but 'revenu' does not exist in type 'View'.`) || !strings.Contains(string(issues), `"path":"/source"}`) {
		t.Errorf("a module that does not check: %d %s", status, issues)
	}
	status, out = c.do("POST", def+"/try", map[string]any{"source": "document:\n  name: close-the-month\n"})
	if status != 400 || message(out) != "/source: the document has no page to try: give it a page key" {
		t.Errorf("a document without a page: %d %v", status, out)
	}
	if status, out = c.do("POST", "/v1/orgs/acme/playbooks/finance/definitions/workflow/open-the-month/try", map[string]any{"source": broken}); status != 404 {
		t.Errorf("an unknown definition: %d %v", status, out)
	}
}
