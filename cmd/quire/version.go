package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

// Version is what `quire version` says of this binary: the module's
// version and the git revision it was built from, as the Go toolchain
// stamped them (debug.ReadBuildInfo), or make install from git where the
// toolchain did not. A build from a checkout has the version "(devel)" or
// a pseudo-version, and the revision with "+dirty" when the tree had
// changes.
type Version struct {
	Module   string `json:"module"`
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// The revision make install (and make build) stamps with -ldflags -X from
// git, for a build the Go toolchain does not stamp: one from a git
// worktree, with -buildvcs=false, or where git cannot be run. The
// toolchain's own stamp, when there is one, wins.
var stampRevision, stampTime, stampModified string

func buildVersion() Version {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(bi)
}

// versionOf is the Version of a build of build info bi (nil when the
// binary carries none).
func versionOf(bi *debug.BuildInfo) (v Version) {
	v = Version{Module: "quire", Version: "(unknown)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	defer func() {
		if v.Revision == "" && stampRevision != "" {
			v.Revision, v.Time, v.Modified = stampRevision, stampTime, stampModified == "true"
		}
	}()
	if bi == nil {
		return v
	}
	v.Module, v.Version = bi.Main.Path, bi.Main.Version
	if v.Version == "" {
		v.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// String is the one line of quire --version.
func (v Version) String() string {
	s := "quire " + v.Version
	if v.Revision != "" {
		rev := v.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if v.Modified {
			rev += "+dirty"
		}
		s += " (revision " + rev
		if v.Time != "" {
			s += ", " + v.Time
		}
		s += ")"
	}
	return s + " " + v.Go + " " + v.Platform
}

func versionCommand(e *env) *cli.Command {
	return &cli.Command{
		Name: "version", Usage: "print quire's version and the git revision it was built from (the same as quire --version)",
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 0, 0, "no arguments"); err != nil {
				return err
			}
			v := buildVersion()
			if c.Bool("json") {
				return e.printJSON(v)
			}
			fmt.Fprintln(e.out, v.String())
			return nil
		},
	}
}

// helpCommand is `quire help [COMMAND...]`: the help of quire or of one
// of its commands, on standard output. An unknown name is a usage error
// with the nearest command.
func helpCommand(e *env, root func() *cli.Command) *cli.Command {
	return &cli.Command{
		Name: "help", Usage: "show the commands, or one command's help and flags", ArgsUsage: "[COMMAND...]",
		Action: func(c *cli.Context) error {
			parent := root()
			path := []string{"quire"}
			for _, name := range c.Args().Slice() {
				var next *cli.Command
				for _, sub := range parent.Subcommands {
					if sub.HasName(name) {
						next = sub
					}
				}
				if next == nil {
					return unknownCommand(name, parent)
				}
				parent = next
				path = append(path, name)
			}
			app := newApp(&env{in: e.in, out: e.out, err: e.err})
			return app.Run(append(path, "--help"))
		},
	}
}
