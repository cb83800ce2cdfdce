package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire/vault"
)

// A warm ledger (a `quire mcp` or `quire serve`) keeps what it read of the
// index of things and of each history's list of files, and reads again
// only what was added (fsys.Grown). Whatever else changes the files beside
// it (another process appending, git committing, resetting or checking
// out, a torn line, a line cut by hand, the index rewritten to the same
// size), every answer of a warm ledger is the answer of a ledger opened
// fresh on the same files.
func TestWarmLedgerAnswersWhatAFreshOneAnswers(t *testing.T) {
	steps := 45
	if os.Getenv("QUIRE_TEST_LONG") != "" {
		steps = 300
	}
	for _, seed := range []int64{1, 2} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { warmAgainstFresh(t, seed, steps) })
	}
}

func warmAgainstFresh(t *testing.T, seed int64, steps int) {
	f := newFixture(t)
	other, err := Open(f.dir) // another process on the same vault
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	f.git("config", "user.name", "A person")
	f.git("config", "user.email", "person@example.com")
	base := strings.Count(f.git("log", "--oneline"), "\n")
	rng := rand.New(rand.NewSource(seed))
	ids := map[string]bool{} // every run ever made, live or taken back
	call := func(l *Ledger, op, args string) (string, error) {
		res, err := l.Call(context.Background(), op, json.RawMessage(args))
		if err != nil {
			return "", err
		}
		b, _ := json.Marshal(res)
		return string(b), nil
	}
	index := f.l.v.Abs(vault.IndexFile)
	start := func(l *Ledger) {
		res, err := call(l, "run_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"close-the-month","member_of":[%q],"executor":"agent-7","authorized_by":"ana"}`, f.project))
		if err != nil {
			t.Fatalf("run_definition: %v", err)
		}
		var r Run
		json.Unmarshal([]byte(res), &r)
		ids[r.RunID] = true
	}
	live := func() []string {
		var out []string
		for id := range ids {
			out = append(out, id)
		}
		// Map order is random: sort for the seed to decide.
		for i := range out {
			for j := i + 1; j < len(out); j++ {
				if out[j] < out[i] {
					out[i], out[j] = out[j], out[i]
				}
			}
		}
		return out
	}
	// last is the fresh ledger's last event of the playbook.
	last := func() Event {
		fresh, err := Open(f.dir)
		if err != nil {
			t.Fatal(err)
		}
		defer fresh.Close()
		var ev Event
		for after := int64(0); ; {
			res, err := fresh.Call(context.Background(), "list_playbook_events", json.RawMessage(fmt.Sprintf(`{"playbook":"finance","after":%d,"limit":1000}`, after)))
			if err != nil {
				t.Fatalf("list_playbook_events: %v", err)
			}
			p := res.(*EventPage)
			if len(p.Events) > 0 {
				ev = p.Events[len(p.Events)-1]
			}
			if p.Next == 0 {
				return ev
			}
			after = p.Next
		}
	}
	record := func(l *Ledger, who, kind string) {
		all := live()
		id := all[rng.Intn(len(all))]
		if kind == "" {
			kind = []string{"step_completed", "step_started"}[rng.Intn(2)] // step_started is not committed
		}
		res, err := call(l, "record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":%q,"step":"do/%d","actor":"agent-7"}`, id, kind, rng.Intn(100)))
		if err != nil {
			return // a run taken back by git: the fresh ledger's refusal is checked below
		}
		var ev Event
		json.Unmarshal([]byte(res), &ev)
		// The write mended what git took back: a fresh ledger reads the
		// history whole, and it ends with this event, at its seq.
		if want := last(); ev.Seq != want.Seq || ev.ID != want.ID {
			t.Fatalf("%s recorded %s at seq %d; a fresh ledger's history ends with %s at seq %d", who, ev.ID, ev.Seq, want.ID, want.Seq)
		}
	}
	compare := func(step int, what string) {
		fresh, err := Open(f.dir)
		if err != nil {
			t.Fatal(err)
		}
		defer fresh.Close()
		asks := []string{`list_runs {"playbook":"finance","limit":1000}`, `list_playbook_events {"playbook":"finance","limit":1000}`}
		for _, id := range live() {
			asks = append(asks, fmt.Sprintf(`get_run {"playbook":"finance","run_id":%q}`, id))
		}
		for _, ask := range asks {
			op, args, _ := strings.Cut(ask, " ")
			want, werr := call(fresh, op, args)
			for name, l := range map[string]*Ledger{"the warm ledger": f.l, "the other": other} {
				got, err := call(l, op, args)
				if fmt.Sprint(err) != fmt.Sprint(werr) || got != want {
					t.Fatalf("step %d (after %s): %s %s\n%s answers %s %v\na fresh ledger answers %s %v", step, what, op, args, name, got, err, want, werr)
				}
			}
		}
	}
	start(f.l)
	for step := 0; step < steps; step++ {
		var what string
		switch k := rng.Intn(10); {
		case k == 0:
			what = "a run made by the warm ledger"
			start(f.l)
		case k == 1:
			what = "a run made by another"
			start(other)
		case k <= 3:
			what = "an event recorded by the warm ledger"
			record(f.l, "the warm ledger", "")
		case k == 4:
			what = "an event recorded by another"
			record(other, "the other", "")
		case k == 5:
			what = "a person's git commit"
			fh, err := os.OpenFile(filepath.Join(f.dir, "notes.md"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(fh, "note %d\n", step)
			fh.Close()
			f.git("add", "notes.md")
			f.git("commit", "-q", "-m", "a note")
		case k == 6 && rng.Intn(2) == 0:
			// Lines not committed yet taken back, more than the last
			// (which the history's repair drops as a torn reservation).
			what = "two events not committed, then git stash"
			record(f.l, "the warm ledger", "step_started")
			record(other, "the other", "step_started")
			f.git("stash", "-q")
		case k == 6:
			// Taken back: the index loses its last runs, and the next run
			// made may bring it to the same size with another line.
			n := strings.Count(f.git("log", "--oneline"), "\n")
			back := 1 + rng.Intn(2)
			if n-back <= base {
				continue
			}
			what = fmt.Sprintf("git reset --hard HEAD~%d", back)
			f.git("reset", "-q", "--hard", fmt.Sprintf("HEAD~%d", back))
		case k == 7:
			what = "the index's last line cut by hand"
			data, err := os.ReadFile(index)
			if err != nil {
				t.Fatal(err)
			}
			cut := strings.LastIndexByte(strings.TrimSuffix(string(data), "\n"), '\n') + 1
			if !strings.Contains(string(data[cut:]), `"playbook-run"`) {
				continue
			}
			if err := os.WriteFile(index, data[:cut], 0o644); err != nil {
				t.Fatal(err)
			}
		case k == 8:
			// The same size, the same file: only its times tell, and a
			// second write in the same tick of the file system's clock
			// leaves the times of the first. The warm ledger reads between
			// the two writes, and must not trust the stat it took then.
			// (Where the clock is fine, as on Linux 6.18, the times always
			// differ and the tries end at 3.)
			what = "the index rewritten in place twice within one tick, its last two runs swapped and back, the warm ledger reading between"
			data, err := os.ReadFile(index)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitAfter(string(data), "\n")
			n := len(lines) - 1 // the last is empty
			if n < 2 || !strings.Contains(lines[n-1], `"playbook-run"`) || !strings.Contains(lines[n-2], `"playbook-run"`) {
				continue
			}
			lines[n-1], lines[n-2] = lines[n-2], lines[n-1]
			swapped := []byte(strings.Join(lines, ""))
			for try := 0; try < 3; try++ {
				one := rewriteInPlace(t, index, swapped)
				call(f.l, "list_runs", `{"playbook":"finance","limit":1000}`)
				if two := rewriteInPlace(t, index, data); two.Equal(one) {
					break
				}
			}
		default:
			what = "a torn line at the index's end"
			fh, err := os.OpenFile(index, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			fh.WriteString(`{"uid":"019a`)
			fh.Close()
		}
		compare(step, what)
	}
}

// rewriteInPlace writes data over the file at name (the same file, not
// one put in its place) and answers its modification time after.
func rewriteInPlace(t *testing.T, name string, data []byte) time.Time {
	fh, err := os.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	fi, err := fh.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return fi.ModTime()
}
