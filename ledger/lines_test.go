package ledger

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"quire/ledger/history"
	"quire/vault"
	"quire/words/refusal"
)

// The CloudEvents form carries the line's own step and detail in data: a
// caller's data.step or data.detail never stands in for them, in
// record_event's answer, get_event, list_playbook_events (both ways) and
// what a fold sees; every other key of data stays the caller's.
func TestCloudFormKeepsTheEventsOwnFields(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	src := `document:
  name: steps
page:
  data:
    language: typescript
    source:
      events:
        - type: milestone_fired
          subject: workflow/steps
    views:
      seen: categories
    module: |
      export function fold(view: View, event: Event): View {
        const data = event.data as { [k: string]: Json };
        const name = String(data['step']) + '|' + String(data['detail']) + '|' + String(data['note']);
        return { seen: { values: [...(view.seen?.values ?? []), { name: name, value: 1 }] } };
      }
  runs: |
    {{ views.seen.values[0].name }}
`
	f.call("create_definition", saveArgs("workflow", "steps", src))
	r := f.call("run_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"steps","member_of":[%q],"executor":"agent-7","authorized_by":"ana"}`, f.project)).(*Run)
	const want = `{"note":"kept","step":"do/1/real","detail":"the real detail","extra":[1,2]}`
	rec := f.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"milestone_fired","step":"do/1/real","detail":"the real detail","actor":"agent-7",
		"data":{"note":"kept","step":"do/9/fake","detail":"a fake detail","extra":[1,2]}}`, r.RunID)).(*RecordedEvent)
	got := map[string]string{"record_event": string(rec.Data)}
	ev := f.call("get_event", fmt.Sprintf(`{"playbook":"finance","event_id":%q}`, rec.ID)).(*Event)
	got["get_event"] = string(ev.Data)
	for _, args := range []string{`{"playbook":"finance"}`, fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, r.RunID)} {
		page := f.call("list_playbook_events", args).(*EventPage)
		for _, e := range page.Events {
			if e.ID == rec.ID {
				got["list_playbook_events "+args] = string(e.Data)
			}
		}
	}
	if len(got) != 4 {
		t.Fatalf("the event is not in every read: %v", got)
	}
	for where, data := range got {
		if data != want {
			t.Errorf("%s: data %s, want %s", where, data, want)
		}
	}
	// A caller's step or detail stays where the line has none.
	rec = f.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"call_record","actor":"agent-7","data":{"step":"theirs","detail":"theirs too"}}`, r.RunID)).(*RecordedEvent)
	if string(rec.Data) != `{"step":"theirs","detail":"theirs too"}` {
		t.Errorf("a line without step or detail: data %s", rec.Data)
	}
	d := f.call("get_definition", `{"playbook":"finance","type":"workflow","name":"steps"}`).(*Definition)
	if d.Page.Runs != "do/1/real|the real detail|kept" {
		b, _ := json.Marshal(d.Page)
		t.Fatalf("the fold saw %q: %s", d.Page.Runs, b)
	}
}

// A write to a run that ended is its own boundary: no boundary of the run
// follows it but the archive, so it is committed before the call returns.
func TestWritesToAnEndedRunAreCommitted(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, end := range []string{`"status":"succeeded"`, `"status":"rejected","reason":"no"`} {
		r := f.start()
		run := fmt.Sprintf(`"playbook":"finance","run_id":%q`, r.RunID)
		f.call("append_thread", `{`+run+`,"text":"before the end","actor":"agent-7"}`)
		f.call("end_run", `{`+run+`,`+end+`,"actor":"agent-7"}`)
		f.clean()
		f.call("append_thread", `{`+run+`,"text":"a note after the end","actor":"agent-7"}`)
		f.clean()
		f.call("put_artifact", `{`+run+`,"name":"late/report.txt","content":"written after the end"}`)
		f.clean()
		f.call("put_artifact", `{`+run+`,"name":"late/report.txt","content":"written again","actor":"ana"}`)
		f.clean()
		if log := f.git("log", "-1", "--format=%an %s", "--", r.Path); log != "ana close-the-month "+r.RunID[len(r.RunID)-8:]+": artifact late/report.txt written after the end\n" {
			t.Errorf("last commit of the run: %q", log)
		}
	}
}

// handWrite appends a line to a run's run.jsonl as an agent with only files
// does, in the capsule's minimal form.
func (f *fixture) handWrite(r *Run, typ, step, detail string) {
	f.t.Helper()
	fh, err := os.OpenFile(filepath.Join(f.dir, r.Path, "run.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	defer fh.Close()
	stepJSON := "null"
	if step != "" {
		stepJSON = strconv.Quote(step)
	}
	fmt.Fprintf(fh, "{\"event\": %q, \"timestamp\": %q, \"step\": %s, \"detail\": %q}\n", typ, f.l.Now().UTC().Format("2006-01-02T15:04"), stepJSON, detail)
}

// history reads the whole history, and checks that seq runs 1, 2, 3…
// without a gap and that no id comes twice.
func (f *fixture) history() []Event {
	f.t.Helper()
	var all []Event
	after := int64(0)
	for {
		page := f.call("list_playbook_events", fmt.Sprintf(`{"playbook":"finance","limit":1000,"after":%d}`, after)).(*EventPage)
		all = append(all, page.Events...)
		if page.Next == 0 {
			break
		}
		after = page.Next
	}
	ids := map[string]bool{}
	for i, ev := range all {
		if ev.Seq != int64(i+1) {
			f.t.Fatalf("seq %d at place %d", ev.Seq, i+1)
		}
		if ev.ID == "" || ids[ev.ID] {
			f.t.Fatalf("event %d: id %q empty or seen before", ev.Seq, ev.ID)
		}
		ids[ev.ID] = true
	}
	return all
}

func (f *fixture) historyFiles() string {
	f.t.Helper()
	seq, err := os.ReadFile(filepath.Join(f.dir, ".quire/history/finance.seq"))
	if err != nil {
		f.t.Fatal(err)
	}
	files, _ := os.ReadFile(filepath.Join(f.dir, ".quire/history/finance.files"))
	// A rebuild's list begins with a nonce of its own (history.go).
	if strings.HasPrefix(string(files), "# rebuilt ") {
		_, files, _ = bytes.Cut(files, []byte("\n"))
	}
	return string(seq) + "\x00" + string(files)
}

// A line written by hand gets its id and seq as a recorded one does: in
// get_event, list_playbook_events (by run and whole), after the next write
// and after quire reindex, which gives the same history twice; nothing is
// numbered twice.
func TestHandWrittenLinesHaveTheirPlace(t *testing.T) {
	f := newFixture(t)
	r := f.start()
	rec := func(typ, step string) *Event {
		return &f.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":%q,"step":%q,"actor":"agent-7"}`, r.RunID, typ, step)).(*RecordedEvent).Event
	}
	rec("step_started", "do/1/a")
	f.handWrite(r, "step_completed", "do/1/a", "Done by hand")
	// get_event finds it whole: id, seq, step, detail, its run.
	ev := f.call("get_event", fmt.Sprintf(`{"playbook":"finance","event_id":"%s_3"}`, r.RunID)).(*Event)
	if ev.ID != r.RunID+"_3" || ev.Seq != 5 || ev.Type != "step_completed" || ev.CorrelationID != r.RunID || ev.Subject != "workflow/close-the-month" ||
		string(ev.Data) != `{"step":"do/1/a","detail":"Done by hand"}` {
		b, _ := json.Marshal(ev)
		t.Fatalf("get_event of a line written by hand: %s", b)
	}
	byRun := f.call("list_playbook_events", fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, r.RunID)).(*EventPage)
	if n := len(byRun.Events); n != 3 || byRun.Events[2].ID != ev.ID || byRun.Events[2].Seq != 5 {
		t.Fatalf("by run: %+v", byRun.Events)
	}
	all := f.history()
	if last := all[len(all)-1]; len(all) != 5 || last.ID != ev.ID || string(last.Data) != string(ev.Data) {
		t.Fatalf("whole history: %+v", all)
	}
	// Written by hand, then recorded: the hand line is numbered first.
	f.handWrite(r, "step_started", "do/2/b", "")
	next := rec("step_completed", "do/2/b")
	if next.ID != r.RunID+"_5" || next.Seq != 7 {
		t.Fatalf("the event after a line written by hand: %s seq %d", next.ID, next.Seq)
	}
	f.handWrite(r, "milestone_fired", "", "A milestone by hand")
	before := f.history()
	if len(before) != 8 || before[7].ID != r.RunID+"_6" || before[7].Type != "milestone_fired" {
		t.Fatalf("%d events before the reindex: %+v", len(before), before)
	}
	if err := f.l.Reindex(); err != nil {
		t.Fatal(err)
	}
	once := f.historyFiles()
	after := f.history()
	b1, _ := json.Marshal(before)
	b2, _ := json.Marshal(after)
	if string(b1) != string(b2) {
		t.Fatalf("reindex changed the history:\n%s\n%s", b1, b2)
	}
	if err := f.l.Reindex(); err != nil {
		t.Fatal(err)
	}
	if f.historyFiles() != once {
		t.Fatal("quire reindex twice gave two histories")
	}
	if ev := rec("step_started", "do/3/c"); ev.Seq != 9 || ev.ID != r.RunID+"_7" {
		t.Fatalf("after the reindex: %s seq %d", ev.ID, ev.Seq)
	}
	// In the playbook's events.jsonl: <playbook uid>_<n>.
	fh, _ := os.OpenFile(filepath.Join(f.dir, "playbooks/finance/events.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	fmt.Fprintf(fh, "{\"event\": \"playbook_updated\", \"timestamp\": \"2026-11-01T09:30\", \"step\": null, \"detail\": \"By hand\"}\n")
	fh.Close()
	all = f.history()
	uid := f.call("get_playbook", `{"playbook":"finance"}`).(*Playbook).UID
	if last := all[len(all)-1]; len(all) != 10 || last.ID != uid+"_3" || last.Type != "playbook_updated" {
		t.Fatalf("a line written by hand in events.jsonl: %+v", last)
	}
	if ev := f.call("get_event", fmt.Sprintf(`{"playbook":"finance","event_id":"%s_3"}`, uid)).(*Event); ev.ID != uid+"_3" || ev.Seq != 10 {
		t.Fatalf("get_event of a line written by hand in events.jsonl: %+v", ev)
	}
	f.refuse("get_event", fmt.Sprintf(`{"playbook":"finance","event_id":"%s_4"}`, uid), refusal.NotFound, "", "has no event")
	f.git("add", "-A")
	f.git("commit", "-qm", "lines by hand")
	f.clean()
}

// A read of the whole history in a warm process asks the vault's file
// system monitor (core.fsmonitor naming a hook, as git status and quire
// check ask it) which files changed since its last answer, and looks for
// lines written by hand only in those: the monitor is trusted, as git
// trusts it. It looks at every file on its first read (asking with the
// token git keeps in its index, for one of now), while git keeps none,
// and when the monitor knows nothing ("/"), names a folder the file is
// in, or fails. (It does so from 10,000 event files in a playbook, here
// from one.)
func TestAWholeHistoryReadLooksWhereTheMonitorSays(t *testing.T) {
	from := history.MonitorFrom
	history.MonitorFrom = 1 // not 10,000 runs
	defer func() { history.MonitorFrom = from }()
	f := newFixture(t)
	r := f.start()
	rel := r.Path + "/run.jsonl"
	tmp := t.TempDir()
	answer, asked := filepath.Join(tmp, "answer"), filepath.Join(tmp, "asked")
	hook := filepath.Join(tmp, "monitor")
	os.WriteFile(hook, []byte("#!/bin/sh\n[ \"$1\" = 2 ] || exit 1\necho \"$2\" >> "+asked+"\n[ -f "+answer+" ] || exit 1\ncat "+answer+"\n"), 0o755)
	f.git("config", "core.fsmonitor", hook)
	says := func(token string, paths ...string) {
		t.Helper()
		os.WriteFile(answer, []byte(token+"\x00"+strings.Join(paths, "\x00")), 0o644)
	}
	lastAsked := func() string {
		t.Helper()
		data, _ := os.ReadFile(asked)
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		return lines[len(lines)-1]
	}
	hand, lines := 0, 0
	write := func() {
		t.Helper()
		hand++
		f.handWrite(r, "step_started", "s", fmt.Sprintf("by hand %d", hand))
	}
	read := func(what string, numbered int) {
		t.Helper()
		if got := len(f.history()); got != lines+numbered {
			t.Fatalf("the monitor %s: %d events, want %d", what, got, lines+numbered)
		}
	}

	// While git keeps no token of the monitor's in its index, there is
	// none to ask with (asked with none, Watchman's hook lists every
	// path): every file is looked at, every time.
	lines = len(f.history())
	write()
	says("t0")
	read("was never asked", 1)
	if _, err := os.Stat(asked); err == nil {
		t.Fatal("the monitor was asked with no token")
	}
	// git status keeps the monitor's token in the index; the first read
	// asks with it, for a token of now, and looks at every file.
	f.git("update-index", "--fsmonitor")
	f.git("status", "--porcelain")
	write()
	says("t1")
	read("is first asked", 2)
	if got := lastAsked(); got != "t0" {
		t.Fatalf("the first read asked with %q, want git's token t0", got)
	}
	write()
	says("t2")
	read("names nothing", 2)
	if got := lastAsked(); got != "t1" {
		t.Fatalf("asked with %q, want t1", got)
	}
	says("t3", "vault/00-index.jsonl", rel)
	read("names the log", 3)
	for name, answer := range map[string]func(){
		"knows nothing":    func() { says("t4", "/") },
		"fails":            func() { os.Remove(answer) },
		"names its folder": func() { says("t5", "playbook-runs/") },
	} {
		write()
		answer()
		read(name, hand)
	}
}

// A read while the vault takes no write (HEAD detached) leaves the lines
// written by hand as they are, and the first read after it takes writes
// again numbers them, though the file did not change in between.
func TestLinesByHandWaitForAVaultThatTakesWrites(t *testing.T) {
	f := newFixture(t)
	r := f.start()
	lines := len(f.history())
	f.handWrite(r, "step_started", "s", "by hand")
	f.git("checkout", "-q", "--detach")
	if got := len(f.history()); got != lines {
		t.Fatalf("HEAD detached: %d events, want %d", got, lines)
	}
	f.git("checkout", "-q", "main")
	all := f.history()
	if len(all) != lines+1 || all[lines].ID != r.RunID+"_2" {
		t.Fatalf("HEAD on main again: %d events, want %d, the last %s", len(all), lines+1, all[len(all)-1].ID)
	}
}

// The history a quire before this one left: a line written by hand, then a
// line it numbered as if the hand line were not there. A rebuild numbers
// nothing twice: the hand line takes the next free seq.
func TestRebuildNumbersNothingTwice(t *testing.T) {
	f := newFixture(t)
	r := f.start()
	f.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_started","step":"a","actor":"agent-7"}`, r.RunID))
	f.handWrite(r, "step_completed", "a", "by hand")
	fh, _ := os.OpenFile(filepath.Join(f.dir, r.Path, "run.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	fmt.Fprintf(fh, `{"event":"step_started","timestamp":"2026-11-01T09:30:12.345Z","step":"b","detail":"","id":"%s_4","seq":5}`+"\n", r.RunID)
	fh.Close()
	if err := f.l.Reindex(); err != nil {
		t.Fatal(err)
	}
	all := f.history()
	var got []string
	for _, ev := range all {
		got = append(got, fmt.Sprintf("%d %s", ev.Seq, ev.ID))
	}
	want := []string{"5 " + r.RunID + "_4", "6 " + r.RunID + "_3"}
	if len(got) != 6 || got[4] != want[0] || got[5] != want[1] {
		t.Fatalf("history %v", got)
	}
}

// Random mixes of recorded lines, lines written by hand, reads and
// rebuilds on a few runs: the history always runs 1, 2, 3… with no id
// twice; a recorded event keeps the id and seq it was answered with, across
// rebuilds too; a line written by hand, once numbered, keeps its seq until
// a rebuild (which may order lines written by hand at the ends of several
// runs otherwise among themselves, see package history); after a rebuild every
// line of every run is in the history once, with the id of its place in
// its run; and a second rebuild gives the same history byte for byte.
// Every read of the whole history holds every line. It holds so too in a
// vault with a file system monitor that answers truly (truthfulMonitor),
// which every read asks (history.MonitorFrom lowered to one file).
func TestPropertyRecordedAndHandWrittenLines(t *testing.T) {
	t.Run("no monitor", func(t *testing.T) { propertyRecordedAndHandWrittenLines(t, false) })
	t.Run("a monitor", func(t *testing.T) {
		from := history.MonitorFrom
		history.MonitorFrom = 1
		defer func() { history.MonitorFrom = from }()
		propertyRecordedAndHandWrittenLines(t, true)
	})
}

// truthfulMonitor sets a core.fsmonitor hook in the fixture's vault that
// answers as a monitor does: a token (a file it makes, then waits past
// the clock's tick, so that any later write is newer), and the files
// written since the token asked with ("/" for a token it did not give),
// git status having asked it once so that git keeps a token in
// .git/index.
func (f *fixture) truthfulMonitor() {
	f.t.Helper()
	marks := f.t.TempDir()
	hook := filepath.Join(marks, "monitor")
	script := "#!/bin/sh\n[ \"$1\" = 2 ] || exit 1\nnew=" + marks + "/m$(date +%s%N)\ntouch \"$new\" && sleep 0.02\nprintf '%s\\0' \"$new\"\n" +
		"case \"$2\" in " + marks + "/m*) [ -f \"$2\" ] || { printf '/'; exit 0; } ;; *) printf '/'; exit 0 ;; esac\n" +
		"find . -path ./.git -prune -o -type f -newer \"$2\" -print | sed 's|^\\./||' | tr '\\n' '\\0'\n"
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		f.t.Fatal(err)
	}
	f.git("config", "core.fsmonitor", hook)
	f.git("update-index", "--fsmonitor")
	f.git("status", "--porcelain")
}

func propertyRecordedAndHandWrittenLines(t *testing.T, monitor bool) {
	rounds, steps := 2, 25
	if os.Getenv("QUIRE_TEST_LONG") != "" {
		rounds, steps = 20, 60
		if monitor {
			rounds = 8 // the hook waits 20 ms at each read: 96 s for 20
		}
	}
	for round := range rounds {
		rng := rand.New(rand.NewPCG(uint64(round), 11))
		f := newFixture(t)
		if monitor {
			f.truthfulMonitor()
		}
		runs := []*Run{f.start(), f.start(), f.start()}
		lines := map[string]int{} // run → lines in its log
		for _, r := range runs {
			lines[r.RunID] = 1
		}
		seqOf := map[string]int64{} // id → the seq it was given
		hand := map[string]bool{}
		var did []string
		keep := func(evs []Event) {
			for _, ev := range evs {
				if s, ok := seqOf[ev.ID]; ok && s != ev.Seq {
					t.Fatalf("round %d: %s was seq %d, now %d (%v)", round, ev.ID, s, ev.Seq, did)
				}
				seqOf[ev.ID] = ev.Seq
			}
		}
		for range steps {
			r := runs[rng.IntN(len(runs))]
			switch k := rng.IntN(10); {
			case k < 4:
				typ := []string{"step_started", "step_completed", "call_record"}[rng.IntN(3)]
				ev := f.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":%q,"step":"s","actor":"agent-7"}`, r.RunID, typ)).(*RecordedEvent)
				lines[r.RunID]++
				if want := fmt.Sprintf("%s_%d", r.RunID, lines[r.RunID]); ev.ID != want {
					t.Fatalf("round %d: recorded %s, want %s", round, ev.ID, want)
				}
				keep([]Event{ev.Event})
				did = append(did, fmt.Sprintf("record %s=%d", ev.ID[len(r.RunID)-4:], ev.Seq))
			case k < 7:
				detail := "by hand"
				if rng.IntN(4) == 0 {
					detail = strings.Repeat("long ", 2000) // past the first bytes read from the end
				}
				f.handWrite(r, "step_started", "s", detail)
				lines[r.RunID]++
				hand[fmt.Sprintf("%s_%d", r.RunID, lines[r.RunID])] = true
				did = append(did, fmt.Sprintf("hand %s_%d", r.RunID[len(r.RunID)-4:], lines[r.RunID]))
			case k < 8:
				keep(f.call("list_playbook_events", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"limit":1000}`, r.RunID)).(*EventPage).Events)
				did = append(did, "list run")
			case k < 9:
				n := 1 + rng.IntN(lines[r.RunID])
				ev := f.call("get_event", fmt.Sprintf(`{"playbook":"finance","event_id":"%s_%d"}`, r.RunID, n)).(*Event)
				if want := fmt.Sprintf("%s_%d", r.RunID, n); ev.ID != want || ev.Seq == 0 {
					t.Fatalf("round %d: get_event %s answered %s seq %d", round, want, ev.ID, ev.Seq)
				}
				keep([]Event{*ev})
				did = append(did, "get")
			case k < 10 && rng.IntN(2) == 0:
				// Another process: it has seen no file yet, and reads
				// the history's records for where each file's lines end.
				f.l.Close()
				v, err := vault.Open(f.dir)
				if err != nil {
					t.Fatal(err)
				}
				f.l = New(v)
				did = append(did, "new process")
			default:
				if err := f.l.Reindex(); err != nil {
					t.Fatal(err)
				}
				for id := range hand {
					delete(seqOf, id)
				}
				did = append(did, "reindex")
			}
			// A read of the whole history numbers every line by hand.
			evs := f.history()
			if want := 2 + lines[runs[0].RunID] + lines[runs[1].RunID] + lines[runs[2].RunID]; len(evs) != want {
				t.Fatalf("round %d: %d events, want %d (%v)", round, len(evs), want, did)
			}
			keep(evs)
		}
		if err := f.l.Reindex(); err != nil {
			t.Fatal(err)
		}
		for id := range hand {
			delete(seqOf, id)
		}
		all := f.history()
		keep(all)
		once := f.historyFiles()
		if err := f.l.Reindex(); err != nil {
			t.Fatal(err)
		}
		if f.historyFiles() != once {
			t.Fatalf("round %d: two rebuilds, two histories (%v)", round, did)
		}
		ids := map[string]bool{}
		for _, ev := range all {
			ids[ev.ID] = true
		}
		for _, r := range runs {
			for n := 1; n <= lines[r.RunID]; n++ {
				if id := fmt.Sprintf("%s_%d", r.RunID, n); !ids[id] {
					t.Fatalf("round %d: %s is not in the history (%v)", round, id, did)
				}
			}
		}
		if want := 2 + lines[runs[0].RunID] + lines[runs[1].RunID] + lines[runs[2].RunID]; len(all) != want {
			t.Fatalf("round %d: %d events, want %d", round, len(all), want)
		}
	}
}

// TestManyLinesByHandNumberedAtOnce: lines written by hand are numbered
// in one write of their records, synced once, not a sync each: the next
// boundary on a run whose log gained 30,000 such lines (a long run, as
// a person or another tool appends it) took one fsync a line, minutes at
// 130 MB, and found them by prepending each to a list (quadratic: 277 s
// for these lines). The bound is what 3,000 syncs cost on this disk, plus
// 15 seconds to read the lines (about 1 s here, 3 s under the race
// detector).
func TestManyLinesByHandNumberedAtOnce(t *testing.T) {
	f := newFixture(t)
	r := f.start()
	probe := filepath.Join(t.TempDir(), "probe")
	pf, err := os.Create(probe)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	for i := 0; i < 100; i++ {
		pf.Write([]byte{'x'})
		pf.Sync()
	}
	perSync := time.Since(t0) / 100
	pf.Close()
	fh, err := os.OpenFile(filepath.Join(f.dir, r.Path, "run.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	const n = 30000
	at := f.l.Now().UTC().Format("2006-01-02T15:04")
	w := bufio.NewWriter(fh)
	for i := 0; i < n; i++ {
		fmt.Fprintf(w, "{\"event\": \"step_completed\", \"timestamp\": %q, \"step\": \"do/1/work\", \"detail\": \"by hand %d\"}\n", at, i)
	}
	w.Flush()
	fh.Close()
	f.git("commit", "-qam", "lines by hand")
	bound := 15*time.Second + 3000*perSync
	t0 = time.Now()
	f.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_completed","step":"do/1/work","actor":"agent-7"}`, r.RunID))
	if took := time.Since(t0); took > bound {
		t.Fatalf("the boundary after %d lines by hand took %s, more than %s (a sync costs %s here)", n, took, bound, perSync)
	}
	if got := f.call("get_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, r.RunID)).(*Run).Events; got != n+2 {
		t.Fatalf("the run has %d events, want %d", got, n+2)
	}
}
