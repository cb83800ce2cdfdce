package fold

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/evanw/esbuild/pkg/api"
)

// transpile turns a test's TypeScript into the ES module the sandbox takes.
func transpile(t testing.TB, ts string) string {
	t.Helper()
	res := api.Transform(ts, api.TransformOptions{Loader: api.LoaderTS, Format: api.FormatESModule, Target: api.ES2023})
	if len(res.Errors) > 0 {
		t.Fatalf("transpile: %v", res.Errors[0].Text)
	}
	return string(res.Code)
}

// jsProgram is a program written in JavaScript, its lines its own.
func jsProgram(js string, views map[string]string) *Program {
	return NewProgram(js, nil, 1, views)
}

func newTestPool(t testing.TB, lim Limits) *Pool {
	t.Helper()
	p, err := NewPool(PoolOptions{Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// event makes a run_succeeded event of the history.
func event(seq int64, at time.Time, data string) Event {
	j := fmt.Sprintf(`{"specversion":"1.0","id":"ev-%d","type":"run_succeeded","source":"playbooks/social","subject":"workflow/morning-social-content","time":%q,"data":%s}`,
		seq, at.UTC().Format(time.RFC3339Nano), data)
	return Event{Seq: seq, JSON: []byte(j), Time: at}
}

func foldAll(t testing.TB, p *Pool, prog *Program, events []Event) Result {
	t.Helper()
	r, err := p.Fold(context.Background(), prog, nil, events)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
