package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"quire/runfolder"
	"quire/words/refusal"
)

// Each JSON value an operation takes is held to 512 levels, valid UTF-8
// and finite doubles, and refused at the place that breaks it.
func TestDataLimitsRefusedAtTheirPath(t *testing.T) {
	f := newFixture(t)
	r := f.start()
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	rec := func(data string) string {
		return fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"milestone_fired","actor":"agent-7","data":%s}`, r.RunID, data)
	}
	// 512 levels are taken: the object and 511 lists.
	f.call("record_event", rec(`{"a":`+deep(511)+`}`))
	f.refuse("record_event", rec(`{"a":`+deep(512)+`}`), refusal.InvalidInput, "/data", "more than 512 levels")
	f.refuse("record_event", rec(`{"n":[1,1e400]}`), refusal.InvalidInput, "/data/n/1", "1e400 is not a finite double")
	f.refuse("record_event", rec(`{"n":-1e999}`), refusal.InvalidInput, "/data/n", "not a finite double")
	f.refuse("record_event", rec("{\"t\":{\"a/b\":\"ok \xff\"}}"), refusal.InvalidInput, "/data/t/a~1b", "not valid UTF-8")
	f.refuse("record_event", rec("{\"k\xc3\":1}"), refusal.InvalidInput, "/data", "not valid UTF-8")
	f.refuse("record_event", rec(`{"s":"\ud800 alone"}`), refusal.InvalidInput, "/data/s", "lone surrogate")
	f.call("record_event", rec(`{"s":"\ud83d\ude00 \u00e9 é","n":1.7976931348623157e308}`))
	// The same limits on every operation's JSON values.
	f.refuse("end_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"status":"succeeded","actor":"agent-7","output":{"x":1e400}}`, r.RunID), refusal.InvalidInput, "/output/x", "finite")
	f.refuse("run_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"close-the-month","member_of":[%q],"executor":"agent-7","authorized_by":"ana","input":%s}`, f.project, deep(513)), refusal.InvalidInput, "/input", "512 levels")
	// Nothing refused was written.
	if b, err := os.ReadFile(filepath.Join(f.dir, r.Path, runfolder.LogFile)); err != nil || strings.Contains(string(b), "1e400") || strings.Contains(string(b), "alone") {
		t.Fatalf("a refused event was written: %s", b)
	}
}

// append_thread takes at most 64 KiB a call, and a thread holds at most
// 16 MiB.
func TestThreadLimits(t *testing.T) {
	f := newFixture(t)
	r := f.start()
	app := func(text string) string {
		b, _ := json.Marshal(map[string]string{"playbook": "finance", "run_id": r.RunID, "actor": "agent-7", "text": text})
		return string(b)
	}
	f.call("append_thread", app(strings.Repeat("a", 64<<10)))
	f.refuse("append_thread", app(strings.Repeat("a", 64<<10+1)), refusal.InvalidInput, "/text", "at most 64 KiB")
	thread := filepath.Join(f.dir, r.Path, runfolder.ThreadFile)
	if os.Getenv("QUIRE_TEST_LONG") != "" {
		// Through the operation alone, up to the bound.
		for {
			_, err := f.l.Call(context.Background(), "append_thread", json.RawMessage(app(strings.Repeat("b", 64<<10-200))))
			if err != nil {
				if rf, ok := refusal.As(err); !ok || !strings.Contains(rf.Message, "at most 16 MiB") {
					t.Fatal(err)
				}
				break
			}
		}
	} else {
		// A thread grown (by hand) to just under the bound.
		fh, err := os.OpenFile(thread, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := fh.Stat()
		if _, err := fh.Write([]byte(strings.Repeat("c\n", int(16<<20-fi.Size()-1000)/2))); err != nil {
			t.Fatal(err)
		}
		fh.Close()
		f.call("append_thread", app("fits"))
		f.refuse("append_thread", app(strings.Repeat("d", 1000)), refusal.InvalidInput, "/text", "at most 16 MiB")
	}
	if fi, err := os.Stat(thread); err != nil || fi.Size() > 16<<20 {
		t.Fatalf("thread.md: %v, %d bytes", err, fi.Size())
	}
}
