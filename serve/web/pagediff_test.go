package web_test

import (
	"os"
	"strings"
	"testing"

	"quire/serve"
)

// Two versions compared on a definition's page show, beside the document's
// changes, the page's: its Markdown and its views' values that changed, as
// the page stood at the commits that saved the two versions.
func TestTheComparedVersionsShowThePagesChanges(t *testing.T) {
	t.Parallel()
	d := newDemo(t, serve.Options{Open: true}, "close-the-month")
	d.run("close-the-month", "2026-11-02", `{"month":"2026-10","revenue":182450}`)
	src, err := os.ReadFile("../../testdata/vault/close-the-month.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d.call("update_definition", map[string]any{"playbook": "operations", "type": "workflow", "name": "close-the-month", "actor": "ana",
		"source": strings.Replace(string(src), "  runs: |\n", "  runs: |\n    Revenue by month.\n", 1)})
	_, page := d.get("/p/operations/workflow/close-the-month?from=1&to=2")
	for _, want := range []string{
		`<h3 id="page-changes">The page from version 1 to 2</h3>`,
		`<span class="q-diff-add">&#43; Revenue by month.</span>`,
		`<tr><td>revenue</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page's changes lack %q", want)
		}
	}
}
