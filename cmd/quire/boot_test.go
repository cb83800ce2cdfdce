package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"quire/internal/fsys"
)

// A history's records are synced with the lines they number at the end of
// their write's group, so a machine that stops before it may keep an
// event's line and lose the record that numbers it. The git stamp names
// the boot it was written in: after the machine starts again, the first
// write checks the histories against the files and rebuilds the one that
// lacks lines, so the next event takes a seq no line has, every event is
// in the playbook's history once, and quire check is clean. Without the
// boot in the stamp the next event took the seq of a line the history had
// lost.
func TestAfterTheMachineStopsNoSeqIsGivenTwice(t *testing.T) {
	t.Parallel()
	boot := fsys.BootID()
	if boot == "" {
		t.Skip("this platform names no boot: the records are synced before their lines are written (history.reserve)")
	}
	dir, v, run := newCloseRun(t)
	record := func(step string) {
		t.Helper()
		code, out, errs := quire(t, "", v, "call", "record_event", "--args",
			fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_completed","step":%q,"actor":"agent-7"}`, run, step))
		if code != 0 {
			t.Fatalf("record_event %s: %d %s %s", step, code, out, errs)
		}
	}
	for _, step := range []string{"do/1/a", "do/2/b", "do/3/c"} {
		record(step)
	}
	stampPath := filepath.Join(dir, ".quire", "history", "git.stamp")
	stamp, err := os.ReadFile(stampPath)
	if err != nil || !strings.HasPrefix(string(stamp), "boot "+boot+"\n") {
		t.Fatalf("the git stamp does not name this boot (%s): %v\n%s", boot, err, stamp)
	}
	// The machine stopped: the last two events' lines were written out,
	// their records were not; the stamp is the last boot's.
	seq := filepath.Join(dir, ".quire", "history", "finance.seq")
	if fi, err := os.Stat(seq); err != nil || os.Truncate(seq, fi.Size()-2*16) != nil {
		t.Fatalf("history: %v", err)
	}
	lastBoot := strings.Replace(string(stamp), boot, "00000000-0000-4000-8000-000000000000", 1)
	if err := os.WriteFile(stampPath, []byte(lastBoot), 0o644); err != nil {
		t.Fatal(err)
	}
	record("do/4/d")

	// Every line of the playbook's event files has a seq of its own.
	files, _ := filepath.Glob(filepath.Join(dir, "playbook-runs", "*", "run.jsonl"))
	files = append(files, filepath.Join(dir, "playbooks", "finance", "events.jsonl"))
	seqOf := regexp.MustCompile(`"seq":(\d+)`)
	lineOf := map[string]string{}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, ln := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			m := seqOf.FindStringSubmatch(ln)
			if m == nil {
				continue
			}
			if other, ok := lineOf[m[1]]; ok {
				t.Fatalf("seq %s is given twice:\n%s\n%s", m[1], other, ln)
			}
			lineOf[m[1]] = ln
		}
	}
	code, out, errs := quire(t, "", v, "call", "list_playbook_events", "--args", `{"playbook":"finance","limit":1000}`)
	var page struct {
		Events []struct {
			Data struct {
				Step string `json:"step"`
			} `json:"data"`
		} `json:"events"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &page) != nil {
		t.Fatalf("list_playbook_events: %d %s %s", code, out, errs)
	}
	if len(page.Events) != len(lineOf) {
		t.Fatalf("the history holds %d events, the files %d:\n%s", len(page.Events), len(lineOf), out)
	}
	steps := map[string]int{}
	for _, e := range page.Events {
		steps[e.Data.Step]++
	}
	for _, s := range []string{"do/1/a", "do/2/b", "do/3/c", "do/4/d"} {
		if steps[s] != 1 {
			t.Errorf("step %s is in the history %d times:\n%s", s, steps[s], out)
		}
	}
	if code, out, _ := quire(t, "", v, "check"); code != 0 {
		t.Fatalf("check: %s", out)
	}
}
