package ledger

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"quire/words/refusal"
)

// Every document with front matter goes through package front: a key
// written twice is refused at the line of its second writing, through the
// operation that reads that kind of document.
func TestFrontMatterDuplicateKeyRefusedAtItsLine(t *testing.T) {
	f := newFixture(t)
	twice := func(err error, line string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), line+`: The key "`) || !strings.Contains(err.Error(), "written twice") {
			t.Errorf("want the key written twice refused at %s, got %v", line, err)
		}
	}
	call := func(op, args string) error {
		_, err := f.l.Call(context.Background(), op, json.RawMessage(args))
		return err
	}

	// A function's document, saved: at its line, in the document. An
	// indented --- (a row's cell separator in a template) does not close
	// the front matter.
	for src, want := range map[string]int{
		"---\nmodel: x\ndescription: d\nmodel: y\n---\nJudge it.\n":                              4,
		"---\r\nmodel: x\r\noutput:\r\n  shape: text\r\n  shape: series\r\n---\r\nJudge it.\r\n": 5,
		"---\nmodel: x\nnotes: |\n  a\n  ---\n  b\nmodel: y\n---\nJudge it.\n":                   7,
	} {
		r := f.refuse("create_definition", `{"playbook":"finance","type":"reasoning","name":"judge","source":`+jsonString(src)+`}`, refusal.InvalidInput, "/source", "")
		if r.Issues[0].Line != want || !strings.Contains(r.Issues[0].Message, "written twice") {
			t.Errorf("%q: issues %+v, want the key written twice at line %d", src, r.Issues, want)
		}
	}
	// Closing and not closing still say so.
	r := f.refuse("create_definition", `{"playbook":"finance","type":"reasoning","name":"judge","source":"---\nmodel: x\n"}`, refusal.InvalidInput, "/source", "")
	if r.Issues[0].Line != 1 || !strings.Contains(r.Issues[0].Message, "not closed") {
		t.Errorf("never closed: %+v", r.Issues)
	}

	// A run's definition.md, written by hand: quire check names its line.
	run := f.start()
	def := filepath.Join(f.dir, run.Path, "definition.md")
	data, err := os.ReadFile(def)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	// Line 3 repeats line 2's key (uid).
	hand := strings.Join(append([]string{lines[0], lines[1], lines[1]}, lines[2:]...), "\n")
	if err := os.WriteFile(def, []byte(hand), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := f.call("check_vault", `{}`).(*CheckReport)
	found := false
	for _, p := range rep.Problems {
		if strings.HasSuffix(p.Path, "definition.md") && p.Line == 3 && strings.Contains(p.Message, `"uid" is written twice`) {
			found = true
		}
	}
	if !found {
		t.Errorf("check_vault: %+v, want definition.md's uid written twice at line 3", rep.Problems)
	}

	// A comment, written by hand.
	c := f.call("make_comment", `{"playbook":"finance","address":"finance/runs/`+run.RunID+`","text":"Look.","author":"ana"}`).(*Comment)
	cf := filepath.Join(f.dir, "playbooks", "finance", "comments", c.ID+".md")
	data, err = os.ReadFile(cf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cf, []byte(strings.Replace(string(data), "---\n", "---\nauthor: ana\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	twice(call("list_comments", `{"playbook":"finance"}`), "line 5")

	// A playbook's playbook.md, written by hand.
	pb := filepath.Join(f.dir, "playbooks", "finance", "playbook.md")
	data, err = os.ReadFile(pb)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pb, []byte(strings.Replace(string(data), "---\n", "---\nname: One\nname: Two\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	twice(call("get_playbook", `{"playbook":"finance"}`), "line 3")
}
