package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// TestReadersBesideWriters reads a playbook's history the way a serving
// keeper does (History, HistoryLen) while writers in the same process start
// runs and record events: each new run adds a file to the history, which
// the readers' refresh and the writers' reserve both touch. Under go test
// -race it failed with a race on the history's file map (quire serve died
// of "concurrent map writes"); the pages read must also be whole and in
// order.
func TestReadersBesideWriters(t *testing.T) {
	f := newFixture(t)
	runs, events := 3, 2
	if os.Getenv("QUIRE_TEST_LONG") != "" {
		runs, events = 20, 10
	}
	var writers sync.WaitGroup
	stop := make(chan struct{})
	for w := range 2 {
		writers.Go(func() {
			for i := range runs {
				res, err := f.l.Call(context.Background(), "run_definition", json.RawMessage(fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"close-the-month","member_of":[%q],"executor":"agent-%d","authorized_by":"ana"}`, f.project, w)))
				if err != nil {
					t.Error(err)
					return
				}
				for range events {
					if _, err := f.l.Call(context.Background(), "record_event", json.RawMessage(fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"milestone_fired","actor":"agent-%d","detail":"%d"}`, res.(*Run).RunID, w, i))); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(time.Millisecond):
				}
				n, err := f.l.HistoryLen("finance")
				if err != nil {
					t.Error(err)
					return
				}
				recs, err := f.l.History("finance", 0, int(n)+10)
				if err != nil {
					t.Error(err)
					return
				}
				for i, r := range recs {
					if r.Seq != int64(i+1) {
						t.Errorf("record %d has seq %d", i, r.Seq)
						return
					}
				}
			}
		})
	}
	writers.Wait()
	close(stop)
	readers.Wait()
	n, err := f.l.HistoryLen("finance")
	if err != nil {
		t.Fatal(err)
	}
	// Each run is its run.started and its events.
	if want := int64(2 * runs * (1 + events)); n < want {
		t.Fatalf("history holds %d events, want at least %d", n, want)
	}
}
