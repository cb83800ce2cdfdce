package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"quire/ledger"
	"quire/ledger/follow"
)

// quire clone URL DIR: a vault made from a remote a writer pushes to,
// ready for quire serve --follow origin.
func cloneCommand(e *env) *cli.Command {
	return &cli.Command{
		Name: "clone", Usage: "make a vault from a git remote a vault was pushed to (one branch, the remote named origin) and build its .quire/; quire serve --follow origin keeps it following",
		ArgsUsage: "URL DIR",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "branch", Usage: "the remote's branch to clone; its default branch (or main) when left out"},
			jsonFlag,
		},
		Before: wantArgs(2, 2, "URL and DIR, such as ssh://git@host/team/vault.git vault"),
		Action: func(c *cli.Context) error {
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			url, dir := c.Args().Get(0), c.Args().Get(1)
			root, branch, err := ledger.Clone(ctx, url, dir, c.String("branch"))
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return e.printJSON(map[string]string{"vault": root, "remote": "origin", "url": url, "branch": branch})
			}
			fmt.Fprintf(e.out, "Cloned %s (branch %s) into %s, the remote named origin. quire serve --follow origin serves it as a replica.\n", follow.Redacted(url), branch, root)
			return nil
		},
	}
}

// followFlags make quire serve a replica of a remote.
var (
	followFlag         = &cli.StringFlag{Name: "follow", Usage: "serve reads as a replica of this git remote (quire clone makes one): fetch its branch on an interval and on POST /v1/orgs/{org}/sync, move this vault's forward, refuse every write"}
	followIntervalFlag = &cli.DurationFlag{Name: "follow-interval", Value: 2 * time.Second, Usage: "how often --follow fetches the remote"}
)

// followRemote starts following the remote --follow names, until ctx ends.
func followRemote(ctx context.Context, c *cli.Context, l *ledger.Ledger) error {
	name := c.String("follow")
	if name == "" {
		return nil
	}
	if d := c.Duration("follow-interval"); d < 100*time.Millisecond {
		return fmt.Errorf("--follow-interval %v: a fetch is at most ten a second (100ms or more)", d)
	}
	if err := l.Follow(ctx, name, c.Duration("follow-interval")); err != nil {
		return fmt.Errorf("--follow %s: %w", name, err)
	}
	return nil
}

// printFollowed says, under quire status's table, what a replica knows of
// the remotes it follows.
func printFollowed(e *env, rs []ledger.Remote) {
	for _, r := range rs {
		if st := r.Follow; st != nil {
			fmt.Fprintln(e.out, followWords(r.Remote, st))
		}
	}
}

// followWords is one sentence of what is known of following a remote.
func followWords(name string, st *follow.Status) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s is followed (branch %s): ", name, strings.TrimPrefix(st.Branch, "refs/heads/"))
	if st.Fetched == "" {
		b.WriteString("nothing fetched yet")
	} else {
		fmt.Fprintf(&b, "fetched %s at %s, %d commit(s) behind it", st.Fetched[:min(12, len(st.Fetched))], st.FetchedAt, st.Behind)
	}
	if st.Diverged != "" {
		b.WriteString("; diverged: " + st.Diverged)
	}
	if st.LastError != "" {
		fmt.Fprintf(&b, "; the last fetch failed at %s (%d in a row; next try at %s): %s", st.LastErrorAt, st.Failures, st.RetryAt, st.LastError)
	} else {
		b.WriteString("; last fetch error: none")
	}
	return b.String()
}
