package serve

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A list answer has two forms, and every list tool says so: over MCP its
// structured content is {"items": […]}, since structured content is an
// object, and its text is the bare list that HTTP and the CLI answer
// (issue 27 found the two forms and no word of them).
func TestMCPListsSayTheirItems(t *testing.T) {
	t.Parallel()
	l := newLedger(t)
	mustCall(t, l, "create_project", map[string]any{"name": "Operations"})
	cs := connectInMemory(t, l)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	lists := 0
	for _, tool := range tools.Tools {
		if strings.Contains(tool.Description, "structuredContent.items") {
			lists++
		}
	}
	if lists != 5 {
		t.Errorf("%d tools say their list is structuredContent.items; want the 5 that answer a list", lists)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_projects"})
	if err != nil {
		t.Fatal(err)
	}
	items, _ := res.StructuredContent.(map[string]any)["items"].([]any)
	text := res.Content[0].(*mcp.TextContent).Text
	_, hc := newTestServer(t, newServer(l, true, nil))
	_, raw := hc.doRaw("GET", "/v1/orgs/acme/projects", nil)
	if len(items) != 1 || !strings.HasPrefix(text, "[") || !jsonEqual([]byte(text), raw) {
		t.Errorf("list_projects: structured %v, text %s, HTTP %s", res.StructuredContent, text, raw)
	}
}
