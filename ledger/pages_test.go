package ledger

import (
	"encoding/json"
	"strings"
	"testing"

	"quire/words/refusal"
)

// glance comes back as the mapping its page writes, keys in the document's
// order and each string rendered, over the latest ended run even while a
// newer run is still going.
func TestGlanceIsTheMappingOverTheLatestEndedRun(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	glance := `  glance:
    zebra: |
      {{ output.month }} closed with {{ output.revenue | money }}.
    status: '{{ run.status }}'
    figures:
      - '{{ views.revenue.lines | size }} line'
      - 3
      - {months: 36}
    alpha: true
`
	src := source(t, "close-the-month.yaml") + glance
	b, _ := json.Marshal(map[string]string{"playbook": "finance", "type": "workflow", "name": "close-the-month", "source": src})
	f.call("update_definition", string(b))
	f.runAt("close-the-month", "2026-11-01", `{"month":"2026-09","revenue":100}`)
	f.runAt("close-the-month", "2026-11-02", `{"month":"2026-10","revenue":182450}`)
	f.runAt("close-the-month", "2026-11-03", "") // still going

	want := `{"zebra":"2026-10 closed with $182,450.","status":"succeeded","figures":["1 line",3,{"months":36}],"alpha":true}`
	for _, op := range []string{"get_definition", "render_page"} {
		d := f.call(op, `{"playbook":"finance","type":"workflow","name":"close-the-month"}`).(*Definition)
		if d.Page == nil || string(d.Page.Glance) != want {
			t.Fatalf("%s: page.glance %s, want %s", op, d.Page.Glance, want)
		}
		out, _ := json.Marshal(d)
		if !strings.Contains(string(out), `"glance":`+want) {
			t.Fatalf("%s answers %s", op, out)
		}
	}

	// A key twice in one mapping of glance is refused at its line.
	twice := source(t, "close-the-month.yaml") + "  glance:\n    headline: a\n    headline: b\n"
	r := f.refuse("create_definition", saveArgs("workflow", "twice", twice), refusal.InvalidInput, "/source", "glance has the key headline twice")
	if want := strings.Count(twice, "\n"); r.Issues[0].Line != want {
		t.Fatalf("line %d, want %d", r.Issues[0].Line, want)
	}
}

// A module holding import() is refused as invalid_input at the line of
// import(), like import, require and eval, and never as the runtime's
// fault.
func TestModuleWithImportCallRefusedAtItsLine(t *testing.T) {
	f := newFixture(t)
	src := source(t, "close-the-month.yaml")
	at := "const output = fieldOf(event.data, 'output');"
	line := strings.Count(src[:strings.Index(src, at)], "\n") + 1
	for _, call := range []string{"void import('./x');", "const m = import('node:fs'); void m;"} {
		bad := strings.Replace(src, at, at+" "+call, 1)
		r := f.refuse("create_definition", saveArgs("workflow", "loads", bad), refusal.InvalidInput, "/source", "import()")
		if r.Issues[0].Line != line || !strings.Contains(r.Issues[0].Message, "import() is refused") {
			t.Fatalf("%s: issues %+v, want line %d", call, r.Issues, line)
		}
	}
}
