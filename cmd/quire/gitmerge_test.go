package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A git pull that stops on a conflict in a run's run.jsonl: every quire
// write is refused (conflict, naming the file and how to finish), nothing
// is written, .git/index keeps git's unmerged entries, and quire check
// says the merge is not finished. Once the person resolves it and commits,
// quire writes again.
func TestAPullStoppedOnAConflictStopsEveryWrite(t *testing.T) {
	t.Parallel()
	dir, v, runID := newCloseRun(t)
	event := func(step string) (int, string, string) {
		return quire(t, "", v, "run", "event", "step_completed", "--playbook", "finance", "--run", runID, "--step", step, "--actor", "agent-7")
	}
	// Another clone records a line of its own in the run's log.
	clone := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "-q", dir, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v %s", err, out)
	}
	m, _ := filepath.Glob(filepath.Join(clone, "playbook-runs", "close-"+runID+"-*", "run.jsonl"))
	logRel, _ := filepath.Rel(clone, m[0])
	logRel = filepath.ToSlash(logRel)
	f, _ := os.OpenFile(m[0], os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"event":"step_completed","timestamp":"2026-12-01T10:00:00Z","step":"do/9/elsewhere","detail":"on the other clone"}` + "\n")
	f.Close()
	gitIn(t, clone, "commit", "-q", "-am", "a line of the other clone")
	// quire records one here, then the pull meets the other clone's.
	if code, out, errs := event("do/1/a"); code != 0 {
		t.Fatalf("event: %s %s", out, errs)
	}
	pull := exec.Command("git", "-c", "pull.rebase=false", "pull", "-q", "--no-edit", clone, "main")
	pull.Dir = dir
	pull.Env = append(os.Environ(), "GIT_AUTHOR_NAME=ana", "GIT_AUTHOR_EMAIL=a@x", "GIT_COMMITTER_NAME=ana", "GIT_COMMITTER_EMAIL=a@x")
	if out, err := pull.CombinedOutput(); err == nil {
		t.Fatalf("the pull met no conflict: %s", out)
	}
	unmerged := gitIn(t, dir, "ls-files", "-u")
	head := gitIn(t, dir, "rev-parse", "HEAD")
	conflicted, _ := os.ReadFile(filepath.Join(dir, logRel))

	code, _, errs := event("do/2/b")
	if code != 1 {
		t.Fatalf("a write during the merge was not refused: exit %d", code)
	}
	for _, want := range []string{"git's merge is not finished: " + logRel + " is in conflict", "git merge --abort", "quire writes nothing until then"} {
		if !strings.Contains(errs, want) {
			t.Errorf("the refusal does not say %q: %s", want, errs)
		}
	}
	for _, args := range [][]string{
		{"call", "make_comment", "--args", `{"playbook":"finance","address":"playbooks/finance","text":"hi","author":"ana"}`},
		{"janitor"},
	} {
		if code, _, errs := quire(t, "", append([]string{v}, args...)...); code == 0 || !strings.Contains(errs, "git's merge is not finished") {
			t.Errorf("%v during the merge: exit %d %s", args, code, errs)
		}
	}
	_, out, _ := quire(t, "", v, "check", "--json")
	if !strings.Contains(out, "git's merge is not finished") {
		t.Errorf("quire check does not say the merge is in progress: %s", out)
	}
	if now := gitIn(t, dir, "ls-files", "-u"); now != unmerged {
		t.Errorf("quire changed git's unmerged entries:\n%s\nwas\n%s", now, unmerged)
	}
	if now := gitIn(t, dir, "rev-parse", "HEAD"); now != head {
		t.Errorf("HEAD moved during the merge")
	}
	if data, _ := os.ReadFile(filepath.Join(dir, logRel)); string(data) != string(conflicted) {
		t.Errorf("the conflicted run.jsonl was changed:\n%s", data)
	}

	// Reads answer meanwhile, with what HEAD and quire hold (the other
	// side's line is not theirs until the merge is made).
	for _, args := range [][]string{
		{"call", "get_run", "--args", `{"playbook":"finance","run_id":"` + runID + `"}`},
		{"call", "list_playbook_events", "--args", `{"playbook":"finance","run_id":"` + runID + `"}`},
		{"call", "list_runs", "--args", `{"playbook":"finance"}`},
	} {
		code, out, errs := quire(t, "", append([]string{v}, args...)...)
		if code != 0 || strings.Contains(out, "do/9/elsewhere") {
			t.Errorf("%s during the merge: %d %s %s", args[1], code, out, errs)
		}
		if args[1] == "list_playbook_events" && !strings.Contains(out, `"step": "do/1/a"`) {
			t.Errorf("%s during the merge lacks HEAD's event: %s", args[1], out)
		}
	}
	// The person aborts the merge: quire writes again.
	gitIn(t, dir, "merge", "--abort")
	if code, out, errs := event("do/2/b"); code != 0 {
		t.Fatalf("event after the merge was aborted: %s %s", out, errs)
	}
}

// After git reset --hard or git revert takes committed lines back, reads
// answer from the files as they now are: the histories follow git before
// they are read, not only at the next write.
func TestReadsFollowAResetAndARevert(t *testing.T) {
	t.Parallel()
	dir, v, run := newCloseRun(t)
	for _, step := range []string{"do/1/a", "do/2/b", "do/3/c"} {
		if code, out, errs := quire(t, "", v, "run", "event", "step_completed", "--playbook", "finance", "--run", run, "--step", step, "--actor", "agent-7"); code != 0 {
			t.Fatalf("event: %s %s", out, errs)
		}
	}
	count := func() int {
		t.Helper()
		code, out, errs := quire(t, "", v, "call", "list_playbook_events", "--args", `{"playbook":"finance"}`)
		var page struct{ Events []struct{ Type string } }
		if code != 0 || json.Unmarshal([]byte(out), &page) != nil {
			t.Fatalf("list_playbook_events: %d %s %s", code, out, errs)
		}
		return len(page.Events)
	}
	if n := count(); n != 6 {
		t.Fatalf("%d events, want 6", n)
	}
	gitIn(t, dir, "reset", "-q", "--hard", "HEAD~2")
	if n := count(); n != 4 {
		t.Fatalf("after the reset: %d events, want 4", n)
	}
	gitIn(t, dir, "revert", "--no-edit", "HEAD")
	if n := count(); n != 3 {
		t.Fatalf("after the revert: %d events, want 3", n)
	}
}

// Two clones of a vault each record an event of one run through quire,
// and the pull of one into the other meets a conflict in the run's
// run.jsonl, which the person resolves as git's union merge does (both
// sides' lines kept) and commits. quire check accepts the vault, the next
// write goes on from both sides' lines, nothing is quarantined, and every
// line of both sides is in the history once.
func TestAUnionResolvedPullIsAVault(t *testing.T) {
	t.Parallel()
	dir, v, runID := newCloseRun(t)
	clone := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "-q", dir, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v %s", err, out)
	}
	event := func(vault, step string) {
		t.Helper()
		if code, out, errs := quire(t, "", "--vault="+vault, "run", "event", "step_completed", "--playbook", "finance", "--run", runID, "--step", step, "--actor", "agent-7"); code != 0 {
			t.Fatalf("event: %s %s", out, errs)
		}
	}
	event(clone, "do/9/elsewhere")
	event(dir, "do/1/here")
	// Each also starts a run and comments (the index and the playbook's
	// events.jsonl meet too).
	project := gitIn(t, dir, "grep", "-h", "-o", `"uid":"[^"]*","type":"project"`, "--", "vault/00-index.jsonl")
	project = strings.TrimSuffix(strings.TrimPrefix(project, `"uid":"`), `","type":"project"`)
	for _, side := range []string{dir, clone} {
		if code, out, errs := quire(t, "", "--vault="+side, "run", "start", "--playbook", "finance", "--name", "close", "--member-of", project,
			"--executor", "agent-7", "--authorized-by", "ana"); code != 0 {
			t.Fatalf("run start: %s %s", out, errs)
		}
		if code, out, errs := quire(t, "", "--vault="+side, "call", "make_comment", "--args", `{"playbook":"finance","address":"finance/runs/`+runID+`","text":"seen on `+filepath.Base(side)+`","author":"ana"}`); code != 0 {
			t.Fatalf("comment: %s %s", out, errs)
		}
	}
	pull := exec.Command("git", "-c", "pull.rebase=false", "pull", "-q", "--no-edit", clone, "main")
	pull.Dir = dir
	pull.Env = append(os.Environ(), "GIT_AUTHOR_NAME=ana", "GIT_AUTHOR_EMAIL=a@x", "GIT_COMMITTER_NAME=ana", "GIT_COMMITTER_EMAIL=a@x")
	if out, err := pull.CombinedOutput(); err == nil {
		t.Fatalf("the pull met no conflict: %s", out)
	}
	// The person resolves each conflicted file: a log as union, derived
	// state as either side.
	for _, rel := range strings.Fields(gitIn(t, dir, "diff", "--name-only", "--diff-filter=U")) {
		if strings.HasSuffix(rel, ".jsonl") {
			var sides [3]string
			for i, stage := range []string{"2", "1", "3"} {
				sides[i] = filepath.Join(t.TempDir(), "side")
				show := exec.Command("git", "show", ":"+stage+":"+rel)
				show.Dir = dir
				data, err := show.Output()
				if err != nil {
					t.Fatalf("git show: %v", err)
				}
				os.WriteFile(sides[i], data, 0o644)
			}
			out, _ := exec.Command("git", "merge-file", "-p", "--union", sides[0], sides[1], sides[2]).Output()
			os.WriteFile(filepath.Join(dir, rel), out, 0o644)
		} else {
			gitIn(t, dir, "checkout", "--ours", "--", rel)
		}
		gitIn(t, dir, "add", rel)
	}
	commit := exec.Command("git", "commit", "-q", "--no-edit")
	commit.Dir = dir
	commit.Env = pull.Env
	if out, err := commit.CombinedOutput(); err != nil {
		t.Fatalf("git commit: %v %s", err, out)
	}
	if code, out, _ := quire(t, "", v, "check"); code != 0 {
		t.Errorf("check after the union merge: %s", out)
	}
	event(dir, "do/2/after")
	code, out, errs := quire(t, "", v, "call", "list_playbook_events", "--args", `{"playbook":"finance","run_id":"`+runID+`","limit":1000}`)
	if code != 0 {
		t.Fatalf("list: %s %s", out, errs)
	}
	for _, step := range []string{"do/9/elsewhere", "do/1/here", "do/2/after"} {
		if n := strings.Count(out, `"step": "`+step+`"`); n != 1 {
			t.Errorf("step %s is in the history %d times", step, n)
		}
	}
	if code, out, _ := quire(t, "", v, "call", "list_runs", "--args", `{"playbook":"finance"}`); code != 0 || strings.Count(out, `"run_id"`) != 3 {
		t.Errorf("the runs of both sides: %s", out)
	}
	if code, out, _ := quire(t, "", v, "call", "list_comments", "--args", `{"playbook":"finance"}`); code != 0 || !strings.Contains(out, "seen on vault") || !strings.Contains(out, "seen on clone") {
		t.Errorf("the comments of both sides: %s", out)
	}
	if q, _ := filepath.Glob(filepath.Join(dir, ".quire", "quarantine", "*")); len(q) > 0 {
		t.Errorf("quarantined: %v", q)
	}
	if code, out, _ := quire(t, "", v, "check", "--history"); code != 0 {
		t.Errorf("check --history after the next write: %s", out)
	}
}
