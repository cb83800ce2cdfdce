package checker

import (
	"reflect"
	"testing"
	"time"

	"quire/ledger/history"
)

// sampleRecord is a record as a check of two runs and a file beside them
// writes it.
func sampleRecord() *checkRecord {
	st := func(size, t int64, mode uint32) stamp {
		return stamp{Size: size, MTime: t, CTime: t + 3, Ino: uint64(t % 1000), Mode: mode}
	}
	run := func(name string, t int64) *runRecord {
		return &runRecord{
			Name: name, Playbook: "01a24aa9-685d-7892-afb4-d29d28f42e81", Binding: "playbooks/finance/workflows/close.md",
			Events: 3, Seqs: []int64{4, 9}, Unnumbered: 1,
			Entries: []entry{{Name: "", S: st(4096, t, 0o40755)}, {Name: "artifacts", S: st(4096, t+1, 0o40755)}, {Name: "artifacts/.gitkeep", S: stamp{Mode: 0o100644}},
				{Name: "run.jsonl", S: st(812, t+2, 0o100644)}, {Name: "thread.md", S: st(40, t+2, 0o100644)}},
		}
	}
	r := &checkRecord{
		At: time.Unix(0, 1765000000123456789), IndexSize: 1234, Head: "0123456789abcdef0123456789abcdef01234567",
		Others:  []entry{{Name: "playbook-runs/NOTES.md", S: st(12, 1765000000000000001, 0o100644)}, {Name: "vault/00-index.jsonl", S: st(1234, 1765000000000000002, 0o100644)}},
		Git:     []entry{{Name: "HEAD", S: st(21, 1765000000000000003, 0o100644)}},
		RunsDir: st(4096, 1765000000000000004, 0o40755),
		Token:   "c:1796614981:14965:1:2461",
		Runs:    []*runRecord{run("close-a", 1765000000000000005), run("close-b", 1765000000000000006)},
		Events:  7, Warnings: []Problem{{Path: "playbook-runs/close-a", Message: "an old run"}},
		Histories: map[string]history.Mark{"01a24aa9-685d-7892-afb4-d29d28f42e81": {Records: 7, FilesSize: 99}},
	}
	r.IndexSum[0], r.IndexDigest[31] = 1, 2
	r.Runs[1].Warnings = []Problem{{Path: "playbook-runs/close-b", Line: 2, Message: "a warning"}}
	return r
}

// A record reads back as written, its runs encoded beside the rest or
// not, and the names of playbook-runs/ it saw are its runs' and what
// stood beside them, in order.
func TestARecordReadsBackAsWritten(t *testing.T) {
	r := sampleRecord()
	data := encodeRecord(r, nil)
	if beside := encodeRecord(r, encodeRuns(r.Runs)); string(beside) != string(data) {
		t.Fatal("the runs encoded on their own make another record")
	}
	got, err := decodeRecord(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Fatalf("read back:\n%+v\nwant:\n%+v", got, r)
	}
	if names := got.runsDirNames(); !reflect.DeepEqual(names, []string{"NOTES.md", "close-a", "close-b"}) {
		t.Fatalf("names of playbook-runs/: %q", names)
	}
	for n := range data {
		if _, err := decodeRecord(data[:n]); err == nil {
			t.Fatalf("a record cut at byte %d of %d read", n, len(data))
		}
	}
}

// Whatever the record's bytes (it is a file anybody may write), reading
// it answers a record or refuses it, never panics, and a record read
// writes and reads back the same.
func FuzzDecodeRecord(f *testing.F) {
	f.Add(encodeRecord(sampleRecord(), nil))
	f.Add([]byte(recordMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := decodeRecord(data)
		if err != nil {
			return
		}
		again, err := decodeRecord(encodeRecord(r, nil))
		if err != nil {
			t.Fatalf("a record read does not read back: %v", err)
		}
		if !reflect.DeepEqual(again, r) {
			t.Fatalf("read back:\n%+v\nwant:\n%+v", again, r)
		}
	})
}
