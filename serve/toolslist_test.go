package serve

import (
	"context"
	"encoding/json"
	"testing"
)

// TestToolsListForAnAgent: what an agent host receives from tools/list is
// what every agent pays for in tokens at start-up. It must stay under 48 KB
// (43 KB for the 38 tools of stop 32; the reviewer's dry run, a commit's
// diff and a page's receipts, verification and diffs may add about 1 KB a
// tool, and no more: trim a description before raising this), every input
// property described,
// closed sets as enums, and every tool with its four hints.
// closed are the arguments whose values are a closed set, wherever they are.
var closed = map[string]bool{"status": true, "to": true, "how": true, "encoding": true, "format": true, "type": true, "event": true}

func TestToolsListForAnAgent(t *testing.T) {
	cs := connectInMemory(t, newLedger(t))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	// The JSON-RPC result as the host reads it off the wire.
	b, _ := json.Marshal(res)
	out := 0
	for _, tool := range res.Tools {
		o, _ := json.Marshal(tool.OutputSchema)
		if tool.OutputSchema != nil {
			out += len(o)
		}
	}
	t.Logf("tools/list: %d tools, %d bytes (%d of them output schemas)", len(res.Tools), len(b), out)
	// About 1,100 bytes a tool, output schema included.
	if len(b) >= 48_000 {
		t.Errorf("tools/list is %d bytes; it must stay under 48 KB", len(b))
	}
	for _, tool := range res.Tools {
		in, _ := json.Marshal(tool.InputSchema)
		var s struct {
			Properties map[string]map[string]any `json:"properties"`
		}
		json.Unmarshal(in, &s)
		for name, p := range s.Properties {
			if d, _ := p["description"].(string); d == "" {
				t.Errorf("%s: input property %s has no description", tool.Name, name)
			}
			if closed[name] && p["enum"] == nil {
				t.Errorf("%s: %s is a closed set without enum: %v", tool.Name, name, p)
			}
			if name == "limit" && (p["minimum"] != 1.0 || p["maximum"] != 1000.0) {
				t.Errorf("%s: limit %v, not 1 to 1000", tool.Name, p)
			}
			if ty, ok := p["type"].([]any); ok {
				t.Errorf("%s: %s typed %v", tool.Name, name, ty)
			}
		}
		a := tool.Annotations
		if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s: annotations %+v", tool.Name, a)
		}
	}
}
