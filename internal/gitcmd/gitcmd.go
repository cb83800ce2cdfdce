// Package gitcmd runs the git command for what quire leaves to git's own
// transports and merges (the mirror's pushes, a replica's fetches, the
// meeting of two writers): git is told never to prompt, and ssh never to
// ask for a passphrase or a host key nobody answers, so a command that
// needs one fails and says so.
package gitcmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// NoMaintenance keeps git's own background upkeep out of a command quire
// runs under the vault's lock (a merge): git gc --auto would repack while
// the lock holds every writer.
var NoMaintenance = []string{"-c", "gc.auto=0", "-c", "maintenance.auto=false"}

// Error is a git command that failed: its arguments, the last lines it
// said, and how it ended.
type Error struct {
	Args []string
	Msg  string
	Err  error
}

func (e *Error) Error() string { return "git " + e.Args[0] + ": " + e.Msg }

func (e *Error) Unwrap() error { return e.Err }

// Run runs git with args in dir, with env added to the environment, and
// answers its standard output; an *Error carries the last lines it said.
func Run(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GIT_TERMINAL_PROMPT=0"), env...)
	if os.Getenv("GIT_SSH_COMMAND") == "" && os.Getenv("GIT_SSH") == "" {
		cmd.Env = append(cmd.Env, "GIT_SSH_COMMAND=ssh -o BatchMode=yes")
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", errors.New("git is not installed here: quire pushes, fetches and clones with git")
		}
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = strings.TrimSpace(out.String())
		}
		if msg == "" {
			msg = err.Error()
		}
		return out.String(), &Error{Args: args, Msg: lastLines(msg, 3), Err: err}
	}
	return out.String(), nil
}

// ExitCode is the exit status of a git command that ran and failed, or -1.
func ExitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}

// WatchmanHook reads the Watchman hook git ships
// (templates/hooks/fsmonitor-watchman.sample, beside git's exec path):
// what the README sets up as core.fsmonitor on Linux.
func WatchmanHook() ([]byte, error) {
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		return nil, fmt.Errorf("git --exec-path: %w", err)
	}
	return os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "..", "..", "share", "git-core", "templates", "hooks", "fsmonitor-watchman.sample"))
}
