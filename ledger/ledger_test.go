package ledger

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire/fold"
	"quire/internal/gittest"
	"quire/vault"
	"quire/words/address"
	"quire/words/refusal"
)

// fixture is a vault with a project, a playbook and a workflow.
type fixture struct {
	t       testing.TB
	dir     string
	l       *Ledger
	project string
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	dir := t.TempDir()
	v, err := vault.Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, dir: dir, l: New(v)}
	t.Cleanup(func() { f.l.Close() })
	p := f.call("create_project", `{"name":"Operations"}`).(*Project)
	f.project = p.UID
	f.call("create_playbook", `{"playbook":"finance","name":"Finance"}`)
	f.call("create_definition", `{"playbook":"finance","type":"workflow","name":"close-the-month","source":"document:\n  name: close\n"}`)
	return f
}

func (f *fixture) call(op, args string) any {
	f.t.Helper()
	res, err := f.l.Call(context.Background(), op, json.RawMessage(args))
	if err != nil {
		f.t.Fatalf("%s %s: %v", op, args, err)
	}
	return res
}

// refuse calls an operation that must be refused with code at path.
func (f *fixture) refuse(op, args string, code refusal.Code, path string, words string) *refusal.Error {
	f.t.Helper()
	_, err := f.l.Call(context.Background(), op, json.RawMessage(args))
	r, ok := refusal.As(err)
	if !ok {
		f.t.Fatalf("%s %s: want a refusal %s, got %v", op, args, code, err)
	}
	if r.Code != code {
		f.t.Fatalf("%s %s: code %s, want %s (%s)", op, args, r.Code, code, r.Message)
	}
	if path != "" && (len(r.Issues) == 0 || r.Issues[0].Path != path) {
		f.t.Fatalf("%s: issues %+v, want path %s", op, r.Issues, path)
	}
	if !strings.Contains(r.Message, words) {
		f.t.Fatalf("%s: message %q lacks %q", op, r.Message, words)
	}
	return r
}

func (f *fixture) start() *Run {
	f.t.Helper()
	return f.call("run_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"close-the-month","member_of":[%q],"executor":"agent-7","authorized_by":"ana"}`, f.project)).(*Run)
}

func (f *fixture) git(args ...string) string {
	f.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = f.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		f.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (f *fixture) clean() {
	f.t.Helper()
	if s := f.git("status", "--porcelain"); s != "" {
		f.t.Fatalf("git status not clean:\n%s", s)
	}
	if out, err := gittest.Fsck(f.dir, "--strict"); err != nil {
		f.t.Fatalf("git fsck: %v\n%s", err, out)
	}
	rep, err := f.l.Check()
	if err != nil {
		f.t.Fatal(err)
	}
	if len(rep.Problems) > 0 {
		f.t.Fatalf("quire check: %v", rep.Problems)
	}
}

func TestRunFolderHoldsTheCapsule(t *testing.T) {
	f := newFixture(t)
	r := f.start()
	for _, name := range []string{"definition.md", "context.md", "thread.md", "run.jsonl", "run.state.json", "artifacts"} {
		if _, err := os.Stat(filepath.Join(f.dir, r.Path, name)); err != nil {
			t.Errorf("run folder lacks %s", name)
		}
	}
	if !strings.HasPrefix(r.Path, "playbook-runs/close-the-month-"+r.RunID+"-") {
		t.Errorf("folder %s", r.Path)
	}
	def, _ := os.ReadFile(filepath.Join(f.dir, r.Path, "definition.md"))
	for _, field := range []string{"playbook:", "playbook_version: \"1\"", "member_of:", "binding:", "started:", "executor: agent-7", "authorized_by: ana"} {
		if !strings.Contains(string(def), field) {
			t.Errorf("definition.md lacks %s:\n%s", field, def)
		}
	}
	first, _ := os.ReadFile(filepath.Join(f.dir, r.Path, "run.jsonl"))
	if !strings.HasPrefix(string(first), `{"event":"run_created","timestamp":`) || !strings.Contains(string(first), `"step":null`) {
		t.Errorf("run.jsonl: %s", first)
	}
	idx, _ := os.ReadFile(filepath.Join(f.dir, "vault/00-index.jsonl"))
	if !strings.Contains(string(idx), `"uid":"`+r.RunID+`","type":"playbook-run"`) {
		t.Errorf("index lacks the run:\n%s", idx)
	}
	f.clean()
	if log := f.git("log", "-1", "--format=%an|%s"); log != "ana|close-the-month "+r.RunID[len(r.RunID)-8:]+": run created\n" {
		t.Errorf("commit: %s", log)
	}
}

func TestEveryStandardEventAndUnknownOnes(t *testing.T) {
	f := newFixture(t)
	r := f.start()
	for _, typ := range []string{"step_started", "step_completed", "step_failed", "step_retrying", "step_dead_letter", "step_in_doubt", "step_skipped", "milestone_fired", "call_record", "verification_receipt", "compensation_started", "compensation_step_completed", "compensation_step_failed"} {
		step := ""
		if strings.HasPrefix(typ, "step_") {
			step = `,"step":"do/1/review"`
		}
		ev := f.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":%q,"actor":"agent-7"%s}`, r.RunID, typ, step)).(*RecordedEvent)
		if ev.Type != typ || ev.Source != "playbooks/finance" || ev.Seq == 0 {
			t.Errorf("%s: %+v", typ, ev)
		}
	}
	f.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"pause_started","actor":"agent-7"}`, r.RunID))
	f.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"pause_resumed","actor":"ana"}`, r.RunID))
	danced := f.refuse("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_danced","actor":"agent-7"}`, r.RunID), refusal.InvalidInput, "/event",
		"not an event type of the capsule; the types are step_started, step_completed, step_failed, step_retrying, step_dead_letter, step_in_doubt, step_skipped, "+
			"pause_started, pause_resumed, milestone_fired, call_record, verification_receipt, compensation_started, compensation_step_completed, compensation_step_failed")
	// It lists what it takes, not the types it then refuses.
	for _, not := range []string{"run_created", "archived", "run_succeeded"} {
		if strings.Contains(danced.Message, not) {
			t.Errorf("the refusal of an unknown type lists %s, which record_event refuses: %s", not, danced.Message)
		}
	}
	f.refuse("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_started","actor":"agent-7"}`, r.RunID), refusal.InvalidInput, "/step", "names its step")
	f.refuse("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"run_succeeded","actor":"agent-7"}`, r.RunID), refusal.InvalidInput, "/event", "end_run")
	f.refuse("record_event", `{"playbook":"finance","run_id":"019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3e","event":"step_started","step":"x","actor":"a"}`, refusal.NotFound, "", "has no run")
	f.refuse("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_started","step":"x","actor":"a","extra":1}`, r.RunID), refusal.InvalidInput, "/extra", "takes no argument")
	f.clean()
	page := f.call("list_playbook_events", fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, r.RunID)).(*EventPage)
	if len(page.Events) != 16 {
		t.Fatalf("%d events", len(page.Events))
	}
	for i, ev := range page.Events[1:] {
		if ev.Seq != page.Events[i].Seq+1 {
			t.Fatalf("seq %d after %d", ev.Seq, page.Events[i].Seq)
		}
	}
	got := f.call("get_event", fmt.Sprintf(`{"playbook":"finance","event_id":"%s_2"}`, r.RunID)).(*Event)
	if got.Type != "step_started" {
		t.Errorf("get_event: %+v", got)
	}
}

func TestGovernanceRules(t *testing.T) {
	f := newFixture(t)
	// Rule 1.
	f.refuse("run_definition", `{"playbook":"finance","type":"workflow","name":"close-the-month","member_of":[],"executor":"a","authorized_by":"b"}`, refusal.InvalidInput, "/member_of", "rule 1")
	f.refuse("run_definition", `{"playbook":"finance","type":"workflow","name":"close-the-month","member_of":["nope"],"executor":"a","authorized_by":"b"}`, refusal.InvalidInput, "/member_of/0", "rule 1")
	r := f.start()
	// Rule 2: a new version does not move the run.
	f.call("update_definition", `{"playbook":"finance","type":"workflow","name":"close-the-month","source":"document:\n  name: close v2\n"}`)
	if got := f.call("get_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, r.RunID)).(*Run); got.Version != 1 {
		t.Fatalf("version moved to %d", got.Version)
	}
	if r2 := f.start(); r2.Version != 2 {
		t.Fatalf("a new run pins %d", r2.Version)
	}
	// Rule 4.
	f.refuse("transition_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"to":"paused","actor":"mallory"}`, r.RunID), refusal.Forbidden, "", "rule 4")
	f.refuse("end_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"status":"failed","actor":"mallory"}`, r.RunID), refusal.Forbidden, "", "rule 4")
	// The state machine.
	f.refuse("transition_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"to":"active","actor":"ana"}`, r.RunID), refusal.Conflict, "", "only a paused run can resume")
	f.call("end_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"status":"succeeded","output":{"month":"2026-10"},"actor":"agent-7"}`, r.RunID))
	f.refuse("end_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"status":"failed","actor":"agent-7"}`, r.RunID), refusal.Conflict, "", "only an active run can fail")
	// An archive needs its reason, and writes it first.
	f.refuse("transition_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"to":"archived","actor":"ana"}`, r.RunID), refusal.InvalidInput, "/reason", "reason")
	f.call("transition_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"to":"archived","reason":"closed","actor":"ana"}`, r.RunID))
	log, _ := os.ReadFile(filepath.Join(f.dir, r.Path, "run.jsonl"))
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, `"event":"archived"`) || !strings.Contains(last, `"reason":"closed"`) {
		t.Fatalf("last line %s", last)
	}
	// Rule 5: archived is read-only.
	f.refuse("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"milestone_fired","actor":"ana"}`, r.RunID), refusal.Conflict, "", "rule 5")
	f.refuse("append_thread", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"text":"x","actor":"ana"}`, r.RunID), refusal.Conflict, "", "rule 5")
	f.refuse("put_artifact", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"name":"a.txt","content":"x"}`, r.RunID), refusal.Conflict, "", "rule 5")
	f.clean()
}

func TestArtifactsStayInside(t *testing.T) {
	f := newFixture(t)
	r := f.start()
	for _, bad := range []string{"../x", "/etc/passwd", "a/../../x", ".hidden", "a//b", "a\\b"} {
		f.refuse("put_artifact", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"name":%q,"content":"x"}`, r.RunID, bad), refusal.InvalidInput, "/name", "")
	}
	os.Symlink("/tmp", filepath.Join(f.dir, r.Path, "artifacts", "out"))
	f.refuse("put_artifact", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"name":"out/x.txt","content":"x"}`, r.RunID), refusal.InvalidInput, "/name", "symbolic link")
	os.Remove(filepath.Join(f.dir, r.Path, "artifacts", "out"))
	f.call("put_artifact", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"name":"report/summary.md","content":"# ok"}`, r.RunID))
	f.refuse("get_run", `{"playbook":"finance","run_id":"../../etc"}`, refusal.InvalidInput, "/run_id", "UUID")
	f.refuse("get_run", `{"playbook":"../x","run_id":"019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3e"}`, refusal.InvalidInput, "/playbook", "playbook id")
}

func TestLargeOutputKeptBesideTheEvent(t *testing.T) {
	f := newFixture(t)
	r := f.start()
	big := `{"text":"` + strings.Repeat("x", 300<<10) + `"}`
	got := f.call("end_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"status":"succeeded","output":%s,"actor":"agent-7"}`, r.RunID, big)).(*Run)
	if len(got.Output) != len(big) {
		t.Fatalf("output %d bytes, want %d", len(got.Output), len(big))
	}
	art, _ := os.ReadFile(filepath.Join(f.dir, r.Path, "artifacts", "output.json"))
	if string(art) != big {
		t.Fatal("artifacts/output.json does not hold the output")
	}
	log, _ := os.ReadFile(filepath.Join(f.dir, r.Path, "run.jsonl"))
	if !strings.Contains(string(log), `"output_size":`+fmt.Sprint(len(big))) {
		t.Fatal("the event does not carry the size")
	}
	f.clean()
}

func TestTimeMayNotGoBack(t *testing.T) {
	f := newFixture(t)
	r := f.call("run_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"close-the-month","member_of":[%q],"executor":"agent-7","authorized_by":"ana","time":"2026-10-01T09:00:00Z"}`, f.project)).(*Run)
	f.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_started","step":"a","actor":"agent-7","time":"2026-10-01T10:00:00Z"}`, r.RunID))
	f.refuse("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_completed","step":"a","actor":"agent-7","time":"2026-10-01T09:30:00Z"}`, r.RunID), refusal.InvalidInput, "/time", "may not go back")
	f.refuse("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_completed","step":"a","actor":"agent-7","time":"yesterday"}`, r.RunID), refusal.InvalidInput, "/time", "RFC 3339")
}

func TestDefinitionVersionsAndRetirement(t *testing.T) {
	f := newFixture(t)
	f.call("update_definition", `{"playbook":"finance","type":"workflow","name":"close-the-month","source":"document:\n  name: v2\n"}`)
	v1 := f.call("get_definition", `{"playbook":"finance","type":"workflow","name":"close-the-month","version":1}`).(*Definition)
	if v1.Source != "document:\n  name: close\n" || v1.Version != 1 || v1.Latest != 2 {
		t.Fatalf("version 1: %+v", v1)
	}
	f.refuse("create_definition", `{"playbook":"finance","type":"workflow","name":"close-the-month","source":"a: 1"}`, refusal.Conflict, "", "update_definition")
	f.refuse("create_definition", `{"playbook":"finance","type":"workflow","name":"Close","source":"a: 1"}`, refusal.InvalidInput, "/name", "not a name")
	f.refuse("create_definition", `{"playbook":"finance","type":"essay","name":"close","source":"a: 1"}`, refusal.InvalidInput, "/type", "not a type")
	f.refuse("create_definition", `{"playbook":"finance","type":"workflow","name":"broken","source":"a: [1,\n"}`, refusal.InvalidInput, "/source", "")
	f.refuse("create_definition", `{"playbook":"finance","type":"reasoning","name":"judge","source":"no front matter"}`, refusal.InvalidInput, "/source", "front matter")
	f.call("create_definition", `{"playbook":"finance","type":"reasoning","name":"judge","source":"---\nmodel: x\n---\nJudge it.\n"}`)
	f.call("retire_definition", `{"playbook":"finance","type":"workflow","name":"close-the-month"}`)
	f.refuse("run_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"close-the-month","member_of":[%q],"executor":"a","authorized_by":"b"}`, f.project), refusal.Conflict, "", "retired")
	defs := f.call("list_definitions", `{"playbook":"finance"}`).([]*Definition)
	if len(defs) != 2 || !defs[0].Retired {
		t.Fatalf("list: %+v", defs)
	}
	f.clean()
}

func TestJanitorArchivesIdleRuns(t *testing.T) {
	f := newFixture(t)
	old := f.call("run_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"close-the-month","member_of":[%q],"executor":"agent-7","authorized_by":"ana","time":"2026-01-01T09:00:00Z"}`, f.project)).(*Run)
	f.call("end_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"status":"failed","actor":"agent-7","time":"2026-01-01T10:00:00Z"}`, old.RunID))
	live := f.start()
	rep := f.call("archive_idle_runs", `{"now":"2026-04-01T10:00:00Z"}`).(*JanitorReport)
	if len(rep.Archived) != 1 || !strings.HasSuffix(rep.Archived[0], old.RunID) {
		t.Fatalf("archived %v", rep.Archived)
	}
	if got := f.call("get_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, old.RunID)).(*Run); got.State != "archived" || got.Status != "failed" {
		t.Fatalf("%+v", got)
	}
	if got := f.call("get_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, live.RunID)).(*Run); got.State != "active" {
		t.Fatalf("%+v", got)
	}
	f.refuse("transition_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"to":"archived","reason":"x","actor":"vault-janitor"}`, live.RunID), refusal.InvalidInput, "/actor", "reserved")
	f.clean()
}

func TestReindexRebuildsTheSameHistory(t *testing.T) {
	f := newFixture(t)
	r := f.start()
	f.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_completed","step":"a","actor":"agent-7"}`, r.RunID))
	before := f.call("list_playbook_events", `{"playbook":"finance"}`).(*EventPage)
	if err := f.l.Reindex(); err != nil {
		t.Fatal(err)
	}
	after := f.call("list_playbook_events", `{"playbook":"finance"}`).(*EventPage)
	b1, _ := json.Marshal(before)
	b2, _ := json.Marshal(after)
	if string(b1) != string(b2) {
		t.Fatalf("history changed:\n%s\n%s", b1, b2)
	}
	// The next event continues the seq.
	ev := f.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"milestone_fired","actor":"agent-7"}`, r.RunID)).(*RecordedEvent)
	if ev.Seq != int64(len(after.Events))+1 {
		t.Fatalf("seq %d after %d events", ev.Seq, len(after.Events))
	}
}

// The helper process of the fault tests: it appends events to one run and
// prints each seq once its call returned.
func TestMain(m *testing.M) {
	fold.ServeIfWorker()
	if os.Getenv("QUIRE_TEST_APPENDER") != "" {
		appender()
		return
	}
	// Every Ledger of the tests folds on one pool (views.go).
	p, err := fold.NewPool(fold.PoolOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	poolForTests = p
	code := m.Run()
	p.Close()
	os.Exit(code)
}

func appender() {
	l, err := Open(os.Getenv("QUIRE_TEST_VAULT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	run := os.Getenv("QUIRE_TEST_RUN")
	n := 0
	fmt.Sscan(os.Getenv("QUIRE_TEST_COUNT"), &n)
	w := bufio.NewWriter(os.Stdout)
	for i := 0; n == 0 || i < n; i++ {
		typ := "step_started"
		if i%10 == 9 {
			typ = "step_completed"
		}
		res, err := l.Call(context.Background(), "record_event", json.RawMessage(fmt.Sprintf(
			`{"playbook":"finance","run_id":%q,"event":%q,"step":"do/%d","actor":"agent-7"}`, run, typ, i)))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		fmt.Fprintln(w, res.(*RecordedEvent).ID)
		w.Flush()
	}
	l.Close()
}

func startAppender(t *testing.T, dir, run string, count int) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "QUIRE_TEST_APPENDER=1", "QUIRE_TEST_VAULT="+dir, "QUIRE_TEST_RUN="+run, fmt.Sprintf("QUIRE_TEST_COUNT=%d", count))
	return cmd
}

func TestEightProcessesLoseNothing(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("spawns 8 processes")
	}
	f := newFixture(t)
	// Eight writers each time; 500 events each with QUIRE_TEST_LONG, 60
	// in make test (each writer's lock is taken and given up as often
	// as the others' in both).
	const procs = 8
	each := 60
	if os.Getenv("QUIRE_TEST_LONG") != "" {
		each = 500
	}
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for i := 0; i < procs; i++ {
		r := f.start()
		cmd := startAppender(t, f.dir, r.RunID, each)
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("appender %d: %v\n%s", i, err, outs[i])
		}
	}
	page := f.call("list_playbook_events", `{"playbook":"finance","limit":1000}`).(*EventPage)
	total := int64(0)
	after := int64(0)
	for {
		for _, ev := range page.Events {
			total++
			if ev.Seq != total {
				t.Fatalf("seq %d at place %d", ev.Seq, total)
			}
		}
		if page.Next == 0 {
			break
		}
		after = page.Next
		page = f.call("list_playbook_events", fmt.Sprintf(`{"playbook":"finance","limit":1000,"after":%d}`, after)).(*EventPage)
	}
	// playbook_created, definition_saved, 8 run_created, then the appends.
	if want := int64(2 + procs + procs*each); total != want {
		t.Fatalf("%d events, want %d", total, want)
	}
	rep, _ := f.l.Check()
	if len(rep.Problems) > 0 {
		t.Fatalf("check: %v", rep.Problems)
	}
	if out, err := gittest.Fsck(f.dir, "--strict"); err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
}

func TestKilledMidStreamKeepsEveryAcknowledgedEvent(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process and kills it")
	}
	f := newFixture(t)
	r := f.start()
	cmd := startAppender(t, f.dir, r.RunID, 0)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked []string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		acked = append(acked, sc.Text())
		if len(acked) == 150 {
			cmd.Process.Kill()
			break
		}
	}
	cmd.Wait()
	// Tear the log the way a crash mid-write would.
	logPath := filepath.Join(f.dir, r.Path, "run.jsonl")
	fh, _ := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0)
	fh.WriteString(`{"event":"step_started","timest`)
	fh.Close()
	l2, err := Open(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	f.l = l2
	// The next write repairs the torn line.
	f.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_completed","step":"end","actor":"agent-7"}`, r.RunID))
	page := f.call("list_playbook_events", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"limit":1000}`, r.RunID)).(*EventPage)
	have := map[string]bool{}
	for i, ev := range page.Events {
		have[ev.ID] = true
		if i > 0 && ev.Seq != page.Events[i-1].Seq+1 {
			t.Fatalf("gap: seq %d after %d", ev.Seq, page.Events[i-1].Seq)
		}
	}
	for _, id := range acked {
		if !have[id] {
			t.Fatalf("acknowledged event %s lost", id)
		}
	}
	// The torn tail was kept aside, and check reports it (and nothing
	// else); or the kill fell between a reservation and its line, and the
	// tail went with the reservation, as unacknowledged, which is no
	// problem.
	rep, _ := f.l.Check()
	if len(rep.Problems) == 0 {
		if q, _ := filepath.Glob(filepath.Join(f.dir, ".quire", "quarantine", r.Path, "run.jsonl.*.unacknowledged")); len(q) == 1 {
			return
		}
	}
	if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0].Message, "a torn line cut from "+r.Path+"/run.jsonl") {
		t.Fatalf("check: %v", rep.Problems)
	}
}

// TestCancelRun: cancel_run ends a started run failed, of the kind
// cancelled, by its executor or authorizer alone (rule 4), committed.
func TestCancelRun(t *testing.T) {
	f := newFixture(t)
	run := f.start()
	f.refuse("cancel_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"actor":"mallory"}`, run.RunID), refusal.Forbidden, "", "")
	f.call("transition_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"to":"paused","actor":"agent-7"}`, run.RunID))
	f.refuse("cancel_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"actor":"ana"}`, run.RunID), refusal.Conflict, "", "only an active run can fail")
	f.call("transition_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"to":"active","actor":"agent-7"}`, run.RunID))
	got := f.call("cancel_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"detail":"the month was closed by hand","actor":"ana"}`, run.RunID)).(*Run)
	if got.Status != "failed" || got.State != "failed" || got.Kind != "cancelled" || got.Detail != "the month was closed by hand" {
		t.Fatalf("cancelled: %+v", got)
	}
	if read := f.call("get_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, run.RunID)).(*Run); read.Kind != "cancelled" || read.Status != "failed" {
		t.Fatalf("get_run: %+v", read)
	}
	if log := f.git("log", "-1", "--format=%s"); log != "close-the-month "+run.RunID[len(run.RunID)-8:]+": run failed\n" {
		t.Fatalf("no commit: %s", log)
	}
	f.refuse("cancel_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"actor":"ana"}`, run.RunID), refusal.Conflict, "", "")
	f.clean()
}

// TestExplainAddressNamesServedTools: explain_address names only tools of
// this server's table; the spec's others are marked not served here.
func TestExplainAddressNamesServedTools(t *testing.T) {
	f := newFixture(t)
	run := f.start()
	seen := map[string]bool{}
	for _, a := range []string{"finance/runs/" + run.RunID, "finance/interactions", "org/connections", "org/members/ana", "finance/settings", "org/settings/licenses", "finance/definitions/workflow/close-the-month"} {
		res, err := f.l.Call(context.Background(), "explain_address", json.RawMessage(fmt.Sprintf(`{"address":%q}`, a)))
		if err != nil {
			continue // a form this address package does not take
		}
		ex := res.(*address.Explanation)
		calls := append(append([]address.Call{}, ex.Read...), ex.Act...)
		if ex.Resolve != nil {
			calls = append(calls, *ex.Resolve)
		}
		for _, c := range calls {
			if c.Tool != "" {
				if _, ok := Lookup(c.Tool); !ok {
					t.Errorf("%s: names %s, which this server does not serve", a, c.Tool)
				}
				seen[c.Tool] = true
			}
			if c.NotServed && (c.Tool != "" || !strings.Contains(c.Note, "is not served here")) {
				t.Errorf("%s: %+v", a, c)
			}
			if c.NotServed {
				seen["not served"] = true
			}
		}
	}
	if !seen["cancel_run"] || !seen["not served"] {
		t.Fatalf("seen %v", seen)
	}
}
