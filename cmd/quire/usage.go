package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"quire/words/near"
)

// usageError is a command used wrongly: an unknown command or flag, a
// missing argument or required flag. It exits 2 and prints its one line
// and the usage of that command (not the whole help) on standard error, as
// git and kubectl do; a refusal of the ledger exits 1.
type usageError struct {
	msg   string
	usage string
	// path is where the refusal object (with --json) puts the issue: the
	// flag or argument at fault.
	path string
}

func (u *usageError) Error() string { return u.msg }

// usageOf is a command's usage: its synopsis, and its flags one a line.
func usageOf(cmd *cli.Command) string {
	var b strings.Builder
	name := helpName(cmd)
	syn := name
	if len(cmd.Subcommands) > 0 {
		syn += " COMMAND"
	}
	if len(visibleFlags(cmd.Flags)) > 0 {
		syn += " [flags]"
	}
	if cmd.ArgsUsage != "" {
		syn += " " + cmd.ArgsUsage
	}
	fmt.Fprintf(&b, "usage: %s\n", syn)
	if len(cmd.Subcommands) > 0 {
		fmt.Fprintf(&b, "commands: %s\n", strings.Join(commandNames(cmd.Subcommands), ", "))
	}
	for _, f := range visibleFlags(cmd.Flags) {
		fmt.Fprintf(&b, "  %s\n", strings.ReplaceAll(f.String(), "\t", "  "))
	}
	fmt.Fprintf(&b, "Run '%s --help' for more.\n", name)
	return b.String()
}

func visibleFlags(fs []cli.Flag) []cli.Flag {
	var out []cli.Flag
	for _, f := range fs {
		if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
			continue
		}
		if f == cli.HelpFlag {
			continue
		}
		out = append(out, f)
	}
	return out
}

func commandNames(cmds []*cli.Command) []string {
	var out []string
	for _, c := range cmds {
		if !c.Hidden {
			out = append(out, c.Name)
		}
	}
	return out
}

// unknownCommand is the usage error of a name that is no command of cmd.
func unknownCommand(name string, parent *cli.Command) error {
	msg := fmt.Sprintf("%q is not a command of %s", name, helpName(parent))
	if n := near.Closest(name, commandNames(parent.Subcommands)); n != "" {
		msg += fmt.Sprintf("; did you mean %q?", n)
	}
	return &usageError{msg: msg, usage: usageOf(parent), path: "COMMAND"}
}

// paths are the commands' full names ("quire run end"), set by prepare:
// urfave/cli sets HelpName itself as it runs, not always to the path.
// paths are the commands' paths ("quire run end") by command, for their
// usage; prepare fills them, forgetPaths lets go of an app's.
var paths sync.Map

func helpName(cmd *cli.Command) string {
	if p, ok := paths.Load(cmd); ok {
		return p.(string)
	}
	if cmd.Name == "quire" {
		return "quire" // the root (newApp's), made anew at each use
	}
	return "quire " + cmd.Name
}

// forgetPaths lets go of the paths of commands and their subcommands,
// for a process that makes an app per call (the resident's verbs), which
// would otherwise keep every app it made.
func forgetPaths(cmds []*cli.Command) {
	for _, cmd := range cmds {
		paths.Delete(cmd)
		forgetPaths(cmd.Subcommands)
	}
}

// prepare walks the commands once they are all made and gives each the
// behaviour every command shares:
//   - a flag that does not parse is a usage error naming the nearest flag;
//   - a required flag left out is a usage error naming every one missing
//     (urfave/cli would print the whole help on standard output), and its
//     help says "(required)";
//   - a command of commands run without one, or with an unknown one, is a
//     usage error with the nearest ("did you mean");
//   - --json everywhere: a command that has no flag of that name gets one,
//     for the refusal object (and the answer, where it prints one).
func prepare(cmds []*cli.Command, parent string) {
	for _, cmd := range cmds {
		cmd := cmd
		path := parent + " " + cmd.Name
		paths.Store(cmd, path)
		cmd.HideHelpCommand = true
		hadAction := cmd.Action != nil
		cmd.OnUsageError = func(c *cli.Context, err error, _ bool) error {
			msg := err.Error()
			if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
				name = strings.TrimLeft(name, "-")
				msg = fmt.Sprintf("%s has no flag --%s", path, name)
				var names []string
				for _, f := range cmd.Flags {
					names = append(names, f.Names()...)
				}
				if n := near.Closest(name, names); n != "" {
					msg += fmt.Sprintf("; did you mean --%s?", n)
				}
			}
			return &usageError{msg: msg, usage: usageOf(cmd), path: "FLAGS"}
		}
		if len(cmd.Subcommands) > 0 {
			prepare(cmd.Subcommands, path)
			if cmd.Action == nil {
				cmd.Action = func(c *cli.Context) error {
					if c.NArg() > 0 {
						return unknownCommand(c.Args().First(), cmd)
					}
					return &usageError{msg: path + " needs a command", usage: usageOf(cmd), path: "COMMAND"}
				}
			}
		}
		hasJSON := false
		var required []string
		for _, f := range cmd.Flags {
			for _, n := range f.Names() {
				hasJSON = hasJSON || n == "json"
			}
			if rf, ok := f.(cli.RequiredFlag); ok && rf.IsRequired() {
				required = append(required, f.Names()[0])
				markRequired(f)
			}
		}
		if !hasJSON && hadAction && !noJSON[path] {
			cmd.Flags = append(cmd.Flags, &cli.BoolFlag{Name: "json", Usage: "print the answer, or the refusal object, as JSON on standard output"})
		}
		if action := cmd.Action; len(required) > 0 && action != nil {
			cmd.Action = func(c *cli.Context) error {
				var missing []string
				for _, n := range required {
					if !given(c, n) {
						missing = append(missing, "--"+n)
					}
				}
				if len(missing) > 0 {
					sort.Strings(missing)
					return &usageError{msg: fmt.Sprintf("%s needs %s", path, andList(missing)), usage: usageOf(cmd), path: missing[0]}
				}
				return action(c)
			}
		}
	}
}

// noJSON are the commands that answer nothing to print as JSON: the
// servers, the shell's completion script, the help.
var noJSON = map[string]bool{"quire serve": true, "quire mcp": true, "quire completion": true, "quire help": true}

// given is whether a required flag has a value: set, and not to ""
// (QUIRE_ACTOR= in the environment is not an actor).
func given(c *cli.Context, name string) bool {
	if !c.IsSet(name) {
		return false
	}
	for _, f := range c.Command.Flags {
		if slices.Contains(f.Names(), name) {
			if _, ok := f.(*cli.StringSliceFlag); ok {
				return len(c.StringSlice(name)) > 0
			}
			if _, ok := f.(*cli.StringFlag); ok {
				return c.String(name) != ""
			}
		}
	}
	return true
}

// markRequired turns urfave/cli's own check of a required flag off (the
// command checks it, as a usage error) and says so in the flag's help.
func markRequired(f cli.Flag) {
	switch f := f.(type) {
	case *cli.StringFlag:
		f.Required, f.Usage = false, requiredUsage(f.Usage)
	case *cli.StringSliceFlag:
		f.Required, f.Usage = false, requiredUsage(f.Usage)
	case *cli.IntFlag:
		f.Required, f.Usage = false, requiredUsage(f.Usage)
	case *cli.BoolFlag:
		f.Required, f.Usage = false, requiredUsage(f.Usage)
	default:
		panic(fmt.Sprintf("quire: a required flag of type %T", f))
	}
}

func requiredUsage(u string) string {
	if strings.HasSuffix(u, "(required)") {
		return u
	}
	if u == "" {
		return "(required)"
	}
	return u + " (required)"
}

func andList(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

// needArgs is the usage error of a command given fewer (or more)
// arguments than it takes: want names them, as its usage does.
func needArgs(c *cli.Context, min, max int, want string) error {
	n := c.NArg()
	if n >= min && (max < 0 || n <= max) {
		return nil
	}
	name := helpName(c.Command)
	msg := fmt.Sprintf("%s needs %s", name, want)
	if max >= 0 && n > max {
		msg = fmt.Sprintf("%s takes %s, not %d arguments (%s)", name, want, n, strings.Join(c.Args().Slice(), " "))
	}
	return &usageError{msg: msg, usage: usageOf(c.Command), path: strings.Fields(want)[0]}
}

// wantArgs checks a command's arguments before it runs (before it opens
// the vault): fewer than min or more than max (-1: any) is a usage error.
func wantArgs(min, max int, want string) cli.BeforeFunc {
	return func(c *cli.Context) error { return needArgs(c, min, max, want) }
}
