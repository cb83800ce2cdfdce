package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"quire/internal/gitcmd"
)

// watchman sets the vault at dir up with a file system monitor as the
// README says a person does on Linux: Watchman's hook, which git ships
// (fsmonitor-watchman.sample), in .git/hooks and core.fsmonitor naming
// it. git status and quire check then ask it what changed. It answers a
// func that undoes it (the setting and the hook removed, the watch
// dropped: the vaults are kept from one run to the next, and the other
// rows are measured without a monitor), or why it cannot: Watchman not
// installed (make bench installs it as root), or fewer inotify watches
// than the vault has folders (Watchman takes one a folder).
func watchman(dir string, folders int) (undo func(), why string) {
	if _, err := exec.LookPath("watchman"); err != nil {
		return nil, "watchman is not installed (apt-get install watchman)"
	}
	if data, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && n < folders+10000 {
			return nil, "fs.inotify.max_user_watches is " + strconv.Itoa(n) + ", too few for " + strconv.Itoa(folders) + " folders (sysctl fs.inotify.max_user_watches=524288)"
		}
	}
	hook, err := gitcmd.WatchmanHook()
	if err != nil {
		return nil, "git's Watchman hook: " + err.Error()
	}
	path := filepath.Join(dir, ".git", "hooks", "query-watchman")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err.Error()
	}
	if err := os.WriteFile(path, hook, 0o755); err != nil {
		return nil, err.Error()
	}
	timed(dir, "git", "config", "core.fsmonitor", ".git/hooks/query-watchman")
	return func() { noMonitor(dir) }, ""
}

// noMonitor leaves the vault at dir without a monitor (what a run of the
// bench stopped in the middle may have left).
func noMonitor(dir string) {
	exec.Command("git", "-C", dir, "config", "--unset", "core.fsmonitor").Run()
	os.Remove(filepath.Join(dir, ".git", "hooks", "query-watchman"))
	if _, err := exec.LookPath("watchman"); err == nil {
		exec.Command("watchman", "watch-del", dir).Run()
	}
}
