package fold

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fastschema/qjs"
)

// engineRunner folds __lines (one event's JSON text a line) with the
// module's fold straight in the engine: no prelude, no checks, no worker.
// With copy, the views pass through JSON.parse(JSON.stringify(…)) between
// folds: the least that "the views pass from one fold to the next as JSON
// gives them back" costs in this engine.
const engineRunner = `globalThis.__run = function (copy) {
  const lines = __lines.split('\n');
  let views = {};
  for (let i = 0; i < lines.length; i++) {
    views = __fold(views, JSON.parse(lines[i]));
    if (copy) views = JSON.parse(JSON.stringify(views));
  }
  return JSON.stringify(views);
};`

// engineRates measures the ceiling of the whole path: the same module
// over the same events in one runtime of the engine the sandbox uses (qjs
// v0.0.6: QuickJS compiled to WebAssembly, run by wazero), in this
// process. It answers the events/s of the folds alone, of the folds with
// the JSON round trip of the views between them, and the views the
// latter ends with.
func engineRates(b testing.TB, js string, lines []string) (bare, withJSON float64, views string) {
	rate := newEngine(b, js, lines)
	defer rate(false, true)
	bare, _ = rate(false, false)
	withJSON, views = rate(true, false)
	return bare, withJSON, views
}

// newEngine loads the module into a runtime of the engine with the
// events, and answers a function that folds them all, with the views
// through JSON between folds or not, and answers events/s and the views
// (or, with done, closes the runtime).
func newEngine(b testing.TB, js string, lines []string) func(copy, done bool) (float64, string) {
	b.Helper()
	rt, err := qjs.New(qjs.Option{CWD: b.TempDir(), Context: context.Background()})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := rt.Eval(moduleFile, qjs.Code(js+"\nimport * as __ns from './"+moduleFile+"'; globalThis.__fold = __ns.fold;\n"), qjs.TypeModule()); err != nil {
		b.Fatalf("engine: loading the module: %v", err)
	}
	if _, err := rt.Eval("runner.js", qjs.Code(engineRunner)); err != nil {
		b.Fatal(err)
	}
	c := rt.Context()
	c.Global().SetPropertyStr("__lines", c.NewString(strings.Join(lines, "\n")))
	return func(copy, done bool) (float64, string) {
		if done {
			rt.Close()
			return 0, ""
		}
		code := "__run(false)"
		if copy {
			code = "__run(true)"
		}
		t0 := time.Now()
		v, err := rt.Eval("run.js", qjs.Code(code))
		if err != nil {
			b.Fatalf("engine: %v", err)
		}
		d := time.Since(t0)
		defer v.Free()
		return float64(len(lines)) / d.Seconds(), v.String()
	}
}
