package ledger

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"quire/vault"
	"quire/words/address"
)

// listed is a list of runs as a test compares them: each page's runs
// (id, status, state, executor), its next and remaining.
func listed(p *RunPage) string {
	var b strings.Builder
	for _, r := range p.Runs {
		fmt.Fprintf(&b, "%s %s %s %s; ", r.RunID, r.Status, r.State, r.Executor)
	}
	fmt.Fprintf(&b, "next %q remaining %d", p.Next, p.Remaining)
	return b.String()
}

// fullList is what list_runs answers for a filter read from every run:
// the runs of the list without the filter, filtered here, their
// headlines rendered here (heads, one a run of all) for words.
func fullList(all []*Run, heads []string, status, state, executor string, words []string, limit int) string {
	out := &RunPage{Runs: []*Run{}}
	for i, r := range all {
		if len(out.Runs) == limit {
			out.Next, out.Remaining = r.RunID, len(all)-i
			break
		}
		if (status == "" || r.Status == status) && (state == "" || r.State == state) && (executor == "" || r.Executor == executor) &&
			(len(words) == 0 || holdsWords(heads[i], words)) {
			out.Runs = append(out.Runs, r)
		}
	}
	return listed(out)
}

// reportPages are the pages the history gives the definition report in
// turn: its headlines change with them (one reads the clock, one is no
// page at all).
var reportPages = []string{
	"page:\n  result: |\n    {% if run.status == \"started\" %}Reporting{% else %}Report {{ output.word }} {{ run.status }}{% endif %}\n",
	"page:\n  result: |\n    {{ output.word | upcase }} and beta\n",
	"page:\n  result: |\n    {{ output.word }} in {{ \"now\" | date: \"%Y\" }}\n",
	"",
}

// searches are the words list_runs is asked for in the history.
var searches = []string{"alpha", "BETA", "report", "reporting", "alpha succeeded", "gamma", "2026", "no such words"}

// TestRunFactsAnswerAsTheFiles records random histories through quire
// (from two ledgers, as two processes) and by hand with the git CLI
// (commits of lines written by hand, resets, pulls from a clone), and
// after each step asks list_runs every filter of status, state and
// executor: what it answers from the runs' facts (runindex.go) is what
// reading every run answers.
func TestRunFactsAnswerAsTheFiles(t *testing.T) {
	// Each step asks some filters at random (every one, with the long
	// variant), and every one at the end.
	steps, seeds, filters := 12, 1, 6
	if os.Getenv("QUIRE_TEST_LONG") != "" {
		steps, seeds, filters = 100, 6, 60
	}
	for seed := int64(1); seed <= int64(seeds); seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runFactsHistory(t, seed, steps, filters) })
	}
}

func runFactsHistory(t *testing.T, seed int64, steps, filters int) {
	rng := rand.New(rand.NewSource(seed))
	f := newFixture(t)
	f.git("config", "user.name", "rui")
	f.git("config", "user.email", "rui@example.com")
	other, err := Open(f.dir) // a second process's ledger
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	ledgers := []*Ledger{f.l, other}
	var did []string
	page := 0
	f.call("create_definition", saveArgs("workflow", "report", "document:\n  name: report\n"+reportPages[page]))
	for step := 0; step < steps; step++ {
		runs := f.call("list_runs", `{"playbook":"finance","limit":1000}`).(*RunPage).Runs
		var started, active []*Run
		for _, r := range runs {
			if r.Status == "started" && r.State != "archived" {
				started = append(started, r)
			}
			if r.State == "active" {
				active = append(active, r)
			}
		}
		l := ledgers[rng.Intn(2)]
		pick := func(rs []*Run) *Run { return rs[rng.Intn(len(rs))] }
		on := func(r *Run) string { return fmt.Sprintf(`"playbook":"finance","run_id":%q,"actor":"ana"`, r.RunID) }
		switch k := rng.Intn(10); {
		case k < 3 || len(runs) == 0:
			def := []string{"close-the-month", "report"}[rng.Intn(2)]
			callOn(t, l, "run_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":%q,"member_of":[%q],"executor":"agent-%d","authorized_by":"ana"}`, def, f.project, rng.Intn(3)))
			did = append(did, "start")
		case k == 3 && len(active) > 0:
			word := []string{"alpha", "beta", "gamma"}[rng.Intn(3)]
			end := []string{`"status":"succeeded","output":{"word":"` + word + `"}`, `"status":"failed","detail":"no"`, `"status":"rejected","reason":"conflict"`}[rng.Intn(3)]
			callOn(t, l, "end_run", "{"+on(pick(active))+","+end+"}")
			did = append(did, "end")
		case k == 4 && len(started) > 0:
			r := pick(started)
			to := "paused"
			if r.State == "paused" {
				to = "active"
			}
			callOn(t, l, "transition_run", "{"+on(r)+fmt.Sprintf(`,"to":%q,"reason":"waits"`, to)+"}")
			did = append(did, to)
		case k == 5:
			r := pick(runs)
			if r.State == "archived" {
				continue
			}
			if r.State == "paused" {
				callOn(t, l, "transition_run", "{"+on(r)+`,"to":"active"}`)
			}
			if r.Status == "started" {
				callOn(t, l, "end_run", "{"+on(r)+`,"status":"succeeded","output":{}}`)
			}
			callOn(t, l, "transition_run", "{"+on(r)+`,"to":"archived","reason":"done"}`)
			did = append(did, "archive")
		case k == 6 && len(active) > 0:
			// A run ended by a line written by hand, committed with git.
			f.handWrite(pick(active), "run_failed", "", "failed by hand")
			f.git("commit", "-qam", "a run failed by hand")
			did = append(did, "git commit")
		case k == 7:
			back := 1 + rng.Intn(3)
			if n := strings.Count(f.git("log", "--oneline"), "\n"); n > back+4 {
				f.git("reset", "-q", "--hard", fmt.Sprintf("HEAD~%d", back))
				did = append(did, fmt.Sprintf("git reset HEAD~%d", back))
				if rng.Intn(2) == 0 {
					// Runs started past where the index was before the
					// reset: lines the ledgers last read, others now.
					for range back + 1 {
						callOn(t, l, "run_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"close-the-month","member_of":[%q],"executor":"agent-1","authorized_by":"ana"}`, f.project))
					}
					did = append(did, fmt.Sprintf("%d starts", back+1))
				}
			}
		case k == 8:
			pullFromClone(t, f, rng)
			did = append(did, "git pull")
		case k == 9 && rng.Intn(3) == 0:
			page = (page + 1) % len(reportPages)
			callOn(t, l, "update_definition", saveArgs("workflow", "report", "document:\n  name: report\n"+reportPages[page]))
			did = append(did, fmt.Sprintf("page %d", page))
		default:
			if r := pick(runs); r.State == "active" {
				callOn(t, l, "record_event", "{"+on(r)+`,"event":"step_completed","step":"do/1/work"}`)
				did = append(did, "step")
			}
		}
		for _, l := range ledgers {
			compareFacts(t, l, did, rng, filters)
			compareEventFiles(t, l, did)
		}
	}
	// Gone, the facts are made again from the files.
	os.RemoveAll(filepath.Join(f.dir, runsIndexDir))
	compareFacts(t, f.l, append(did, "facts removed"), rng, 1000)
}

// compareEventFiles holds the event files l keeps of the playbook
// (eventFiles) to those read anew from the index's lines.
func compareEventFiles(t *testing.T, l *Ledger, did []string) {
	t.Helper()
	got, err := historySource{l}.Files("finance")
	if err != nil {
		t.Fatal(err)
	}
	runs, err := l.v.Find(func(e *vault.Entry) bool { return e.Type == "playbook-run" && e.Playbook == "finance" })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"playbooks/finance/events.jsonl"}
	for _, r := range runs {
		want = append(want, r.Path+"/run.jsonl")
	}
	if !slices.Equal(got, want) {
		t.Fatalf("after %v\nthe event files kept:\n%q\nread anew:\n%q", did, got, want)
	}
}

// pullFromClone makes a clone of the vault, records a few events there
// through its own ledger and pulls them back with the git CLI.
func pullFromClone(t *testing.T, f *fixture, rng *rand.Rand) {
	t.Helper()
	clone := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "-q", f.dir, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	l, err := Open(clone)
	if err != nil {
		t.Fatal(err)
	}
	r := callOn(t, l, "run_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"close-the-month","member_of":[%q],"executor":"agent-%d","authorized_by":"ana"}`, f.project, rng.Intn(3))).(*Run)
	if rng.Intn(2) == 0 {
		callOn(t, l, "end_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"actor":"ana","status":"failed","detail":"in the clone"}`, r.RunID))
	}
	l.Close()
	f.git("pull", "-q", "--ff-only", clone, "main")
}

func callOn(t *testing.T, l *Ledger, op, args string) any {
	t.Helper()
	f := &fixture{t: t, l: l}
	return f.call(op, args)
}

// compareFacts asks l n filters at random (every one, when n is as many
// or more) and compares its answers with the full read's.
func compareFacts(t *testing.T, l *Ledger, did []string, rng *rand.Rand, n int) {
	t.Helper()
	all := callOn(t, l, "list_runs", `{"playbook":"finance","limit":1000}`).(*RunPage).Runs
	heads := l.Headlines(all)
	const every = 5 * 6 * 3 * 2 * 3
	for _, status := range []string{"", "started", "succeeded", "failed", "rejected"} {
		for _, state := range []string{"", "active", "paused", "complete", "failed", "archived"} {
			for _, executor := range []string{"", "agent-0", "agent-2"} {
				for _, limit := range []int{2, 1000} {
					for _, search := range []string{"", searches[rng.Intn(len(searches))], searches[rng.Intn(len(searches))]} {
						if status == "" && state == "" && executor == "" && search == "" || n < every && rng.Intn(every) >= n {
							continue
						}
						args := fmt.Sprintf(`{"playbook":"finance","status":%q,"state":%q,"executor":%q,"search":%q,"limit":%d}`, status, state, executor, search, limit)
						got := listed(callOn(t, l, "list_runs", args).(*RunPage))
						if want := fullList(all, heads, status, state, executor, strings.Fields(strings.ToLower(search)), limit); got != want {
							t.Fatalf("after %v\nlist_runs %s:\n got %s\nwant %s", did, args, got, want)
						}
					}
				}
			}
		}
	}
}

// TestRunFactsKeptByQuiresCommits: once made, the facts follow quire's
// own commits without a read catching up, and a run they no longer
// know (its folder gone) is read, and answers what reading it says.
func TestRunFactsKeptByQuiresCommits(t *testing.T) {
	f := newFixture(t)
	r := f.start()
	f.call("list_runs", `{"playbook":"finance","status":"started"}`)
	f.call("end_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"status":"failed","detail":"no","actor":"agent-7"}`, r.RunID))
	head := strings.TrimSpace(f.git("rev-parse", "HEAD"))
	if b, _ := os.ReadFile(filepath.Join(f.dir, runsIndexDir, "head")); strings.TrimSpace(string(b)) != head {
		t.Fatalf("%s/head is %q after quire's commit, HEAD %s", runsIndexDir, b, head)
	}
	p := f.call("list_runs", `{"playbook":"finance","status":"failed"}`).(*RunPage)
	if len(p.Runs) != 1 || p.Runs[0].RunID != r.RunID {
		t.Fatalf("failed runs: %s", listed(p))
	}
	if p := f.call("list_runs", `{"playbook":"finance","status":"started"}`).(*RunPage); len(p.Runs) != 0 {
		t.Fatalf("started runs: %s", listed(p))
	}
	// The facts alone gone: read from the files, then made again.
	os.Remove(filepath.Join(f.dir, runsIndexDir, "facts.jsonl"))
	for i := 0; i < 2; i++ {
		if p := f.call("list_runs", `{"playbook":"finance","status":"failed"}`).(*RunPage); len(p.Runs) != 1 {
			t.Fatalf("failed runs, facts.jsonl removed (%d): %s", i, listed(p))
		}
	}
	if _, err := os.Stat(filepath.Join(f.dir, runsIndexDir, "facts.jsonl")); err != nil {
		t.Fatalf("facts.jsonl not made again: %v", err)
	}
	// The folder gone without a commit: list_runs reads it, as before.
	os.RemoveAll(filepath.Join(f.dir, filepath.FromSlash(r.Path)))
	if _, err := f.l.Call(t.Context(), "list_runs", []byte(`{"playbook":"finance","status":"failed"}`)); err == nil {
		t.Fatal("list_runs answers a run whose folder is gone")
	}
}

// TestSearchedHeadlinesThatReadTheClock: a headline rendered from the
// clock is rendered at each search, never answered from one kept.
func TestSearchedHeadlinesThatReadTheClock(t *testing.T) {
	f := newFixture(t)
	f.call("create_definition", saveArgs("workflow", "dated", "document:\n  name: dated\n"+
		"page:\n  result: |\n    Done in {{ \"now\" | date: \"%Y\" }}.\n"))
	r := callOn(t, f.l, "run_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"dated","member_of":[%q],"executor":"agent-1","authorized_by":"ana"}`, f.project)).(*Run)
	f.call("end_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"actor":"ana","status":"succeeded","output":{}}`, r.RunID))
	for _, year := range []int{2030, 2031} {
		f.l.Now = func() time.Time { return time.Date(year, 6, 1, 0, 0, 0, 0, time.UTC) }
		for _, search := range []string{"2030", "2031"} {
			p := f.call("list_runs", fmt.Sprintf(`{"playbook":"finance","search":%q}`, search)).(*RunPage)
			if want := fmt.Sprint(year) == search; (len(p.Runs) == 1) != want {
				t.Fatalf("in %d, search %s: %s", year, search, listed(p))
			}
		}
	}
}

// TestRunFactsOfAnotherFormMadeAgain: facts.jsonl written by an earlier
// quire (no form on its nonce line, no sums) is made again, not built on.
func TestRunFactsOfAnotherFormMadeAgain(t *testing.T) {
	f := newFixture(t)
	r := f.start()
	f.call("list_runs", `{"playbook":"finance","status":"started"}`)
	abs := filepath.Join(f.dir, runsIndexDir, "facts.jsonl")
	old := fmt.Sprintf("{\"nonce\":\"0011223344556677\"}\n{\"uid\":%q,\"status\":\"failed\",\"state\":\"failed\",\"executor\":\"x\"}\n", r.RunID)
	if err := os.WriteFile(abs, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	other, err := Open(f.dir) // a process that has not read the file yet
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if p := callOn(t, other, "list_runs", `{"playbook":"finance","status":"started"}`).(*RunPage); len(p.Runs) != 1 {
		t.Fatalf("started runs from facts of another form: %s", listed(p))
	}
	if b, _ := os.ReadFile(abs); !strings.Contains(string(b), `"v":2`) || !strings.Contains(string(b), `"sum"`) {
		t.Fatalf("facts.jsonl not made again:\n%s", b)
	}
}

// FuzzRunKey: a run's id is its key's 16 bytes, and only a UUID in
// lowercase has one.
func FuzzRunKey(f *testing.F) {
	for _, s := range []string{"019a4012-7c3e-7d10-9b2a-00000000036b", "01a23b0b-92fe-73f9-9403-073f60b0b4af", "019A4012-7c3e-7d10-9b2a-00000000036b", "", "0-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uid string) {
		k, ok := keyOf(uid)
		if ok != address.ValidLowerUUID(uid) {
			t.Fatalf("keyOf(%q) ok %v", uid, ok)
		}
		if ok && hex.EncodeToString(k[:]) != strings.ReplaceAll(uid, "-", "") {
			t.Fatalf("keyOf(%q) = %x", uid, k)
		}
	})
}

// keyOf answers what a check of the id (address.ValidLowerUUID) and a
// parse of its hex would, for UUIDs and for ids that only nearly are.
func TestKeyOfIsTheUUIDsBytes(t *testing.T) {
	rng := rand.New(rand.NewSource(16))
	const alphabet = "0123456789abcdefABCDEF-g "
	for round := 0; round < 20000; round++ {
		b := []byte("019a4012-7c3e-7d10-9b2a-000000000000")
		for i := range b {
			if b[i] != '-' {
				b[i] = "0123456789abcdef"[rng.Intn(16)]
			}
		}
		for n := rng.Intn(3); n > 0; n-- {
			b[rng.Intn(len(b))] = alphabet[rng.Intn(len(alphabet))]
		}
		id := string(b)
		if rng.Intn(20) == 0 {
			id = id[:rng.Intn(len(id))]
		}
		got, ok := keyOf(id)
		want, err := hex.DecodeString(strings.ReplaceAll(id, "-", ""))
		wantOK := address.ValidLowerUUID(id) && err == nil
		if ok != wantOK || ok && !bytes.Equal(got[:], want) {
			t.Fatalf("keyOf(%q) = %x, %v; want %x, %v", id, got, ok, want, wantOK)
		}
	}
}
