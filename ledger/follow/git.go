package follow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"
)

// git runs the git command in dir (the vault's folder), as the mirror's
// pushes do: git is told never to prompt, and ssh never to ask for a
// passphrase or a host key nobody answers, so a fetch that needs one fails
// and says so. It answers git's standard output; an error carries the last
// lines git said.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	if os.Getenv("GIT_SSH_COMMAND") == "" && os.Getenv("GIT_SSH") == "" {
		cmd.Env = append(cmd.Env, "GIT_SSH_COMMAND=ssh -o BatchMode=yes")
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", errors.New("git is not installed here: quire fetches and clones with git")
		}
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return out.String(), &gitError{args: args, msg: lastLines(msg, 3), err: err}
	}
	return out.String(), nil
}

// gitError is a git command that failed: exit says its exit status.
type gitError struct {
	args []string
	msg  string
	err  error
}

func (e *gitError) Error() string { return "git " + e.args[0] + ": " + e.msg }

// exit is the exit status of a git command that ran and failed, or -1.
func exitOf(err error) int {
	var ge *gitError
	var ee *exec.ExitError
	if errors.As(err, &ge) && errors.As(ge.err, &ee) {
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

// Redacted is a remote's URL as quire says it: a password in it (an
// https URL with user:token@) is shown as xxxxx.
func Redacted(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.User == nil {
		return raw
	}
	return u.Redacted()
}

// noMaintenance keeps git's own background upkeep out of the commands
// quire runs under the vault's lock (a merge): git gc --auto would repack
// while the lock holds every writer. The fetches, which run outside the
// lock, keep git's defaults, so a replica's objects are packed as any
// clone's are.
var noMaintenance = []string{"-c", "gc.auto=0", "-c", "maintenance.auto=false"}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
