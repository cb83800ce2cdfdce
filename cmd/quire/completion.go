package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"quire/ledger"
	"quire/words/event"
	"quire/words/shape"
)

// `quire completion bash|zsh|fish` prints a completion script made from
// the commands themselves: each command path's subcommands and flags, and
// the values of the closed sets (--type, --status, --state, --how, a run's
// end status and transition, the shapes, the shells). The script is
// static: completing runs no quire.

// closedValues are the values a flag or a command's argument takes, where
// they are a closed set: the enum of the operation's argument the command
// calls, as the ledger declares it.
func closedValues() (flags map[string][]string, args map[string][]string) {
	flags = map[string][]string{
		"type":   enumOf("get_definition", "type"),
		"status": enumOf("list_runs", "status"),
		"state":  enumOf("list_runs", "state"),
		"how":    enumOf("resolve_comment", "how"),
		"scope":  ledger.Scopes,
	}
	args = map[string][]string{
		"/run/end":        enumOf("end_run", "status"),
		"/run/transition": enumOf("transition_run", "to"),
		"/shape/check":    shape.Names(),
		"/completion":     {"bash", "zsh", "fish"},
		"/run/event":      event.Recordable(),
		"/call":           opNames(),
	}
	return flags, args
}

// opNames are the operations' names, which quire call takes.
func opNames() []string {
	var out []string
	for _, op := range ledger.Ops() {
		out = append(out, op.Name)
	}
	return out
}

// enumOf is the closed set of an operation's argument.
func enumOf(op, arg string) []string {
	o, ok := ledger.Lookup(op)
	if !ok || o.Enums[arg] == nil {
		panic("quire: " + op + " has no closed set " + arg)
	}
	return o.Enums[arg]
}

type complNode struct {
	path  string // "/run/start"
	subs  []*cli.Command
	words []string // subcommands and argument values
	flags []cli.Flag
}

func complTree(root []*cli.Command, global []cli.Flag) []complNode {
	_, args := closedValues()
	var out []complNode
	var walk func(path string, cmds []*cli.Command, flags []cli.Flag)
	walk = func(path string, cmds []*cli.Command, flags []cli.Flag) {
		n := complNode{path: path, subs: cmds, flags: flags}
		for _, c := range cmds {
			if !c.Hidden {
				n.words = append(n.words, c.Name)
			}
		}
		n.words = append(n.words, args[path]...)
		out = append(out, n)
		for _, c := range cmds {
			if !c.Hidden {
				walk(path+"/"+c.Name, c.Subcommands, c.Flags)
			}
		}
	}
	walk("", root, global)
	return out
}

func flagWords(fs []cli.Flag) []string {
	var out []string
	for _, f := range visibleFlags(fs) {
		for _, n := range f.Names() {
			if len(n) == 1 {
				out = append(out, "-"+n)
			} else {
				out = append(out, "--"+n)
			}
		}
	}
	return append(out, "--help")
}

func completionCommand(e *env) *cli.Command {
	return &cli.Command{
		Name: "completion", Usage: "print a shell completion script: source <(quire completion bash), or into zsh's fpath or fish's completions",
		ArgsUsage: "bash|zsh|fish", Before: wantArgs(1, 1, "SHELL: bash, zsh or fish"),
		Action: func(c *cli.Context) error {
			tree := complTree(c.App.Commands, c.App.Flags)
			switch sh := c.Args().First(); sh {
			case "bash":
				writeBash(e.out, tree, false)
			case "zsh":
				writeBash(e.out, tree, true)
			case "fish":
				writeFish(e.out, tree)
			default:
				return &usageError{msg: fmt.Sprintf("%q is not a shell quire completes: bash, zsh or fish", sh), usage: usageOf(c.Command), path: "SHELL"}
			}
			return nil
		},
	}
}

func writeBash(w io.Writer, tree []complNode, zsh bool) {
	flagVals, _ := closedValues()
	if zsh {
		fmt.Fprintln(w, "#compdef quire\n# quire's completion for zsh, through bash's: eval \"$(quire completion zsh)\" in ~/.zshrc.\nautoload -U +X bashcompinit && bashcompinit")
	} else {
		fmt.Fprintln(w, "# quire's completion for bash: source <(quire completion bash), e.g. in ~/.bashrc.")
	}
	var paths []string
	for _, n := range tree {
		if n.path != "" {
			paths = append(paths, n.path)
		}
	}
	fmt.Fprintln(w, "_quire_complete() {")
	fmt.Fprintln(w, `  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" path="" w i words=""`)
	fmt.Fprintln(w, `  for ((i=1; i<COMP_CWORD; i++)); do`)
	fmt.Fprintln(w, `    w="${COMP_WORDS[i]}"`)
	fmt.Fprintln(w, `    case "$w" in -*) continue;; esac`)
	fmt.Fprintf(w, "    case \"$path/$w\" in\n      %s) path=\"$path/$w\";;\n    esac\n", strings.Join(paths, "|"))
	fmt.Fprintln(w, `  done`)
	fmt.Fprintln(w, `  case "$prev" in`)
	names := make([]string, 0, len(flagVals))
	for k := range flagVals {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(w, "    --%s) COMPREPLY=($(compgen -W %q -- \"$cur\")); return;;\n", k, strings.Join(flagVals[k], " "))
	}
	fmt.Fprintln(w, `  esac`)
	fmt.Fprintln(w, `  case "$path" in`)
	for _, n := range tree {
		fmt.Fprintf(w, "    %q) words=%q;;\n", n.path, strings.Join(append(n.words, flagWords(n.flags)...), " "))
	}
	fmt.Fprintln(w, `  esac`)
	fmt.Fprintln(w, `  COMPREPLY=($(compgen -W "$words" -- "$cur"))`)
	fmt.Fprintln(w, "}")
	fmt.Fprintln(w, "complete -o default -F _quire_complete quire")
}

func writeFish(w io.Writer, tree []complNode) {
	flagVals, _ := closedValues()
	fmt.Fprintln(w, "# quire's completion for fish: quire completion fish > ~/.config/fish/completions/quire.fish")
	var paths []string
	for _, n := range tree {
		if n.path != "" {
			paths = append(paths, fishQuote(n.path))
		}
	}
	fmt.Fprintf(w, "set -g __quire_paths %s\n", strings.Join(paths, " "))
	fmt.Fprintln(w, `function __quire_path
    set -l path ""
    for w in (commandline -opc)[2..-1]
        string match -q -- '-*' $w; and continue
        contains -- "$path/$w" $__quire_paths; and set path "$path/$w"
    end
    echo "$path"
end
complete -c quire -f`)
	usage := map[string]string{}
	for _, n := range tree {
		for _, c := range n.subs {
			usage[n.path+"/"+c.Name] = c.Usage
		}
	}
	for _, n := range tree {
		cond := fmt.Sprintf("test (__quire_path) = %s", fishQuote(n.path))
		for _, word := range n.words {
			fmt.Fprintf(w, "complete -c quire -n %s -a %s", fishQuote(cond), fishQuote(word))
			if u := usage[n.path+"/"+word]; u != "" {
				fmt.Fprintf(w, " -d %s", fishQuote(firstClause(u)))
			}
			fmt.Fprintln(w)
		}
		for _, f := range visibleFlags(n.flags) {
			names := f.Names()
			fmt.Fprintf(w, "complete -c quire -n %s -l %s", fishQuote(cond), names[0])
			for _, a := range names[1:] {
				if len(a) == 1 {
					fmt.Fprintf(w, " -s %s", a)
				}
			}
			if df, ok := f.(cli.DocGenerationFlag); ok {
				if df.TakesValue() {
					fmt.Fprint(w, " -r")
					if vals := flagVals[names[0]]; len(vals) > 0 {
						fmt.Fprintf(w, " -a %s", fishQuote(strings.Join(vals, " ")))
					}
				}
				if u := df.GetUsage(); u != "" {
					fmt.Fprintf(w, " -d %s", fishQuote(firstClause(u)))
				}
			}
			fmt.Fprintln(w)
		}
	}
}

func firstClause(s string) string {
	if i := strings.IndexAny(s, ":;("); i > 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

func fishQuote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}
