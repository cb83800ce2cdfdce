package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// Each flag's help that says who may do what is a claim about what the
// operation does, and each row here runs its claim through the CLI: the
// row holds the help's words, so a help that changes fails until its
// claim is run again (issue 27: run start --executor said "only they
// record its events", and another actor's step was accepted, since rule
// 4 covers transitions alone).
func TestEachHelpClaimIsTrue(t *testing.T) {
	t.Parallel()
	dir, v, project := newCLIVault(t)
	quire(t, "", v, "call", "create_playbook", "--args", `{"playbook":"finance","name":"Finance"}`)
	quire(t, "", v, "call", "create_definition", "--args", `{"playbook":"finance","type":"workflow","name":"close","source":"document:\n  name: close\n"}`)
	start := func(more ...string) string {
		t.Helper()
		code, out, errs := quire(t, "", append([]string{v, "run", "start", "--playbook", "finance", "--name", "close", "--member-of", project,
			"--executor", "agent-7", "--authorized-by", "ana", "--json"}, more...)...)
		var r struct {
			RunID string `json:"run_id"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
			t.Fatalf("run start: %d %s %s", code, out, errs)
		}
		return r.RunID
	}
	// does runs a command and says whether it was accepted; a refusal
	// must say why ("" for none expected).
	does := func(t *testing.T, why string, args ...string) bool {
		t.Helper()
		code, _, errs := quire(t, "", append([]string{v}, args...)...)
		if code != 0 && (why == "" || !strings.Contains(errs, why)) {
			t.Fatalf("quire %q refused, but not for %q: %s", args, why, errs)
		}
		return code == 0
	}
	run := func(id string, args ...string) []string {
		return append(args, "--playbook", "finance", "--run", id)
	}
	author := func() string { return gitIn(t, dir, "log", "-1", "--format=%an") }
	rule4 := "rule 4:"
	anyoneStepsOnlyTheTwoMove := func(t *testing.T) {
		id := start()
		if !does(t, rule4, run(id, "run", "event", "step_completed", "--step", "do/0/work", "--actor", "mallory")...) {
			t.Error("another actor's step was refused")
		}
		for _, step := range []struct {
			args  []string
			actor string
			ok    bool
		}{
			{[]string{"run", "transition", "paused"}, "mallory", false},
			{[]string{"run", "transition", "paused"}, "agent-7", true},
			{[]string{"run", "transition", "active"}, "mallory", false},
			{[]string{"run", "transition", "active"}, "ana", true},
			{[]string{"run", "end", "succeeded"}, "mallory", false},
			{[]string{"run", "end", "succeeded"}, "agent-7", true},
			{[]string{"run", "transition", "archived", "--reason", "closed"}, "mallory", false},
			{[]string{"run", "transition", "archived", "--reason", "closed"}, "ana", true},
		} {
			if got := does(t, rule4, run(id, append(step.args, "--actor", step.actor)...)...); got != step.ok {
				t.Errorf("%s by %s: accepted %v, the help says %v", strings.Join(step.args, " "), step.actor, got, step.ok)
			}
		}
	}
	claims := []struct {
		command, flag, says string
		check               func(t *testing.T)
	}{
		{"run start", "executor", "with --authorized-by, the only one who may pause, resume, end or archive it (rule 4)", anyoneStepsOnlyTheTwoMove},
		{"run event", "actor", "anyone records a step, but only the run's executor or its authorizer may pause, resume, end or archive it (rule 4)", anyoneStepsOnlyTheTwoMove},
		{"run start", "actor", "who starts it (the run created commit's author); --authorized-by when left out", func(t *testing.T) {
			start("--actor", "grace")
			if a := author(); a != "grace" {
				t.Errorf("run created by %s, not grace", a)
			}
			start()
			if a := author(); a != "ana" {
				t.Errorf("run created by %s, not its authorizer ana", a)
			}
		}},
		{"run end", "reason", "why it was rejected (a rejected run's reason; a failed one says it in --detail)", func(t *testing.T) {
			if does(t, "reason", run(start(), "run", "end", "failed", "--reason", "no data", "--actor", "agent-7")...) {
				t.Error("a failed run took a reason")
			}
			if !does(t, "", run(start(), "run", "end", "rejected", "--reason", "no data", "--actor", "agent-7")...) {
				t.Error("a rejected run refused its reason")
			}
		}},
		{"run end", "kind", "what kind of rejection (a rejected run's kind)", func(t *testing.T) {
			if does(t, "kind", run(start(), "run", "end", "failed", "--kind", "unworkable", "--actor", "agent-7")...) {
				t.Error("a failed run took a kind")
			}
			if !does(t, "", run(start(), "run", "end", "rejected", "--reason", "no data", "--kind", "unworkable", "--actor", "agent-7")...) {
				t.Error("a rejected run refused its kind")
			}
		}},
		{"project create", "actor", "who does it (the commit's author); quire when left out", func(t *testing.T) {
			for _, c := range []struct{ actor, want string }{{"grace", "grace"}, {"", "quire"}} {
				args := []string{v, "project", "create", "Project of " + c.want}
				if c.actor != "" {
					args = append(args, "--actor", c.actor)
				}
				if code, _, errs := quire(t, "", args...); code != 0 || author() != c.want {
					t.Errorf("project create --actor %q: %d %s, authored by %s", c.actor, code, errs, author())
				}
			}
		}},
		{"comment make", "author", "who comments", func(t *testing.T) {
			code, out, errs := quire(t, "", v, "comment", "make", "--playbook", "finance", "--address", "finance/runs/"+start(), "--author", "grace", "--json", "Check March.")
			if code != 0 || !strings.Contains(out, `"author": "grace"`) || author() != "grace" {
				t.Errorf("comment make --author grace: %d %s %s, committed by %s", code, out, errs, author())
			}
		}},
		{"serve", "addr", "without tokens, only a loopback address", func(t *testing.T) {
			if code, _, errs := quire(t, "", v, "serve", "--addr", "0.0.0.0:0"); code != 1 || !strings.Contains(errs, "no tokens") {
				t.Errorf("serve on every address without tokens: %d %s", code, errs)
			}
		}},
	}
	app := newApp(&env{})
	for _, c := range claims {
		t.Run(c.command+" --"+c.flag, func(t *testing.T) {
			if help := flagHelp(app.Commands, strings.Fields(c.command), c.flag); !strings.Contains(help, c.says) {
				t.Fatalf("the help of %s --%s is %q, not the claim run here, %q: run its claim again", c.command, c.flag, help, c.says)
			}
			c.check(t)
		})
	}
}

// flagHelp is the help of a command's flag, "" when there is none.
func flagHelp(cmds []*cli.Command, path []string, flag string) string {
	for _, c := range cmds {
		if c.Name != path[0] {
			continue
		}
		if len(path) > 1 {
			return flagHelp(c.Subcommands, path[1:], flag)
		}
		for _, f := range c.Flags {
			if df, ok := f.(cli.DocGenerationFlag); ok && f.Names()[0] == flag {
				return df.GetUsage()
			}
		}
	}
	return ""
}
