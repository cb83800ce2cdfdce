package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
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
					"COMP_WORDS=(quire runs --status s); COMP_CWORD=3; _quire_complete; echo \"${COMPREPLY[@]}\"")
				got, err := cmd.CombinedOutput()
				if err != nil || string(got) != "end\nstarted succeeded\n" {
					t.Errorf("bash completes %q (%v)", got, err)
				}
			}
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
