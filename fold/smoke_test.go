package fold

import (
	"testing"
	"time"
)

func TestSmoke(t *testing.T) {
	p := newTestPool(t, Limits{})
	prog := jsProgram(`export function fold(view, event) { return { n: { text: String((view.n ? Number(view.n.text) : 0) + 1) + ' ' + new Date().toISOString() } } }`, map[string]string{"n": "text"})
	at := time.Date(2026, 10, 30, 9, 0, 0, 0, time.UTC)
	r := foldAll(t, p, prog, []Event{event(1, at, `{}`), event(2, at.Add(time.Hour), `{}`)})
	t.Logf("%s %d %+v", r.Views, r.Folded, r.Stall)
}
