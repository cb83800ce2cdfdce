package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// The reads of issue 5, over live views as quire serve keeps them.
func benchFulfill(b *testing.B) (*fixture, string) {
	f := newFixture(b)
	f.call("create_definition", saveArgs("workflow", "fulfill-order", source(b, "fulfill-order.yaml")))
	var last *Run
	for i, day := range []string{"2026-10-30", "2026-10-31", "2026-11-01"} {
		last = f.runAt("fulfill-order", day, fmt.Sprintf(`{"order":"A-104%d","channel":"Web","total":%d.25}`, i+1, 20*(i+1)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	go f.l.Keep(ctx)
	// Let the keeper catch up before timing.
	for i := 0; i < 200; i++ {
		d := f.call("get_definition", `{"playbook":"finance","type":"workflow","name":"fulfill-order"}`).(*Definition)
		if d.Page != nil && d.Page.Standing != nil && d.Page.Standing.State == "live" && d.Page.Standing.Folded == 3 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return f, last.RunID
}

func BenchmarkGetDefinitionFulfillOrder(b *testing.B) {
	f, _ := benchFulfill(b)
	args := json.RawMessage(`{"playbook":"finance","type":"workflow","name":"fulfill-order"}`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.l.Call(context.Background(), "get_definition", args); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetRunFulfillOrder(b *testing.B) {
	f, run := benchFulfill(b)
	args := json.RawMessage(fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, run))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.l.Call(context.Background(), "get_run", args); err != nil {
			b.Fatal(err)
		}
	}
}
