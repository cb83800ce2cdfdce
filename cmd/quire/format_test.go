package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"quire/internal/fixture"
)

// The runs of testdata/vault-format-1.tar.gz (testdata/vault-format.sh):
// one ended with an output, a thread and an artifact; one paused, with a
// line written by hand; one failed and archived.
const (
	fixtureComplete = "01a23279-a44d-754f-a2ed-4df0d3994c48"
	fixturePaused   = "01a23279-a54d-7c81-af28-0850f04fe1af"
	fixtureArchived = "01a23279-a624-7999-982a-36891eebdcc9"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// A vault of format 1, as the quire of its day left it, opens and reads
// through the CLI, and takes writes.
func TestVaultOfFormat1OpensAndReads(t *testing.T) {
	dir := fixture.Vault(t, 1)
	v := "--vault=" + dir
	expect := func(want string, args ...string) string {
		t.Helper()
		code, out, errs := quire(t, "", append([]string{v}, args...)...)
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("quire %s: %d\n%s%s\nwant %s", strings.Join(args, " "), code, out, errs, want)
		}
		return out
	}
	// The paused run recorded do/0/pick, a step fulfill-order's document
	// does not have: a warning, and no problem.
	expect("3 runs, 16 events, 0 problems, 1 warning\n", "check")
	expect("3 runs, 16 events, 0 problems, 1 warning\n", "check", "--history")
	runs := expect(fixtureComplete, "runs", "--playbook", "operations")
	for _, want := range []string{
		fixtureArchived + "  workflow/fulfill-order    1        archived  failed",
		fixturePaused + "  workflow/fulfill-order    1        paused    started",
		fixtureComplete + "  workflow/close-the-month  2        complete  succeeded",
	} {
		if !strings.Contains(runs, want) {
			t.Fatalf("runs:\n%s\nwant %s", runs, want)
		}
	}
	var run struct {
		Status string
		Output struct{ Revenue int }
	}
	out := expect(`"status": "succeeded"`, "call", "get_run", "--args", `{"playbook":"operations","run_id":"`+fixtureComplete+`"}`)
	if json.Unmarshal([]byte(out), &run) != nil || run.Output.Revenue != 182450 {
		t.Fatalf("get_run: %s", out)
	}
	// The views fold again from the history and the result renders.
	expect("2026-10 closed with $182,450 of revenue.", "page", "render", "--playbook", "operations", "--name", "close-the-month")
	// Version 1, read back from git by its blob.
	expect(`summary: Closes a month's books.`, "call", "get_definition", "--args", `{"playbook":"operations","type":"workflow","name":"close-the-month","version":1}`)
	// The line written by hand is the run's second event.
	expect(`"id": "`+fixturePaused+`_2"`, "call", "get_event", "--args", `{"playbook":"operations","event_id":"`+fixturePaused+`_2"}`)
	expect("Which entries were booked twice?", "comment", "list", "--playbook", "operations")
	expect("ana", "token", "list")

	// A write: the paused run resumes and ends, each a boundary committed.
	expect(`"state": "active"`, "run", "transition", "active", "--playbook", "operations", "--run", fixturePaused, "--actor", "agent-7", "--json")
	expect(`"status": "succeeded"`, "run", "end", "succeeded", "--playbook", "operations", "--run", fixturePaused, "--actor", "agent-7", "--json")
	expect("3 runs, 18 events, 0 problems, 1 warning\n", "check", "--history")
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("git status:\n%s", st)
	}
}

// A vault of a newer format is refused by every command that opens it,
// with what to do, and nothing is written.
func TestNewerFormatIsRefused(t *testing.T) {
	dir := fixture.Vault(t, 1)
	path := filepath.Join(dir, "quire.yaml")
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), "format: 1\n", "format: 2\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	head := git(t, dir, "rev-parse", "HEAD")
	msg := "this vault (" + dir + ") is format 2; this quire reads format 1 at most: install a newer quire to open it"
	for _, args := range [][]string{
		{"check"},
		{"check", "--history"},
		{"runs", "--playbook", "operations"},
		{"janitor"},
		{"reindex"},
		{"token", "list"},
		{"page", "render", "--playbook", "operations", "--name", "close-the-month"},
		{"run", "event", "step_started", "--playbook", "operations", "--run", fixturePaused, "--step", "do/0/pick", "--actor", "agent-7"},
		{"serve", "--addr", "127.0.0.1:0"},
		{"mcp"},
	} {
		code, out, errs := quire(t, "", append([]string{"--vault", dir}, args...)...)
		if code != 1 || out != "" || errs != "quire: "+msg+"\n" {
			t.Errorf("quire %s: %d\n%s%s", strings.Join(args, " "), code, out, errs)
		}
	}
	// quire call prints the refusal object.
	code, out, errs := quire(t, "", "--vault", dir, "call", "get_run", "--args", `{"playbook":"operations","run_id":"`+fixtureComplete+`"}`)
	var r struct {
		Error struct{ Code, Message string }
	}
	if code != 1 || json.Unmarshal([]byte(out), &r) != nil || r.Error.Code != "conflict" || r.Error.Message != msg || errs != "quire: "+msg+"\n" {
		t.Fatalf("call: %d %s%s", code, out, errs)
	}
	if h := git(t, dir, "rev-parse", "HEAD"); h != head {
		t.Fatalf("HEAD moved from %s to %s", head, h)
	}
	if st := git(t, dir, "status", "--porcelain"); st != " M quire.yaml\n" {
		t.Fatalf("git status:\n%s", st)
	}
}
