package web_test

import (
	"strings"
	"testing"
)

// TestThePageShowsItsReceipt: a page's receipt in small type, the digests
// get_definition answers, and how to verify them on any clone.
func TestThePageShowsItsReceipt(t *testing.T) {
	d := sharedDemo(t)
	def := d.call("get_definition", map[string]any{"playbook": "operations", "type": "workflow", "name": "fulfill-order"})
	r, _ := def["page"].(map[string]any)["receipt"].(map[string]any)
	if r == nil {
		t.Fatalf("get_definition answers no page.receipt: %v", def["page"])
	}
	views := r["views"].(string)
	_, body := d.get("/p/operations/workflow/fulfill-order")
	_, line, ok := strings.Cut(body, `<p class="q-receipt" data-live="receipt"><small`)
	line, _, _ = strings.Cut(line, "</p>")
	for _, want := range []string{"Receipt: records 1 to ", "views <code>" + views[:len("sha256:")+12] + "…</code>", `title="module sha256:`, "; views " + views,
		"To verify: <code>quire page verify --playbook operations --type workflow --name fulfill-order</code>"} {
		if !ok || !strings.Contains(line, want) {
			t.Errorf("the receipt lacks %q:\n%s", want, line)
		}
	}
}
