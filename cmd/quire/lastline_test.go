package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A run.jsonl whose last line, whole and committed, lacks only its
// newline (a tool that writes the file without one) is kept and given its
// newline, as docs/vault-format.md says: the next event takes the next
// seq and its own id, nothing goes to the quarantine, and quire check is
// clean. So also when the history is built again from the files.
func TestALastLineWithoutItsNewlineKeepsItsSeq(t *testing.T) {
	t.Parallel()
	for _, rebuilt := range []bool{false, true} {
		t.Run(fmt.Sprintf("history rebuilt %v", rebuilt), func(t *testing.T) {
			t.Parallel()
			dir, v, run := newCloseRun(t)
			record := func(ev, step string) map[string]any {
				t.Helper()
				code, out, errs := quire(t, "", v, "call", "record_event", "--args",
					fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":%q,"step":%q,"actor":"agent-7"}`, run, ev, step))
				if code != 0 {
					t.Fatalf("record_event: %s %s", out, errs)
				}
				var m map[string]any
				json.Unmarshal([]byte(out), &m)
				return m
			}
			record("step_started", "do/1/a")
			last := record("step_completed", "do/1/a") // a boundary: committed
			logs, _ := filepath.Glob(filepath.Join(dir, "playbook-runs", "close-"+run+"-*", "run.jsonl"))
			data, _ := os.ReadFile(logs[0])
			os.WriteFile(logs[0], bytes.TrimSuffix(data, []byte("\n")), 0o644)
			git := func(args ...string) {
				t.Helper()
				c := exec.Command("git", append([]string{"-c", "user.name=tool", "-c", "user.email=tool@example.com"}, args...)...)
				c.Dir = dir
				if out, err := c.CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v %s", args, err, out)
				}
			}
			git("commit", "-qam", "the log as another tool writes it")
			if rebuilt {
				os.RemoveAll(filepath.Join(dir, ".quire"))
			}
			next := record("step_started", "do/2/b")
			if next["seq"].(float64) != last["seq"].(float64)+1 || next["id"] == last["id"] {
				t.Fatalf("the next event took seq %v id %v after seq %v id %v", next["seq"], next["id"], last["seq"], last["id"])
			}
			after, _ := os.ReadFile(logs[0])
			if !bytes.HasPrefix(after, data) {
				t.Fatalf("the committed line is not kept with its newline:\n%s", after)
			}
			if q, _ := filepath.Glob(filepath.Join(dir, ".quire", "quarantine", "*", "*", "*")); len(q) > 0 {
				t.Fatalf("quarantined: %v", q)
			}
			if code, out, _ := quire(t, "", v, "check"); code != 0 {
				t.Fatalf("check: %s", out)
			}
			code, out, _ := quire(t, "", v, "call", "list_playbook_events", "--args", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"limit":100}`, run))
			if code != 0 || strings.Count(out, `"id": "`+last["id"].(string)+`"`) != 1 {
				t.Fatalf("the kept line is not in the history once: %s", out)
			}
		})
	}
}

// A playbook's events.jsonl deleted by hand (HEAD holds it) made quire
// reindex rebuild the history without its lines, and the next event took
// a seq one of them holds. The history is never built from files whose
// committed lines are gone: reindex and the next write are refused naming
// the file, and once quire janitor has restored it the seqs go on.
func TestADeletedLogGivesNoSeqAgain(t *testing.T) {
	t.Parallel()
	dir, v, run := newCloseRun(t)
	event := func() (int, string, string) {
		return quire(t, "", v, "call", "record_event", "--args", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_started","step":"do/1/a","actor":"agent-7"}`, run))
	}
	code, out, _ := quire(t, "", v, "call", "list_playbook_events", "--args", `{"playbook":"finance","limit":1000}`)
	if code != 0 {
		t.Fatal(out)
	}
	held := strings.Count(out, `"seq":`)
	os.Remove(filepath.Join(dir, "playbooks", "finance", "events.jsonl"))
	const words = "playbooks/finance/events.jsonl: line 1 differs from the commit (HEAD)"
	if code, _, errs := quire(t, "", v, "reindex"); code == 0 || !strings.Contains(errs, words) {
		t.Fatalf("reindex over a deleted log: %d %s", code, errs)
	}
	if code, out, errs := event(); code == 0 || !strings.Contains(out+errs, words) || !strings.Contains(out, `"conflict"`) {
		t.Fatalf("an event over a deleted log: %d %s %s", code, out, errs)
	}
	if code, out, errs := quire(t, "", v, "janitor"); code != 0 || !strings.Contains(out, "playbooks/finance/events.jsonl: restored the committed part from HEAD") {
		t.Fatalf("janitor: %d %s %s", code, out, errs)
	}
	code, out, errs := event()
	var ev struct{ Seq int }
	if code != 0 || json.Unmarshal([]byte(out), &ev) != nil || ev.Seq != held+1 {
		t.Fatalf("the next event after the janitor: seq %d, want %d: %s %s", ev.Seq, held+1, out, errs)
	}
}

// A line written by hand dated years ahead made quire time every later
// event of its run after it (the clock was gone back from) and refuse a
// true time as going back. Such a line binds nothing: the next event is
// timed by the clock, a true time is taken, and quire check names the
// line.
func TestAHandWrittenFutureTimeBindsNothing(t *testing.T) {
	t.Parallel()
	dir, v, run := newCloseRun(t)
	logs, _ := filepath.Glob(filepath.Join(dir, "playbook-runs", "close-"+run+"-*", "run.jsonl"))
	f, _ := os.OpenFile(logs[0], os.O_APPEND|os.O_WRONLY, 0)
	fmt.Fprintf(f, `{"event":"milestone_fired","timestamp":"2031-01-01T00:00:00Z","detail":"written by hand","actor":"ana"}`+"\n")
	f.Close()
	now := time.Now().UTC()
	code, out, errs := quire(t, "", v, "call", "record_event", "--args", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_started","step":"do/1/a","actor":"agent-7"}`, run))
	var ev struct{ Time string }
	if code != 0 || json.Unmarshal([]byte(out), &ev) != nil {
		t.Fatalf("record_event: %s %s", out, errs)
	}
	if at, _ := time.Parse(time.RFC3339Nano, ev.Time); at.Sub(now) > time.Minute {
		t.Fatalf("the event after the hand-written line is timed %s, not by the clock", ev.Time)
	}
	if code, out, errs := quire(t, "", v, "call", "record_event", "--args", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_completed","step":"do/1/a","actor":"agent-7","time":%q}`,
		run, time.Now().UTC().Format(time.RFC3339Nano))); code != 0 {
		t.Fatalf("a true time refused: %s %s", out, errs)
	}
	code, out, _ = quire(t, "", v, "check")
	if code != 1 || !strings.Contains(out, "run.jsonl:2: dated 2031-01-01T00:00:00Z, more than 5 minutes ahead of the clock") {
		t.Fatalf("check: %d %s", code, out)
	}
}
