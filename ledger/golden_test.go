package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"quire/vault"
	"quire/words/refusal"
)

// The spec's rendered examples, reproduced character for character by
// really running the definitions through the vault: create, run, record
// the outputs at the spec's dates, end, then read.

func golden(t testing.TB, name string) string {
	t.Helper()
	data, err := os.ReadFile("../render/testdata/pages/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimRight(string(data), "\n")
}

func (f *fixture) runAt(name, day string, output string) *Run {
	f.t.Helper()
	r := f.call("run_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":%q,"member_of":[%q],"executor":"agent-7","authorized_by":"ana","time":"%sT07:00:00Z"}`, name, f.project, day)).(*Run)
	if output != "" {
		f.call("end_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"status":"succeeded","output":%s,"actor":"agent-7","time":"%sT09:00:00Z"}`, r.RunID, output, day))
	}
	return r
}

func TestGoldenMorningSocialContent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.call("create_definition", saveArgs("workflow", "morning-social-content", source(t, "morning-social-content.yaml")))
	post := func(ch string, n int) string {
		return fmt.Sprintf(`{"channel":%q,"title":"Post %d","url":"https://example.com/drafts/%d"}`, ch, n, n)
	}
	f.runAt("morning-social-content", "2026-10-30", `{"date":"2026-10-30","posts":[`+post("LinkedIn", 1)+","+post("X", 2)+","+post("Instagram", 3)+`]}`)
	f.runAt("morning-social-content", "2026-10-31", `{"date":"2026-10-31","posts":[`+post("LinkedIn", 4)+","+post("X", 5)+`]}`)
	out, _ := os.ReadFile("../render/testdata/pages/morning/output.json")
	last := f.runAt("morning-social-content", "2026-11-01", string(out))
	waiting := f.runAt("morning-social-content", "2026-11-02", "")

	got := f.call("get_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, last.RunID)).(*Run)
	if got.Page == nil || got.Page.Result != golden(t, "morning/result.md") {
		t.Fatalf("page.result:\n%v", got.Page)
	}
	if got.Page.Headline != "3 posts drafted for 2026-11-01." {
		t.Fatalf("headline %q", got.Page.Headline)
	}
	got = f.call("get_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, waiting.RunID)).(*Run)
	if got.Page.Result != golden(t, "morning/waiting.md") {
		t.Fatalf("waiting: %q", got.Page.Result)
	}
	d := f.call("get_definition", `{"playbook":"finance","type":"workflow","name":"morning-social-content"}`).(*Definition)
	if d.Page == nil || d.Page.Runs != golden(t, "morning/runs.md") {
		t.Fatalf("page.runs:\n%+v", d.Page)
	}
	if d.Page.Standing == nil || d.Page.Standing.State != "live" || d.Page.Standing.Folded != 3 {
		t.Fatalf("standing %+v", d.Page.Standing)
	}
	// The blocks of a result, with their addresses.
	got = f.call("get_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"blocks":true}`, last.RunID)).(*Run)
	if len(got.Page.Blocks) != 2 || got.Page.Blocks[1].Address != "finance/runs/"+last.RunID+"/result/2" || got.Page.Blocks[1].Kind != "list" {
		t.Fatalf("blocks %+v", got.Page.Blocks)
	}
	// As of the run of 31 October: the views then.
	second := f.call("list_runs", `{"playbook":"finance","name":"morning-social-content"}`).(*RunPage).Runs[2]
	asOf := f.call("render_page", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"morning-social-content","run_id":%q}`, second.RunID)).(*Definition)
	if !strings.HasPrefix(asOf.Page.Runs, "Since it began, the workflow has drafted 5 posts across 3 channels.") {
		t.Fatalf("as of 31 October:\n%s", asOf.Page.Runs)
	}
	// The preview over a sample output, and its refusals.
	pv := f.call("get_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"morning-social-content","render":true,"sample_output":%s}`, out)).(*Definition)
	if pv.Page.Result != golden(t, "morning/result.md") {
		t.Fatalf("preview: %q", pv.Page.Result)
	}
	f.refuse("get_definition", `{"playbook":"finance","type":"workflow","name":"morning-social-content","sample_output":{}}`, refusal.InvalidInput, "/sample_output", "render")
	f.refuse("get_definition", `{"playbook":"finance","type":"workflow","name":"close-the-month","render":true}`, refusal.InvalidInput, "/render", "no page")
	f.refuse("render_page", `{"playbook":"finance","type":"workflow","name":"close-the-month"}`, refusal.NotFound, "", "no page")
	f.refuse("render_page", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"morning-social-content","run_id":%q,"sample_output":{}}`, last.RunID), refusal.InvalidInput, "/run_id", "")
	deep := strings.Repeat("[", 600) + strings.Repeat("]", 600)
	f.refuse("get_definition", `{"playbook":"finance","type":"workflow","name":"morning-social-content","render":true,"sample_output":`+deep+`}`, refusal.InvalidInput, "/sample_output", "512")
	other := f.start()
	f.refuse("render_page", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"morning-social-content","run_id":%q}`, other.RunID), refusal.InvalidInput, "/run_id", "close-the-month")
}

func TestGoldenCloseTheMonthAndFulfillOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	src := source(t, "close-the-month.yaml")
	f.call("create_definition", saveArgs("workflow", "close-month", src))
	r := f.runAt("close-month", "2026-11-02", `{"month":"2026-10","revenue":182450}`)
	got := f.call("get_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, r.RunID)).(*Run)
	if got.Page == nil || got.Page.Result != "2026-10 closed with $182,450 of revenue." {
		t.Fatalf("close-the-month result: %+v", got.Page)
	}
	f.call("create_definition", saveArgs("workflow", "fulfill-order", source(t, "fulfill-order.yaml")))
	f.runAt("fulfill-order", "2026-10-30", `{"order":"A-1041","channel":"Web","total":86.5}`)
	f.runAt("fulfill-order", "2026-10-31", `{"order":"A-1042","channel":"Marketplace","total":24}`)
	last := f.runAt("fulfill-order", "2026-11-01", `{ "order": "A-1043", "channel": "Web", "total": 132.25 }`)
	got = f.call("get_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, last.RunID)).(*Run)
	if got.Page.Result != golden(t, "fulfill/result.md") {
		t.Fatalf("fulfill result: %q", got.Page.Result)
	}
	d := f.call("get_definition", `{"playbook":"finance","type":"workflow","name":"fulfill-order"}`).(*Definition)
	if d.Page.Runs != golden(t, "fulfill/runs.md") {
		t.Fatalf("fulfill runs:\n%s\nwant\n%s", d.Page.Runs, golden(t, "fulfill/runs.md"))
	}
	text := f.call("get_definition", `{"playbook":"finance","type":"workflow","name":"fulfill-order","format":"text"}`).(*Definition)
	if strings.Contains(text.Page.Runs, "```chart") {
		t.Fatalf("format text kept a chart block:\n%s", text.Page.Runs)
	}
	b, _ := json.Marshal(d.Page.Standing)
	if !strings.Contains(string(b), `"state":"live"`) {
		t.Fatalf("standing %s", b)
	}
}

// A fold that raises at an event stalls the views there: page.runs is the
// line for stalled views, the standing names the event, the kind, the
// fold's error and its line; the result still renders.
func TestStalledViewsThroughTheVault(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	src := `document:
  name: boom
page:
  data:
    language: typescript
    source:
      events:
        - type: run_succeeded
          subject: workflow/boom
    views:
      count: categories
    module: |
      export function fold(view: View, event: Event): View {
        const data = event.data;
        const output = typeof data === 'object' && data !== null && !Array.isArray(data) ? data['output'] : undefined;
        if (typeof output === 'object' && output !== null && !Array.isArray(output) && output['boom'] === true) {
          throw new Error('boom at ' + String(output['n']));
        }
        const n = (view.count?.values[0]?.value ?? 0) + 1;
        return { count: { values: [{ name: 'runs', value: n }] } };
      }
  result: |
    Run {{ output.n }}.
  runs: |
    {{ views.count.values[0].value }} runs.
`
	f.call("create_definition", saveArgs("workflow", "boom", src))
	f.runAt("boom", "2026-10-30", `{"n":1}`)
	d := f.call("get_definition", `{"playbook":"finance","type":"workflow","name":"boom"}`).(*Definition)
	if d.Page.Runs != "1 runs." {
		t.Fatalf("runs before the stall: %q", d.Page.Runs)
	}
	bad := f.runAt("boom", "2026-10-31", `{"n":2,"boom":true}`)
	f.runAt("boom", "2026-11-01", `{"n":3}`)
	d = f.call("get_definition", `{"playbook":"finance","type":"workflow","name":"boom"}`).(*Definition)
	if d.Page.Runs != "The figures stopped updating because the page could not process an event. Correct the page to continue." {
		t.Fatalf("runs after the stall: %q", d.Page.Runs)
	}
	st := d.Page.Standing
	if st == nil || st.State != "stalled" || st.Stalled == nil || st.Stalled.Kind != "raised" ||
		!strings.Contains(st.Stalled.Error, "boom at 2") || st.Stalled.Line != 17 || !strings.HasPrefix(st.Stalled.Event.ID, bad.RunID) {
		b, _ := json.Marshal(st)
		t.Fatalf("standing %s", b)
	}
	got := f.call("get_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, bad.RunID)).(*Run)
	if got.Page.Result != "Run 2." {
		t.Fatalf("result %q", got.Page.Result)
	}
	// A corrected version with other data builds the views again.
	fixed := strings.Replace(src, "throw new Error('boom at ' + String(output['n']));", "return view;", 1)
	f.call("update_definition", saveArgs("workflow", "boom", fixed))
	d = f.call("get_definition", `{"playbook":"finance","type":"workflow","name":"boom"}`).(*Definition)
	if d.Page.Runs != "2 runs." || d.Page.Standing.State != "live" || d.Page.Standing.Version != 2 {
		t.Fatalf("after the fix: %q %+v", d.Page.Runs, d.Page.Standing)
	}
}

// Everything under .quire/ can go: the same views come back from the files.
func TestReindexFoldsTheSameViews(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.call("create_definition", saveArgs("workflow", "fulfill-order", source(t, "fulfill-order.yaml")))
	f.runAt("fulfill-order", "2026-10-30", `{"order":"A-1041","channel":"Web","total":86.5}`)
	f.runAt("fulfill-order", "2026-10-31", `{"order":"A-1042","channel":"Marketplace","total":24}`)
	before := f.call("get_definition", `{"playbook":"finance","type":"workflow","name":"fulfill-order"}`).(*Definition).Page.Runs
	if err := f.l.Reindex(); err != nil {
		t.Fatal(err)
	}
	l2, err := Open(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	f.l = l2
	after := f.call("get_definition", `{"playbook":"finance","type":"workflow","name":"fulfill-order"}`).(*Definition).Page.Runs
	if before != after || before == "" {
		t.Fatalf("views changed:\n%s\n---\n%s", before, after)
	}
}

func TestRejectedAndFailedRunsRender(t *testing.T) {
	f := newFixture(t)
	f.call("create_definition", saveArgs("workflow", "close-month", source(t, "close-the-month.yaml")))
	r := f.runAt("close-month", "2026-11-02", "")
	f.call("end_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"status":"rejected","reason":"the ledger is locked","kind":"unavailable","detail":"Try after 18:00.","actor":"agent-7"}`, r.RunID))
	got := f.call("get_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, r.RunID)).(*Run)
	if got.Page.Result != "The run was rejected as the ledger is locked, unavailable. Try after 18:00." {
		t.Fatalf("rejected: %q", got.Page.Result)
	}
	r = f.runAt("close-month", "2026-11-03", "")
	f.call("end_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"status":"rejected","reason":"no entries","actor":"agent-7"}`, r.RunID))
	if got = f.call("get_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, r.RunID)).(*Run); got.Page.Result != "The run was rejected as no entries." {
		t.Fatalf("rejected without kind: %q", got.Page.Result)
	}
	r = f.runAt("close-month", "2026-11-04", "")
	f.call("end_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"status":"failed","actor":"agent-7"}`, r.RunID))
	if got = f.call("get_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, r.RunID)).(*Run); got.Page.Result != "The run failed." {
		t.Fatalf("failed: %q", got.Page.Result)
	}
}

// While serving, the keeper folds in the background: woken by each event
// it records, and by its pass of a second for the events of others; a read
// answers at once with the standing as it is.
func TestServingKeepsTheViews(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.l.Keep(ctx)
	f.call("create_definition", saveArgs("workflow", "fulfill-order", source(t, "fulfill-order.yaml")))
	f.runAt("fulfill-order", "2026-10-30", `{"order":"A-1041","channel":"Web","total":86.5}`)
	deadline := time.Now().Add(20 * time.Second)
	for {
		d := f.call("get_definition", `{"playbook":"finance","type":"workflow","name":"fulfill-order"}`).(*Definition)
		st := d.Page.Standing
		if st.State == "live" && st.Folded == 1 {
			if !strings.Contains(d.Page.Runs, `{"name":"Orders","value":1}`) {
				t.Fatalf("runs %s", d.Page.Runs)
			}
			break
		}
		if st.State != "live" && d.Page.Runs != "Building this page's figures from the playbook's history…" {
			t.Fatalf("while building: %q", d.Page.Runs)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the views never caught up: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// Events another process records (another Ledger on the same vault,
	// which cannot wake this one's keeper) are folded within the keeper's
	// pass of a second.
	folded := func() int64 {
		return f.call("get_definition", `{"playbook":"finance","type":"workflow","name":"fulfill-order"}`).(*Definition).Page.Standing.Folded
	}
	v, err := vault.Open(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	other := &fixture{t: t, dir: f.dir, l: New(v), project: f.project}
	defer other.l.Close()
	other.runAt("fulfill-order", "2026-10-31", `{"order":"A-1042","channel":"Phone","total":20}`)
	wrote := time.Now()
	for folded() != 2 {
		if time.Since(wrote) > 10*time.Second {
			t.Fatalf("the other process's event was not folded: %d folded", folded())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A pass a second, plus the fold; loose enough for a loaded machine.
	if took := time.Since(wrote); took > 3*time.Second {
		t.Fatalf("folded %v after it was written, not within the pass of a second", took)
	}
	if d := f.call("get_definition", `{"playbook":"finance","type":"workflow","name":"fulfill-order"}`).(*Definition); !strings.Contains(d.Page.Runs, `{"name":"Orders","value":2}`) {
		t.Fatalf("runs %s", d.Page.Runs)
	}
}
