// Package mirror pushes a vault's branch to a git remote after its
// commits, in the background of the process that serves it (quire serve
// --push NAME, quire mcp --push NAME), so every boundary leaves the
// machine within seconds and no write waits for the network.
//
//   - One push in flight at most, of the branch as it is when the push
//     starts: the boundaries committed meanwhile go together in the next
//     push, and pushes are at least Gap apart (one a second by default),
//     so a writer of a hundred boundaries a second makes one push a
//     second, as forges that count git operations want.
//   - The pusher is told of this process's commits (Kick) and looks at the
//     branch every Poll for commits other processes made (a quire command,
//     a person's git commit).
//   - A push that fails (the remote down, refused, a credential missing)
//     is tried again with backoff (1 s doubling to 30 s) while the remote
//     stays down; writes never wait for it nor fail for it.
//   - It pushes once when it starts, even when the remote took the
//     branch's head before, so that a server started again meets what
//     other writers pushed meanwhile.
//   - What it knows is kept in .quire/remotes/<name>.json (derived, never
//     committed): the last commit the remote took and when, the last
//     error and when. list_remotes (quire remote list, quire status) adds
//     how many commits wait to be pushed, counted from the branch.
//
// The pushes are git's own (the git command), so authentication is git's:
// ssh keys from the agent or ~/.ssh, https credentials from git's
// credential helper or the environment, and nothing secret is ever
// written into the vault. git is told never to prompt (a push that would
// ask for a password fails, and says so).
package mirror

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"quire/internal/gitcmd"
	"quire/internal/remotestate"
)

// Dir holds each remote's status, under the vault's root.
const Dir = ".quire/remotes"

// Status is what is known of pushing the vault to one remote.
type Status struct {
	Remote string `json:"remote"`
	URL    string `json:"url"`
	// Pushed is the last commit the remote took from this vault, and
	// PushedAt when.
	Pushed   string `json:"pushed,omitempty"`
	PushedAt string `json:"pushed_at,omitempty"`
	// Waiting is how many commits of the branch the remote lacks, past
	// Pushed (list_remotes counts them).
	Waiting int `json:"waiting"`
	// LastError is why the last push failed, and LastErrorAt when; empty
	// once a push went through.
	LastError   string `json:"last_error,omitempty"`
	LastErrorAt string `json:"last_error_at,omitempty"`
}

// Host is what a pusher needs of the vault it pushes.
type Host interface {
	Root() string
	// Branch is the ref pushed (refs/heads/main).
	Branch() string
	// Head is the branch's commit now.
	Head() (string, error)
	// Meet takes the remote's branch into the vault's (fetched and
	// merged, under the vault's lock) after the remote refused a push
	// that was not a fast-forward: another writer pushed first.
	Meet(ctx context.Context, remote string) error
}

// Pusher pushes one vault's branch to one remote. Make it with New, run
// it with Run, tell it of commits with Kick.
type Pusher struct {
	h      Host
	remote string
	url    string
	// Gap is the least time between two pushes; Poll how often the
	// branch is looked at for commits of other processes.
	Gap, Poll time.Duration
	kick      chan struct{}

	mu sync.Mutex
	st Status
}

// New makes the pusher of h's branch to the remote name at url.
func New(h Host, name, url string) *Pusher {
	p := &Pusher{h: h, remote: name, url: url, Gap: time.Second, Poll: 2 * time.Second, kick: make(chan struct{}, 1)}
	p.st, _ = Read(h.Root(), name)
	p.st.Remote, p.st.URL = name, url
	return p
}

// Kick says a commit was made: the pusher pushes it with the next push.
// It never blocks.
func (p *Pusher) Kick() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// Read reads the status kept of the remote name.
func Read(root, name string) (Status, error) {
	var st Status
	err := remotestate.Read(filepath.Join(root, filepath.FromSlash(Dir)), name, &st)
	st.Remote = name
	return st, err
}

// Forget throws away what is known of the remote name.
func Forget(root, name string) {
	remotestate.Forget(filepath.Join(root, filepath.FromSlash(Dir)), name)
}

func (p *Pusher) save() {
	p.mu.Lock()
	st := p.st
	p.mu.Unlock()
	remotestate.Write(filepath.Join(p.h.Root(), filepath.FromSlash(Dir)), p.remote, st)
}

// Status is what the pusher knows now.
func (p *Pusher) Status() Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.st
}

// Run pushes until ctx ends.
func (p *Pusher) Run(ctx context.Context) {
	poll := time.NewTicker(p.Poll)
	defer poll.Stop()
	var last time.Time
	var backoff time.Duration
	// The first push is tried even when the remote took the branch's head
	// before: a server started again learns at once what other writers
	// pushed meanwhile (its push is refused, and it meets them), such as
	// a move of a playbook's home away from it.
	first := true
	for {
		head, err := p.h.Head()
		if err == nil && head != "" && (head != p.Status().Pushed || first) {
			first = false
			wait := p.Gap - time.Since(last)
			if backoff > 0 {
				wait = backoff
			}
			if !remotestate.Sleep(ctx, wait) {
				return
			}
			if h, err := p.h.Head(); err == nil && h != "" {
				head = h // with what was committed meanwhile
			}
			last = time.Now()
			err := p.push(ctx, head)
			if errors.Is(err, errBehind) {
				// Another writer pushed first: take its commits in and
				// push again at once.
				if err = p.h.Meet(ctx, p.remote); err == nil {
					if h, herr := p.h.Head(); herr == nil && h != "" {
						head = h
					}
					err = p.push(ctx, head)
				}
			}
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				backoff = min(max(2*backoff, time.Second), 30*time.Second)
				p.mu.Lock()
				p.st.LastError, p.st.LastErrorAt = err.Error(), remotestate.Stamp(time.Now())
				p.mu.Unlock()
				p.save()
				continue
			}
			backoff = 0
			p.mu.Lock()
			p.st.Pushed, p.st.PushedAt, p.st.LastError, p.st.LastErrorAt = head, remotestate.Stamp(time.Now()), "", ""
			p.mu.Unlock()
			p.save()
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-p.kick:
		case <-poll.C:
		}
	}
}

// push pushes the commit head to the remote's branch, with git.
func (p *Pusher) push(ctx context.Context, head string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	out, err := gitcmd.Run(ctx, p.h.Root(), nil, "push", "--porcelain", p.remote, head+":"+p.h.Branch())
	if err != nil && (strings.Contains(out, "[rejected]") || strings.Contains(out, "non-fast-forward") || strings.Contains(out, "fetch first")) {
		return fmt.Errorf("%w: %v", errBehind, err)
	}
	return err
}

// errBehind is a push refused because the remote's branch has commits
// the vault lacks.
var errBehind = errors.New("the remote's branch has commits this vault lacks (another writer pushed)")
