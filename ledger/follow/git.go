package follow

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"quire/internal/gitcmd"
)

// git runs the git command in dir (the vault's folder), as the mirror's
// pushes do (internal/gitcmd), for at most two minutes.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return gitcmd.Run(ctx, dir, nil, args...)
}

// exitOf is the exit status of a git command that ran and failed, or -1.
func exitOf(err error) int { return gitcmd.ExitCode(err) }

// Redacted is a remote's URL as quire says it: a password in it (an
// https URL with user:token@) is shown as xxxxx.
func Redacted(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.User == nil {
		return raw
	}
	return u.Redacted()
}

// noMaintenance is for the commands quire runs under the vault's lock;
// the fetches, which run outside it, keep git's defaults, so a replica's
// objects are packed as any clone's are.
var noMaintenance = gitcmd.NoMaintenance

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
