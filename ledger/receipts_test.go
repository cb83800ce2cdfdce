package ledger

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"quire/vault"
)

// receiptOfMorning reads morning-social-content's page.receipt.
func receiptOfMorning(t *testing.T, l *Ledger) *Receipt {
	t.Helper()
	res, err := l.Call(context.Background(), "get_definition", json.RawMessage(`{"playbook":"social","type":"workflow","name":"morning-social-content"}`))
	if err != nil {
		t.Fatal(err)
	}
	d := res.(*Definition)
	if d.Page == nil || d.Page.Receipt == nil {
		t.Fatalf("get_definition answers no page.receipt: %+v", d.Page)
	}
	return d.Page.Receipt
}

// verifyMorning calls verify_page on morning-social-content with r (the
// page's own receipt when nil).
func verifyMorning(t *testing.T, l *Ledger, r *Receipt) *Verification {
	t.Helper()
	args := map[string]any{"playbook": "social", "subject": "workflow/morning-social-content"}
	if r != nil {
		args["receipt"] = r
	}
	raw, _ := json.Marshal(args)
	res, err := l.Call(context.Background(), "verify_page", raw)
	if err != nil {
		t.Fatal(err)
	}
	return res.(*Verification)
}

// cloneOf makes a git clone of the vault at dir and opens it.
func cloneOf(t *testing.T, dir string) *Ledger {
	t.Helper()
	to := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "-q", dir, to).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	v, err := vault.Open(to)
	if err != nil {
		t.Fatal(err)
	}
	l := New(v)
	t.Cleanup(func() { l.Close() })
	return l
}

func TestAReceiptMadeByOneVaultVerifiesOnItsClones(t *testing.T) {
	t.Parallel()
	f := morningFixture(t)
	morningRuns(t, f, 12, 2)
	r := receiptOfMorning(t, f.l)
	if r.History.From != 1 || r.History.Through < 12 || r.Commit == "" || !strings.HasPrefix(r.Views, "sha256:") || r.Document.Version != 1 {
		t.Fatalf("receipt %+v", r)
	}
	if v := verifyMorning(t, f.l, nil); v.Verdict != Verified {
		t.Fatalf("the writer's own receipt: %s", v.Message)
	}
	if got := chainAsDocumented(t, f.dir, r.History.Through); got != r.History.Chain {
		t.Errorf("the receipt's chain %s; by docs/vault-format.md's words it is %s", r.History.Chain, got)
	}
	one, two := cloneOf(t, f.dir), cloneOf(t, f.dir)
	if v := verifyMorning(t, one, r); v.Verdict != Verified {
		t.Fatalf("the writer's receipt on a clone: %s", v.Message)
	}
	a, b := receiptOfMorning(t, one), receiptOfMorning(t, two)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	jr, _ := json.Marshal(r)
	if !bytes.Equal(ja, jb) || !bytes.Equal(ja, jr) {
		t.Fatalf("receipts differ:\nwriter %s\nclone  %s\nclone  %s", jr, ja, jb)
	}
}

func TestVerifyNamesTheEventEditedByHandAndCommitted(t *testing.T) {
	t.Parallel()
	f := morningFixture(t)
	runs := morningRuns(t, f, 12, 0)
	r := receiptOfMorning(t, f.l)
	// The third run's end, its LinkedIn post made a Mastodon one (as long:
	// no offset moves), committed by hand.
	folders, _ := filepath.Glob(filepath.Join(f.dir, "playbook-runs", "*"+runs[3]+"*", "run.jsonl"))
	if len(folders) != 1 {
		t.Fatalf("run.jsonl of %s: %v", runs[3], folders)
	}
	data, err := os.ReadFile(folders[0])
	if err != nil {
		t.Fatal(err)
	}
	edited := bytes.Replace(data, []byte(`"channel":"LinkedIn"`), []byte(`"channel":"Mastodon"`), 1)
	if bytes.Equal(edited, data) {
		t.Fatalf("no LinkedIn post in %s", data)
	}
	if err := os.WriteFile(folders[0], edited, 0o644); err != nil {
		t.Fatal(err)
	}
	f.git("commit", "-qam", "a post's channel, mended by hand")

	v := verifyMorning(t, cloneOf(t, f.dir), r)
	d := v.Difference
	if v.Verdict != Differs || d == nil {
		t.Fatalf("verify: %s %s", v.Verdict, v.Message)
	}
	if !strings.HasPrefix(d.Record, runs[3]+"_") || d.View != "by_channel" || !strings.HasPrefix(d.Pointer, "/by_channel/values/") {
		t.Fatalf("difference %+v: %s", d, v.Message)
	}
	if !strings.Contains(v.Message, d.Record) {
		t.Errorf("the message does not name the record: %s", v.Message)
	}
}

func TestVerifyCatchesViewsChangedByHandUnderQuire(t *testing.T) {
	t.Parallel()
	f := morningFixture(t)
	morningRuns(t, f, 10, 0)
	receiptOfMorning(t, f.l)
	f.l.Close()
	kept, _ := filepath.Glob(filepath.Join(f.dir, vault.QuireDir, "views", "social", "views-*.json"))
	if len(kept) != 1 {
		t.Fatalf("kept views: %v", kept)
	}
	data, err := os.ReadFile(kept[0])
	if err != nil {
		t.Fatal(err)
	}
	// As a module other than the document's would have folded them.
	forged := bytes.Replace(data, []byte(`"name":"X","value":`), []byte(`"name":"X","value":9`), 1)
	if bytes.Equal(forged, data) {
		t.Fatalf("no channel X in %s", data)
	}
	if err := os.WriteFile(kept[0], forged, 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := vault.Open(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	l := New(v)
	defer l.Close()
	r := receiptOfMorning(t, l)
	got := verifyMorning(t, l, nil)
	d := got.Difference
	if got.Verdict != Differs || d == nil || d.View != "by_channel" || d.Seq != r.History.Through {
		t.Fatalf("verify: %s %+v", got.Message, d)
	}
	if !strings.HasPrefix(string(d.Receipt), "9") {
		t.Errorf("the receipt's value %s, not the forged one", d.Receipt)
	}

	// A receipt past the replay's reach is out of reach, never verified.
	far := *r
	far.History.Through = 10_001
	if got := verifyMorning(t, l, &far); got.Verdict != VerifyOutReach || !strings.HasPrefix(got.Message, "out of reach: ") {
		t.Fatalf("verify past the reach: %s %s", got.Verdict, got.Message)
	}

	// A receipt naming another module is refused as differing.
	r.Module = "sha256:" + strings.Repeat("0", 64)
	if got := verifyMorning(t, l, r); got.Verdict != Differs || !strings.Contains(got.Message, "module") {
		t.Fatalf("verify: %s", got.Message)
	}
}

// chainAsDocumented computes the chain through record through as another
// program would from docs/vault-format.md: the lines of the playbook's
// event files, ordered by their seq, each hashed after the link before it
// and its length.
func chainAsDocumented(t *testing.T, dir string, through int64) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "playbook-runs", "*", "run.jsonl"))
	files = append(files, filepath.Join(dir, "playbooks", "social", "events.jsonl"))
	bySeq := map[int64][]byte{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
			var l struct{ Seq int64 }
			if json.Unmarshal(line, &l) != nil || l.Seq == 0 {
				t.Fatalf("%s: a line without a seq: %s", file, line)
			}
			bySeq[l.Seq] = line
		}
	}
	seqs := make([]int64, 0, len(bySeq))
	for s := range bySeq {
		seqs = append(seqs, s)
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	link := make([]byte, 32)
	for _, s := range seqs[:through] {
		h := sha256.New()
		h.Write(link)
		binary.Write(h, binary.BigEndian, uint64(len(bySeq[s])))
		h.Write(bySeq[s])
		link = h.Sum(nil)
	}
	return "sha256:" + hex.EncodeToString(link)
}

// TestCheckViewsVerifiesEveryExamplePage: quire check --views over the
// demo's three example workflows (testdata/vault), each with runs, and a
// page of the playbook's own.
func TestCheckViewsVerifiesEveryExamplePage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.call("create_playbook", `{"playbook":"operations","name":"Operations"}`)
	// The playbook's own page counts the runs that succeeded.
	pg := "data:\n  language: typescript\n  source:\n    events:\n      - type: run_succeeded\n  views:\n    ended: categories\n  module: |\n" +
		"    export function fold(view: View, event: Event): View {\n      const n = (view.ended?.values[0]?.value ?? 0) + 1;\n" +
		"      return { ended: { unit: 'runs', values: [{ name: 'succeeded', value: n }] } };\n    }\nruns: |\n  {{ views.ended | json }}\n"
	pargs, _ := json.Marshal(map[string]any{"playbook": "operations", "page": pg})
	f.call("update_playbook", string(pargs))
	outputs := map[string][]string{
		"close-the-month":        {`{"month":"2026-10","revenue":182450}`, `{"month":"2026-11","revenue":99000.5}`},
		"morning-social-content": {`{"date":"2026-11-01","posts":[{"channel":"X","title":"One","url":"https://example.com/1"}]}`},
		"fulfill-order":          {`{"order":"A-1041","channel":"Web","total":86.5}`, `{"order":"A-1042","channel":"Shop","total":12}`},
	}
	for name, outs := range outputs {
		doc, err := os.ReadFile(filepath.Join("..", "testdata", "vault", name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		args, _ := json.Marshal(map[string]string{"playbook": "operations", "type": "workflow", "name": name, "source": string(doc)})
		f.call("create_definition", string(args))
		for _, out := range outs {
			r := f.call("run_definition", fmt.Sprintf(`{"playbook":"operations","type":"workflow","name":%q,"member_of":[%q],"executor":"agent-7","authorized_by":"ana"}`, name, f.project)).(*Run)
			f.call("end_run", fmt.Sprintf(`{"playbook":"operations","run_id":%q,"status":"succeeded","output":%s,"actor":"agent-7"}`, r.RunID, out))
		}
	}
	rep, err := f.l.CheckWith(CheckArgs{Views: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, v := range rep.Views {
		if v.Playbook == "operations" {
			got[v.Subject] = v.Verdict
		}
		if v.Verdict != Verified {
			t.Errorf("%s %s: %s", v.Playbook, v.Subject, v.Message)
		}
	}
	if len(got) != len(outputs)+1 || got["playbook"] != Verified || len(rep.Problems) > 0 {
		t.Errorf("check --views: %v, problems %v", got, rep.Problems)
	}
}
