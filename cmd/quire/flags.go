package main

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// flagsFirst lets flags follow a command's arguments, as in
// `quire call get_run --args '{…}'` or `quire init DIR --org acme`:
// urfave/cli stops reading flags at the first argument, so the flags of the
// command being run are moved before its arguments. A "--" ends the flags.
func flagsFirst(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	i := 1
	flags := app.Flags
	cmds := app.Commands
	// Walk the command path: global flags and command names.
	for i < len(args) {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			out = append(out, a)
			if takesValue(flags, a) && i+1 < len(args) {
				out = append(out, args[i+1])
				i++
			}
			i++
			continue
		}
		var next *cli.Command
		for _, c := range cmds {
			if c.HasName(a) {
				next = c
			}
		}
		if next == nil {
			// Not a command: left as written, so that the command
			// before it says which it is not, and which is nearest.
			if len(cmds) > 0 {
				return args
			}
			break
		}
		out = append(out, a)
		flags, cmds = ownFlags(next), next.Subcommands
		i++
		if len(cmds) == 0 {
			break
		}
	}
	var positional, moved, global []string
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i:]...)
			break
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			to := &moved
			fs := flags
			if !hasFlag(flags, a) && hasFlag(app.Flags, a) {
				// A global flag written after the command, such as
				// quire mcp --vault DIR: it goes before the command.
				to, fs = &global, app.Flags
			}
			*to = append(*to, a)
			if takesValue(fs, a) && i+1 < len(args) {
				*to = append(*to, args[i+1])
				i++
			}
			continue
		}
		positional = append(positional, a)
	}
	head := append([]string{out[0]}, global...)
	return append(append(append(head, out[1:]...), moved...), positional...)
}

// ownFlags are the flags a command reads: its own and --help, which
// urfave/cli gives every command only once it runs it, after flagsFirst.
// Without it here, the --help of `quire run start --help` read as the
// app's own flag and went before the command: `quire --help run start`,
// which urfave/cli answers with the help of its first word, quire run.
//
// quire help is the one left without: urfave/cli answers the --help of a
// command named help with the app's help, and `quire --help help` with
// the help command's own.
func ownFlags(cmd *cli.Command) []cli.Flag {
	if cmd.HideHelp || cli.HelpFlag == nil || cmd.Name == "help" || slices.Contains(cmd.Flags, cli.HelpFlag) {
		return cmd.Flags
	}
	return append(slices.Clip(cmd.Flags), cli.HelpFlag)
}

func takesValue(flags []cli.Flag, arg string) bool {
	name := strings.TrimLeft(arg, "-")
	if strings.Contains(name, "=") {
		return false
	}
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				_, isBool := f.(*cli.BoolFlag)
				return !isBool
			}
		}
	}
	return false
}

func hasFlag(flags []cli.Flag, arg string) bool {
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}
