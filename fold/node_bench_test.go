package fold

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// nodeRunner folds the events of events.jsonl (the filters applied) with
// the module in module.mjs, giving each fold the views as JSON gives
// them back, as the page format requires. It prints the views, then the
// milliseconds the folds took.
const nodeRunner = `import { readFileSync } from 'node:fs';
import { fold } from './module.mjs';
const lines = readFileSync(new URL('./events.jsonl', import.meta.url), 'utf8').split('\n').filter((l) => l !== '');
const events = lines.map((l) => JSON.parse(l));
const RealDate = Date;
let now = 0;
globalThis.Date = class extends RealDate { constructor(...a) { if (a.length === 0) super(now); else super(...a); } static now() { return now; } };
const t0 = performance.now();
let views = {};
for (const e of events) {
  now = RealDate.parse(e.time);
  views = JSON.parse(JSON.stringify(fold(views, e)));
}
const ms = performance.now() - t0;
process.stdout.write(JSON.stringify(views) + '\n' + ms + '\n');
`

// BenchmarkFoldMorningNode runs the same module over the same 100,000
// records in Node.js (V8), when node is on the PATH, so that make bench
// can print the ratio of its folds/s to BenchmarkFoldMorning's (the folds
// alone: Node reads the events from a file before the clock starts). It checks that Node's
// views are byte for byte the sandbox's.
func BenchmarkFoldMorningNode(b *testing.B) {
	node, err := exec.LookPath("node")
	if err != nil {
		b.Skip("node is not on the PATH")
	}
	const n = 100_000
	hist := generatedHistory(n)
	fs := morningFilters(b)
	dir := b.TempDir()
	var lines bytes.Buffer
	var events []Event
	for _, e := range hist {
		if fs.MatchJSON(e.JSON) {
			lines.Write(e.JSON)
			lines.WriteByte('\n')
			events = append(events, e)
		}
	}
	prog := tsProgram(b, morningTS, 1, morningViews)
	for name, text := range map[string]string{"module.mjs": prog.JS, "run.mjs": nodeRunner, "events.jsonl": lines.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	var total float64
	var views string
	for range b.N {
		out, err := exec.Command(node, filepath.Join(dir, "run.mjs")).Output()
		if err != nil {
			b.Fatalf("node: %v", err)
		}
		parts := strings.Split(strings.TrimSpace(string(out)), "\n")
		ms, _ := strconv.ParseFloat(parts[1], 64)
		total += ms
		views = parts[0]
	}
	b.StopTimer()
	b.ReportMetric(float64(len(events))*float64(b.N)/(total/1000), "folds/s")

	// The sandbox folds the same events to the same views.
	pool := newTestPool(b, Limits{})
	h := &memHistory{}
	h.add(hist...)
	k := newTestKeeper(b, h, KeeperOptions{Pool: pool})
	registerMorning(b, k, prog, 1, "h1")
	if _, err := k.CatchUp(context.Background(), "morning"); err != nil {
		b.Fatal(err)
	}
	got, _, _ := k.Views("morning")
	if string(got) != views {
		b.Fatalf("Node's views differ from the sandbox's:\n%s\n%s", views, got)
	}
}
