package vault

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"quire/internal/watchman"
)

// A file system monitor (core.fsmonitor naming a hook: Watchman's on
// Linux, as the README sets it up) tells git status which paths changed
// since a token it gave at its last answer, so that git stats those and
// trusts the rest (githooks(5), "fsmonitor-watchman"). quire check asks the
// same hook the same question (checker, record.go): at 100,000 runs its
// 700,000 stats were a second, the whole of a check with nothing
// changed.

// MonitorAnswer is what the monitor said changed since the token asked
// with.
type MonitorAnswer struct {
	// Token is the answer's own, to ask with next time: what changed
	// after it was given is in that answer.
	Token string
	// Paths changed, from the work tree's root, "/"-separated (a folder
	// may end in "/"); .git is left out.
	Paths []string
	// All: the monitor knows nothing of what changed (the token is not
	// one of its own, or it started again since): any path may have.
	All bool
}

// monitorWait is how long a monitor's answer is waited for: Watchman's
// first answer in a vault it does not yet watch is a crawl of the whole
// work tree (32 s at 100,000 runs on the 2-core machine).
const monitorWait = 2 * time.Minute

// AskMonitor asks the monitor hook .git/config names what changed since
// token, as git does (protocol version 2: the hook run through the shell
// from the work tree's root, given "2" and the token; its answer the new
// token, a NUL, then the paths each ended by a NUL, or "/" for All). ok
// is false when no hook is set (core.fsmonitor unset, or a boolean: git's
// own monitor on macOS and Windows answers only git, over a channel of
// its own) or the hook failed or answered nothing git would take. git's
// Watchman hook is not run: quire asks Watchman its question itself
// (isWatchmanHook).
func (v *Vault) AskMonitor(token string) (MonitorAnswer, bool) {
	hook, ok := v.monitorHook()
	if !ok {
		return MonitorAnswer{}, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), monitorWait)
	defer cancel()
	if v.isWatchmanHook(hook) {
		if a, ok := v.askWatchman(ctx, token); ok {
			return a, true
		}
	}
	return v.runMonitorHook(ctx, hook, token)
}

// runMonitorHook runs the monitor hook with token and reads its answer.
func (v *Vault) runMonitorHook(ctx context.Context, hook, token string) (MonitorAnswer, bool) {
	var cmd *exec.Cmd
	if sh, err := exec.LookPath("sh"); err == nil {
		// As git's run-command runs a hook with use_shell: the value may
		// be a command with arguments of its own.
		cmd = exec.CommandContext(ctx, sh, "-c", hook+` "$@"`, hook, "2", token)
	} else {
		if !filepath.IsAbs(hook) {
			hook = filepath.Join(v.root, hook)
		}
		cmd = exec.CommandContext(ctx, hook, "2", token)
	}
	cmd.Dir = v.root
	out, err := cmd.Output()
	if err != nil {
		return MonitorAnswer{}, false
	}
	return parseMonitorAnswer(out)
}

// isWatchmanHook reports whether hook is git's Watchman hook
// (fsmonitor-watchman.sample, as the README sets it up): a file, named
// from the work tree's root or whole, whose query is Watchman's since a
// clock with .git left out. quire asks Watchman that query itself
// (askWatchman): the hook's Perl and watchman processes cost 40-60 ms a
// question, the socket some 1.5 ms. Any other hook is run.
func (v *Vault) isWatchmanHook(hook string) bool {
	if strings.ContainsAny(hook, " \t\"'$;|&") {
		return false // a command with arguments of its own: run as git runs it
	}
	if !filepath.IsAbs(hook) {
		hook = filepath.Join(v.root, hook)
	}
	data, err := os.ReadFile(hook)
	if err != nil {
		return false
	}
	for _, says := range []string{"watchman -j", `"query"`, `"since"`, `["not", ["dirname", ".git"]]`} {
		if !bytes.Contains(data, []byte(says)) {
			return false
		}
	}
	return true
}

// askWatchman asks Watchman over its socket what git's Watchman hook
// would, from the work tree's real path (the hook's working folder): false
// when Watchman cannot be asked so (no server, no socket, an error), and
// the hook is run instead, to answer or fail as it does.
func (v *Vault) askWatchman(ctx context.Context, token string) (MonitorAnswer, bool) {
	root, err := filepath.EvalSymlinks(v.root)
	if err != nil {
		return MonitorAnswer{}, false
	}
	a, err := watchman.Since(ctx, root, token)
	if err != nil {
		return MonitorAnswer{}, false
	}
	return MonitorAnswer{Token: a.Clock, Paths: a.Files, All: a.Fresh}, true
}

// Monitored reports whether .git/config names a monitor hook (AskMonitor).
func (v *Vault) Monitored() bool {
	_, ok := v.monitorHook()
	return ok
}

// monitorHook is the hook core.fsmonitor names, and true; false when it
// is unset or a boolean.
func (v *Vault) monitorHook() (string, bool) {
	cfg, err := v.readConfig()
	if err != nil || !cfg.Section("core").HasOption("fsmonitor") {
		return "", false
	}
	hook := strings.TrimSpace(cfg.Section("core").Option("fsmonitor"))
	switch strings.ToLower(hook) {
	case "", "true", "false", "yes", "no", "on", "off", "1", "0":
		return "", false
	}
	return hook, true
}

// parseMonitorAnswer reads a hook's answer of protocol version 2.
func parseMonitorAnswer(out []byte) (MonitorAnswer, bool) {
	tok, rest, found := bytes.Cut(out, []byte{0})
	if !found || len(tok) == 0 {
		return MonitorAnswer{}, false
	}
	a := MonitorAnswer{Token: string(tok)}
	if len(rest) > 0 && rest[0] == '/' {
		a.All = true
		return a, true
	}
	for _, p := range bytes.Split(rest, []byte{0}) {
		if len(p) > 0 {
			a.Paths = append(a.Paths, string(p))
		}
	}
	return a, true
}

// IndexMonitorToken answers the monitor's token git keeps in .git/index
// (its FSMN extension, version 2: git status's last answer), "" when it
// keeps none. A first question asked with it costs what changed since
// git's last status; asked with no token, Watchman's hook lists every
// path of the work tree (43 s at 100,000 runs on the 2-core machine). The
// caller holds the lock.
func (v *Vault) IndexMonitorToken() string {
	x := v.gitIdx
	if x.load() != nil || len(x.fsmn) < 5 || binary.BigEndian.Uint32(x.fsmn) != 2 {
		return ""
	}
	tok, _, _ := bytes.Cut(x.fsmn[4:], []byte{0})
	return string(tok)
}
