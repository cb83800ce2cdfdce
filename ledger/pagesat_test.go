package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"quire/vault"
	"quire/words/refusal"
)

// renderAt renders close-the-month's page as of a commit, the clock set to
// day, and answers render_page's answer as JSON.
func renderAt(t *testing.T, l *Ledger, at string, day time.Time) []byte {
	t.Helper()
	l.Now = func() time.Time { return day }
	res, err := l.Call(context.Background(), "render_page", json.RawMessage(fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"close-the-month","at":%q}`, at)))
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A page rendered as of a commit is the commit's: its document, the history
// its files hold and its committer time for now and today. Two clones give
// it byte for byte on different days, and the views kept for the commit
// give it again.
func TestPageAtACommitIsTheSameOnEveryCloneAndDay(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	src := strings.Replace(source(t, "close-the-month.yaml"), "  runs: |\n", "  runs: |\n    As of {{ now }} ({{ today }}):\n", 1)
	f.call("update_definition", saveArgs("workflow", "close-the-month", src))
	f.runAt("close-the-month", "2026-10-01", `{"month":"2026-09","revenue":100}`)
	at := strings.TrimSpace(f.git("rev-parse", "HEAD"))
	committed := strings.TrimSpace(f.git("log", "-1", "--format=%cd", "--date=format-local:%Y-%m-%d"))
	f.runAt("close-the-month", "2026-11-02", `{"month":"2026-10","revenue":182450}`)

	here := renderAt(t, f.l, at, time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC))
	dir := t.TempDir()
	if out, err := exec.Command("git", "clone", "--quiet", f.dir, dir).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	v, err := vault.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	clone := New(v)
	defer clone.Close()
	there := renderAt(t, clone, at, time.Date(2027, 3, 15, 20, 0, 0, 0, time.UTC))
	if !bytes.Equal(here, there) {
		t.Fatalf("two clones render the commit apart:\n%s\n%s", here, there)
	}
	if again := renderAt(t, f.l, at[:10], time.Date(2027, 6, 1, 0, 0, 0, 0, time.UTC)); !bytes.Equal(again, here) {
		t.Fatalf("the views kept for the commit render it apart:\n%s\n%s", again, here)
	}

	var d Definition
	if err := json.Unmarshal(here, &d); err != nil {
		t.Fatal(err)
	}
	runs := d.Page.Runs
	if !strings.Contains(runs, `"at":"2026-09"`) || strings.Contains(runs, `"at":"2026-10"`) || !strings.Contains(runs, "("+committed+")") {
		t.Fatalf("page.runs as of %s (committed %s):\n%s", at, committed, runs)
	}
	if d.Page.Standing == nil || d.Page.Standing.Commit != at || d.Page.Standing.State != "live" {
		t.Fatalf("page.standing %+v, want live at %s", d.Page.Standing, at)
	}
	if !strings.Contains(d.Page.Result, "2026-09 closed with $100") {
		t.Fatalf("page.result as of the commit: %q", d.Page.Result)
	}
	live := f.call("render_page", `{"playbook":"finance","type":"workflow","name":"close-the-month"}`).(*Definition)
	if !strings.Contains(live.Page.Runs, `"at":"2026-10"`) {
		t.Fatalf("the live page lost a month:\n%s", live.Page.Runs)
	}
}

// at that names no commit, or a commit that lacks the definition, is
// refused at /at; at goes with neither run_id nor sample_output.
func TestPageAtRefusesWhatTheCommitLacks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	first := strings.TrimSpace(f.git("rev-list", "--max-parents=0", "HEAD"))
	args := func(at string) string {
		return fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"close-the-month","at":%q}`, at)
	}
	f.refuse("render_page", args("0123456789abcdef0123456789abcdef01234567"), refusal.NotFound, "/at", "at: ")
	f.refuse("render_page", args("no-such-branch"), refusal.NotFound, "/at", "at: ")
	f.refuse("render_page", args(first), refusal.NotFound, "/at", `holds no workflow "close-the-month"`)
	f.refuse("render_page", `{"playbook":"finance","type":"workflow","name":"close-the-month","at":"HEAD","run_id":"x"}`, refusal.InvalidInput, "/at", "does not go with run_id")
}
