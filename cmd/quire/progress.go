package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"quire/fold"
)

// One way of saying how long work goes, for every command that does some:
// a page's views being folded, reindex, check --history, janitor. It
// prints on standard error (standard output keeps the answer, JSON alone
// with --json), only when standard error is a terminal, and only once the
// work has taken more than a second; then about once a second, and once
// more when it is done: how many of how many, how many a second, and
// about how long is left.

// isTerminal says whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// meter is the progress of one piece of work.
type meter struct {
	w     io.Writer
	now   func() time.Time
	start time.Time
	last  time.Time
}

func newMeter(w io.Writer, now func() time.Time) *meter {
	return &meter{w: w, now: now, start: now()}
}

// report prints "quire: what: done of total unit, rate unit/s, about T
// left" when it is time to. The rate is of the units done since from (the
// work may begin part way, as a fold from its checkpoint); elapsed is the
// work's own measure of its time (0: since the meter began).
func (m *meter) report(what string, done, total, from int64, unit string, elapsed time.Duration, finished bool) {
	now := m.now()
	if elapsed == 0 {
		elapsed = now.Sub(m.start)
	}
	if elapsed < time.Second || (!finished && now.Sub(m.last) < time.Second) {
		return
	}
	m.last = now
	rate := float64(done-from) / elapsed.Seconds()
	line := fmt.Sprintf("quire: %s: %s of %s %s, %s %s/s", what, thousands(done), thousands(total), unit, thousands(int64(rate)), unit)
	if !finished && rate > 0 && total > done {
		left := time.Duration(float64(total-done) / rate * float64(time.Second)).Round(time.Second)
		line += fmt.Sprintf(", about %s left", left)
	}
	fmt.Fprintln(m.w, line)
}

// catchUpProgress reports how a read folds what is new for a page's views:
// the events read of the history's.
func catchUpProgress(w io.Writer, now func() time.Time) func(string, fold.Progress) {
	meters := map[string]*meter{}
	return func(playbook string, p fold.Progress) {
		key := playbook + "\x00" + p.ID
		m := meters[key]
		if m == nil {
			m = newMeter(w, now)
			meters[key] = m
		}
		verb := "folding"
		if p.Done {
			verb = "folded"
		}
		m.report(fmt.Sprintf("%s the history of %s for the views of %s", verb, playbook, p.ID), p.Through, p.Newest, p.From, "events", p.Elapsed, p.Done)
	}
}

// taskProgress reports the ledger's long work (OnProgress): reindex,
// check --history, janitor.
func taskProgress(w io.Writer, now func() time.Time) func(task, unit string, done, total int) {
	meters := map[string]*meter{}
	return func(task, unit string, done, total int) {
		m := meters[task]
		if m == nil {
			m = newMeter(w, now)
			meters[task] = m
		}
		m.report(task, int64(done), int64(total), 0, unit, 0, done >= total)
	}
}
