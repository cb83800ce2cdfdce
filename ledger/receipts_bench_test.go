package ledger

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"quire/ledger/history"
	"quire/vault"
)

// BenchmarkReceiptMorning: issue 29's speed, measured side by side in each
// round over one history (morning-social-content, runs of 30 step
// records each, some 2,000 records; the rounds' mean): the views rebuilt from nothing; what
// keeping a receipt adds to that (the chain's links over every record's
// bytes, as the keeper's reads extend it, and the views' canonical digest),
// target under 5 %; and verify_page, which folds them again from nothing
// with a program made anew, target at the rebuild's own rate (at most
// 1.25 times its time).
func BenchmarkReceiptMorning(b *testing.B) {
	f := morningFixture(b)
	morningRuns(b, f, 2000, 30)
	f.l.Close()
	recs := func() []Record {
		l := openBench(b, f.dir)
		defer l.Close()
		recs, err := l.historyRecords("social", mustLen(b, l))
		if err != nil {
			b.Fatal(err)
		}
		return recs
	}()
	var rebuild, receipt, verify time.Duration
	b.ResetTimer()
	for range b.N {
		os.RemoveAll(filepath.Join(f.dir, vault.QuireDir, "views"))
		l := openBench(b, f.dir)
		s, err := l.subjectOf("social", "workflow", "morning-social-content")
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		views, st, err := l.viewsOf(context.Background(), s)
		rebuild += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}

		start = time.Now()
		var link [history.ChainSize]byte
		for i := range recs {
			link = history.Link(link, recs[i].Raw)
		}
		r, err := l.receiptOf(s, views, st)
		receipt += time.Since(start)
		if err != nil || r == nil || r.History.Chain != history.ChainString(link) {
			b.Fatalf("receipt %+v (%v), chain %s", r, err, history.ChainString(link))
		}

		start = time.Now()
		v, err := l.verify(context.Background(), s, r)
		verify += time.Since(start)
		if err != nil || v.Verdict != Verified {
			b.Fatalf("verify: %v %+v", err, v)
		}
		l.Close()
	}
	n := float64(b.N)
	b.ReportMetric(float64(len(recs)), "records")
	b.ReportMetric(float64(rebuild.Milliseconds())/n, "rebuild-ms")
	b.ReportMetric(float64(receipt.Microseconds())/1000/n, "receipt-ms")
	b.ReportMetric(100*float64(receipt)/float64(rebuild), "receipt-pct")
	b.ReportMetric(float64(verify.Milliseconds())/n, "verify-ms")
	b.ReportMetric(float64(verify)/float64(rebuild), "verify-per-rebuild")
}

func openBench(b *testing.B, dir string) *Ledger {
	b.Helper()
	v, err := vault.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	return New(v)
}

func mustLen(b *testing.B, l *Ledger) int64 {
	b.Helper()
	n, err := l.HistoryLen("social")
	if err != nil {
		b.Fatal(err)
	}
	return n
}
