package vault

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// A lookup by a process that has not read the index (the scan of its
// bytes) answers what reading every line answers, whatever the lines'
// form: as quire writes them, with spaces or keys in another order (by
// hand), a uid that appears inside another line's value, a torn last line.
func TestLookupScanAnswersWhatTheWholeIndexAnswers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "00-index.jsonl")
	lines := `{"uid":"a1","type":"project","path":"projects/a.md"}
{"uid":"b2","type":"playbook-run","path":"playbook-runs/close-b2-2026-11-01","playbook":"finance","name":"close","definition_type":"workflow"}
{ "uid": "c3", "type": "comment", "path": "org/comments/c3.md" }
{"type":"definition","uid":"d4","path":"playbooks/finance/definitions/workflow/x.yaml"}
{"uid":"e5","type":"project","path":"projects/{\"uid\":\"b2\"}.md","name":"{\"uid\":\"b2\"}"}
{"uid":"f6","type":"project","path":"projects/f.md"}
{"uid":"g7","type":"project","path":"projects/g-torn.md"`
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, uid := range []string{"a1", "b2", "c3", "d4", "e5", "f6", "g7", "zz", "b", ""} {
		whole := &registry{path: path}
		if err := whole.refresh(); err != nil {
			t.Fatal(err)
		}
		i, wantOK := whole.byUID[uid]
		v := &Vault{reg: &registry{path: path}}
		got, ok, err := v.Lookup(uid)
		if err != nil || ok != wantOK || ok && got != whole.entries[i] {
			t.Errorf("Lookup(%q) = %+v %v %v; the whole index says %v %+v", uid, got, ok, err, wantOK, whole.entries[max(i, 0)])
		}
		e, scanned, _ := (&registry{path: path}).scan(uid)
		if scanned && e != whole.entries[i] {
			t.Errorf("scan(%q) = %+v, the whole index %+v", uid, e, whole.entries[i])
		}
		if uid == "b2" && !scanned {
			t.Error("scan did not find a line as quire writes it")
		}
	}
}

// FindType answers what filtering every decoded line by its type answers,
// whatever the lines' form.
func TestFindTypeAnswersWhatTheWholeIndexAnswers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "00-index.jsonl")
	lines := `{"uid":"a1","type":"project","path":"projects/a.md"}
{"uid":"b2","type":"playbook-run","path":"playbook-runs/close-b2-2026-11-01","playbook":"finance"}
{ "uid": "c3", "type": "definition", "path": "x" }
{"uid":"d4","type":"playbook-run","type":"definition","path":"dup"}
{"uid":"e5","type":"definitions","path":"near"}
{"uid":"f6","name":"{\"type\":\"definition\"}","type":"playbook-run","path":"in a value"}
{"uid":"g7","type":"definition","path":"playbooks/finance/definitions/workflow/x.yaml","playbook":"finance"}

{"uid":"h8","type":"definition","path":"torn"`
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"definition", "project", "playbook-run", "comment"} {
		whole := &Vault{reg: &registry{path: path}}
		want, err := whole.Find(func(e *Entry) bool { return e.Type == typ })
		if err != nil {
			t.Fatal(err)
		}
		got, err := (&Vault{reg: &registry{path: path}}).FindType(typ, func(*Entry) bool { return true })
		if err != nil || len(got) != len(want) {
			t.Fatalf("FindType(%s) = %+v %v; the whole index: %+v", typ, got, err, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("FindType(%s)[%d] = %+v, want %+v", typ, i, got[i], want[i])
			}
		}
	}
}

// A process that has read the index (a warm server, the resident engine)
// reads only what is appended after; an index replaced by another file (git
// checking out or merging another version writes a new file in its place)
// is read again whole, even when it is no shorter, and a line cut is
// forgotten.
func TestWarmIndexReadsAReplacedFileAgain(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "00-index.jsonl")
	a := `{"uid":"a1","type":"project","path":"projects/a.md","created":"2026-01-02T00:00:00.000Z"}` + "\n"
	b := `{"uid":"b2","type":"project","path":"projects/b.md","created":"2026-01-01T00:00:00.000Z"}` + "\n"
	if err := os.WriteFile(path, []byte(a), 0o644); err != nil {
		t.Fatal(err)
	}
	v := &Vault{reg: &registry{path: path}}
	if es, err := v.Entries(); err != nil || len(es) != 1 {
		t.Fatalf("entries: %+v %v", es, err)
	}
	// Another version in its place: b's line first, then a's.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b+a), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	es, err := v.Entries()
	if err != nil || len(es) != 2 || es[0].UID != "b2" || es[1].UID != "a1" {
		t.Fatalf("after the file was replaced: %+v %v", es, err)
	}
	if e, ok, err := v.Lookup("b2"); err != nil || !ok || e.Path != "projects/b.md" {
		t.Fatalf("Lookup(b2) = %+v %v %v", e, ok, err)
	}
}

// The index is appended to at several homes and met by git's union merge,
// which may put either side's lines first: in any order of its lines, read
// whole or as they are appended (a warm process), the index reads the
// same, ordered by when each thing was made, then by uid, and FindType's
// scan of a cold process answers the same order.
func TestTheIndexReadsTheSameInAnyOrderOfItsLines(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var lines []string
	uids := rng.Perm(1000)
	for i := range 40 {
		// Times repeat, so that the uid decides between some.
		created := fmt.Sprintf("2026-12-01T10:00:%02d.000Z", rng.Intn(15))
		lines = append(lines, fmt.Sprintf(`{"uid":"u%03d","type":"project","path":"projects/p%d.md","created":%q}`, uids[i], i, created)+"\n")
	}
	read := func(order []string, warm bool) []Entry {
		dir := t.TempDir()
		path := filepath.Join(dir, "00-index.jsonl")
		os.WriteFile(path, nil, 0o644)
		v := &Vault{reg: &registry{path: path}}
		for i, l := range order {
			fh, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			fh.WriteString(l)
			fh.Close()
			if warm && i%3 == 0 {
				if _, err := v.Entries(); err != nil {
					t.Fatal(err)
				}
			}
		}
		es, err := v.Entries()
		if err != nil {
			t.Fatal(err)
		}
		cold := &Vault{reg: &registry{path: path}}
		scanned, err := cold.FindType("project", func(*Entry) bool { return true })
		if err != nil || !reflect.DeepEqual(scanned, es) {
			t.Fatalf("FindType of a cold process: %v %v\nEntries: %v", scanned, err, es)
		}
		return es
	}
	want := read(lines, false)
	for i := 1; i < len(want); i++ {
		if !Less(&want[i-1], &want[i]) {
			t.Fatalf("entries %d and %d out of order: %+v %+v", i-1, i, want[i-1], want[i])
		}
	}
	for round := range 20 {
		order := append([]string(nil), lines...)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		if got := read(order, round%2 == 0); !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: %v\nwant %v", round, got, want)
		}
	}
}

// TestSharedLinesStayAsTheyWere: a slice of the index handed out by
// Shared is not changed by what the registry takes after it: lines
// appended, and a line out of order that sorts them all again.
func TestSharedLinesStayAsTheyWere(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "00-index.jsonl")
	write := func(lines string) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		f.WriteString(lines)
	}
	write(`{"uid":"b","type":"project","path":"b","created":"2026-11-02T00:00:00.000Z"}
{"uid":"c","type":"project","path":"c","created":"2026-11-03T00:00:00.000Z"}
`)
	v := &Vault{reg: &registry{path: path}}
	shared, err := v.Shared()
	if err != nil {
		t.Fatal(err)
	}
	was := slices.Clone(shared)
	write(`{"uid":"d","type":"project","path":"d","created":"2026-11-04T00:00:00.000Z"}
`)
	shared2, err := v.Shared()
	if err != nil {
		t.Fatal(err)
	}
	was2 := slices.Clone(shared2)
	write(`{"uid":"a","type":"project","path":"a","created":"2026-11-01T00:00:00.000Z"}
`)
	now, err := v.Entries()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(shared, was) || !slices.Equal(shared2, was2) {
		t.Fatalf("the shared lines changed: %+v and %+v, were %+v and %+v", shared, shared2, was, was2)
	}
	var uids []string
	for _, e := range now {
		uids = append(uids, e.UID)
	}
	if strings.Join(uids, " ") != "a b c d" {
		t.Fatalf("the index reads %v", uids)
	}
}
