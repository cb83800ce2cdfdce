package main

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"quire/words/event"
)

// Every command says what it does, every flag what it takes; a required
// flag says so in its help.
func TestEveryFlagHasADescription(t *testing.T) {
	app := newApp(&env{})
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			p := path + " " + c.Name
			if c.Usage == "" {
				t.Errorf("%s has no usage", p)
			}
			for _, f := range c.Flags {
				df, ok := f.(cli.DocGenerationFlag)
				if !ok {
					continue
				}
				if df.GetUsage() == "" {
					t.Errorf("%s --%s has no description", p, f.Names()[0])
				}
			}
			walk(p, c.Subcommands)
		}
	}
	walk("quire", app.Commands)
	code, _, errs := quire(t, "", "run", "start")
	if code != 2 || !strings.Contains(errs, "--name value  the definition's name (required)") ||
		!strings.Contains(errs, "--type value  the definition's type: reasoning, lookup, interaction, prediction, computation, generation, workflow") {
		t.Errorf("run start's usage: %d\n%s", code, errs)
	}
}

// quire completion bash|zsh|fish prints a script naming the commands and
// the flags, and the closed sets' values; bash reads the bash one.
func TestCompletion(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		code, out, errs := quire(t, "", "completion", sh)
		if code != 0 || !strings.Contains(out, "definition") || !strings.Contains(out, "member-of") || !strings.Contains(out, "succeeded") {
			t.Fatalf("%s: %d %s %.300s", sh, code, errs, out)
		}
		if sh == "bash" {
			if bash, err := exec.LookPath("bash"); err == nil {
				cmd := exec.Command(bash, "-c", out+"\nCOMP_WORDS=(quire run en); COMP_CWORD=2; _quire_complete; echo \"${COMPREPLY[@]}\"\n"+
					"COMP_WORDS=(quire runs --status s); COMP_CWORD=3; _quire_complete; echo \"${COMPREPLY[@]}\"\n"+
					"COMP_WORDS=(quire run event verification_r); COMP_CWORD=3; _quire_complete; echo \"${COMPREPLY[@]}\"\n"+
					"COMP_WORDS=(quire call render_playbook_p); COMP_CWORD=2; _quire_complete; echo \"${COMPREPLY[@]}\"")
				got, err := cmd.CombinedOutput()
				if err != nil || string(got) != "end\nstarted succeeded\nverification_receipt\nrender_playbook_page\n" {
					t.Errorf("bash completes %q (%v)", got, err)
				}
			}
		}
	}
	// Every event type record_event takes, and every operation.
	_, out, _ := quire(t, "", "completion", "fish")
	for _, w := range append(event.Recordable(), opNames()...) {
		if !strings.Contains(out, "-a '"+w+"'") {
			t.Errorf("fish does not complete %s", w)
		}
	}
	if code, _, errs := quire(t, "", "completion", "tcsh"); code != 2 || !strings.Contains(errs, "bash, zsh or fish") {
		t.Errorf("tcsh: %d %s", code, errs)
	}
}

// quire X Y --help (and -h) shows the help of X Y: its name and what it
// does, and every flag of its own, whatever the depth of the command.
func TestEveryCommandsHelpIsItsOwn(t *testing.T) {
	t.Chdir(t.TempDir())
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			p := append(slices.Clip(path), c.Name)
			walk(p, c.Subcommands)
			for _, h := range []string{"--help", "-h"} {
				code, out, errs := quire(t, "", append(p[1:], h)...)
				name := strings.Join(p, " ")
				if code != 0 || !strings.Contains(out, "   "+name+" - "+c.Usage+"\n") {
					t.Errorf("%s %s: exit %d, not its help:\n%s%s", name, h, code, out, errs)
					continue
				}
				for _, f := range visibleFlags(c.Flags) {
					if !strings.Contains(out, "--"+f.Names()[0]+" ") {
						t.Errorf("%s %s does not show --%s:\n%s", name, h, f.Names()[0], out)
					}
				}
			}
		}
	}
	app := newApp(&env{})
	walk([]string{"quire"}, app.Commands)
	// The help of the command the word names, not of the one before it.
	if code, out, _ := quire(t, "", "run", "start", "--help"); code != 0 || !strings.Contains(out, "quire run start [command options]") ||
		strings.Contains(out, "COMMANDS:") {
		t.Errorf("quire run start --help: %d\n%s", code, out)
	}
}

// quire help begins with the way in: its getting-started lines are lines
// of README.md's "Using it", which walkthrough.txt runs, so they are true
// (TestREADMEWalkthrough holds the README to the script).
func TestHelpGettingStarted(t *testing.T) {
	t.Parallel()
	code, out, _ := quire(t, "", "help")
	scr, err := os.ReadFile("testdata/script/walkthrough.txt")
	if code != 0 || err != nil {
		t.Fatalf("quire help: %d %v", code, err)
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(string(scr), "\n") {
		lines[strings.Join(strings.Fields(l), " ")] = true
	}
	_, started, _ := strings.Cut(out, "Getting started")
	started, _, _ = strings.Cut(started, "COMMANDS:")
	n := 0
	for _, l := range strings.Split(started, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "quire ") {
			continue
		}
		n++
		l = strings.NewReplacer("<project uid>", "$PROJECT", "<run id>", "$RUN").Replace(l)
		if !lines[strings.Join(strings.Fields(l), " ")] {
			t.Errorf("quire help's %q is not a line of walkthrough.txt", l)
		}
	}
	if n < 8 {
		t.Errorf("quire help has %d getting-started lines:\n%s", n, out)
	}
}

// quire run event --help names every event type it records, and where the
// others go.
func TestRunEventHelpListsTheTypes(t *testing.T) {
	t.Parallel()
	_, out, _ := quire(t, "", "run", "event", "--help")
	for _, typ := range event.Recordable() {
		if !strings.Contains(out, typ) {
			t.Errorf("run event --help does not name %s:\n%s", typ, out)
		}
	}
	if !strings.Contains(out, "quire run end") {
		t.Errorf("run event --help does not say where a run's end goes:\n%s", out)
	}
}
