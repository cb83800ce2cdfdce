// Package follow makes a vault a replica of a git remote that a writer
// pushes to (quire serve --push): quire clone makes the vault, and quire
// serve --follow NAME keeps its branch on the remote's, so its reads, and
// every page's views, follow the writer's within seconds.
//
//   - A Follower fetches the remote's branch, and only it (one narrow
//     refspec: +refs/heads/<branch>:refs/remotes/<name>/<branch>), every
//     Interval (2 s by default) and at once when Kick is called (POST
//     /v1/orgs/{org}/sync, a forge's push webhook). One fetch runs at a
//     time; kicks during one make one more after it.
//   - When the fetched commit is ahead of the branch, the branch is moved
//     forward to it as git merge --ff-only moves it (the work tree and
//     .git/index with it), under the vault's write lock, and the
//     histories follow what git changed (Host.Move). A branch that has
//     commits the remote lacks (it diverged) is never overwritten: the
//     status says so, and it stays where it is.
//   - A fetch that fails (the remote gone, refused, a credential missing)
//     is tried again with backoff, from Interval doubling up to 30 s; a
//     kick tries at once. The follower never stops for it.
//   - What it knows is kept in .quire/follow/<name>.json (derived, never
//     committed), so quire status in another process reads it:
//     list_remotes adds how far behind the fetched commit the branch is.
//
// Fetches and the fast-forward are git's own (the git command), as the
// mirror's pushes are: authentication is git's (ssh keys and agent, https
// credential helpers), and the fast-forward updates the work tree and the
// index as git does, hooks and all.
package follow

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"quire/internal/remotestate"
)

// Dir holds each followed remote's status, under the vault's root.
const Dir = ".quire/follow"

// MaxBackoff is the longest wait between two fetches that fail.
const MaxBackoff = 30 * time.Second

// MinGap is the least time between the end of a fetch and the start of
// the next that a kick asks for: kicks nobody authenticates (a webhook)
// make at most four fetches a second.
const MinGap = 250 * time.Millisecond

// Status is what a replica knows of following one remote.
type Status struct {
	// Branch is the branch followed, as a ref (refs/heads/main).
	Branch string `json:"branch"`
	// Fetched is the commit of the remote's branch the last fetch found,
	// and FetchedAt when that fetch ended.
	Fetched   string `json:"fetched,omitempty"`
	FetchedAt string `json:"fetched_at,omitempty"`
	// Behind is how many commits of Fetched the branch lacks (counted
	// by list_remotes along first parents); 0 once caught up.
	Behind int `json:"behind"`
	// Diverged, when set, says why the branch cannot move forward to
	// Fetched: it holds commits the remote lacks.
	Diverged string `json:"diverged,omitempty"`
	// LastError is why the last fetch or move failed, and LastErrorAt
	// when; Failures how many failed in a row and RetryAt when the next
	// is tried. All empty once one went through.
	LastError   string `json:"last_error,omitempty"`
	LastErrorAt string `json:"last_error_at,omitempty"`
	Failures    int    `json:"failures,omitempty"`
	RetryAt     string `json:"retry_at,omitempty"`
}

// Host is what a follower needs of the vault it moves.
type Host interface {
	Root() string
	// Branch is the ref followed and moved (refs/heads/main).
	Branch() string
	// Head is the branch's commit now.
	Head() (string, error)
	// Move runs fn holding the vault's write lock, and then, under the
	// same lock, has the histories follow what git changed; after the
	// lock it tells the views of the paths fn answers.
	Move(fn func() (changed []string, err error)) error
}

// Follower keeps one vault's branch on one remote's. Make it with New,
// run it with Run, hasten it with Kick.
type Follower struct {
	h      Host
	remote string
	url    string
	// Interval is how often the remote is fetched.
	Interval time.Duration
	// Log, when set, is told of a fetch that fails (once per error) and
	// of the branch diverging.
	Log  *slog.Logger
	kick chan struct{}
	// moved, when set, is told after each move (tests).
	moved func()

	mu sync.Mutex
	st Status
}

// New makes the follower of the remote name at url for h's branch.
func New(h Host, name, url string) *Follower {
	f := &Follower{h: h, remote: name, url: url, Interval: 2 * time.Second, kick: make(chan struct{}, 1)}
	f.st, _ = Read(h.Root(), name)
	f.st.Branch = h.Branch()
	return f
}

// Remote is the name of the remote followed; URL its URL.
func (f *Follower) Remote() string { return f.remote }

// URL is the remote's URL.
func (f *Follower) URL() string { return f.url }

// Kick asks for a fetch now (a forge said the remote moved). It never
// blocks; kicks while a fetch runs make one more fetch after it.
func (f *Follower) Kick() {
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// Status is what the follower knows now.
func (f *Follower) Status() Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.st
}

// Read reads the status kept of following the remote name; ok is false
// when no follower ever followed it here.
func Read(root, name string) (Status, bool) {
	var st Status
	if remotestate.Read(filepath.Join(root, filepath.FromSlash(Dir)), name, &st) != nil {
		return Status{}, false
	}
	return st, true
}

// Forget throws away what is known of following the remote name.
func Forget(root, name string) {
	remotestate.Forget(filepath.Join(root, filepath.FromSlash(Dir)), name)
}

func (f *Follower) save() {
	f.mu.Lock()
	st := f.st
	f.mu.Unlock()
	remotestate.Write(filepath.Join(f.h.Root(), filepath.FromSlash(Dir)), f.remote, st)
}

// Run follows the remote until ctx ends: a fetch at once, then one every
// Interval, or sooner when kicked.
func (f *Follower) Run(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.kick:
			if !t.Stop() {
				select {
				case <-t.C:
				default:
				}
			}
			if gap := MinGap - time.Since(last); gap > 0 && !remotestate.Sleep(ctx, gap) {
				return
			}
		case <-t.C:
		}
		err := f.once(ctx)
		last = time.Now()
		if ctx.Err() != nil {
			return
		}
		wait := f.Interval
		f.mu.Lock()
		if err != nil {
			f.st.Failures++
			wait = min(f.Interval<<min(f.st.Failures-1, 16), MaxBackoff)
			wait = max(wait, f.Interval)
			if f.st.LastError != err.Error() && f.Log != nil {
				f.Log.Warn("follow: "+err.Error(), "remote", f.remote, "retry_in", wait.String())
			}
			f.st.LastError, f.st.LastErrorAt = err.Error(), remotestate.Stamp(time.Now())
			f.st.RetryAt = remotestate.Stamp(time.Now().Add(wait))
		} else {
			f.st.Failures, f.st.LastError, f.st.LastErrorAt, f.st.RetryAt = 0, "", "", ""
		}
		f.mu.Unlock()
		f.save()
		t.Reset(wait)
	}
}

// trackingRef is where the remote's branch is fetched to.
func (f *Follower) trackingRef() string {
	return "refs/remotes/" + f.remote + "/" + strings.TrimPrefix(f.h.Branch(), "refs/heads/")
}

// once fetches the remote's branch and moves the vault's forward to it.
func (f *Follower) once(ctx context.Context) error {
	branch := f.h.Branch()
	if !strings.HasPrefix(branch, "refs/heads/") {
		return errorf("HEAD is detached (%s), so there is no branch to move forward: git checkout %s brings it back", branch, "the branch")
	}
	root := f.h.Root()
	track := f.trackingRef()
	if _, err := git(ctx, root, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", f.remote, "+"+branch+":"+track); err != nil {
		return errorf("fetching %s (%s): %v", f.remote, Redacted(f.url), err)
	}
	out, err := git(ctx, root, "rev-parse", "--verify", "--quiet", track+"^{commit}")
	if err != nil {
		return errorf("the fetch of %s left no %s: %v", f.remote, track, err)
	}
	fetched := strings.TrimSpace(out)
	f.mu.Lock()
	f.st.Fetched, f.st.FetchedAt = fetched, remotestate.Stamp(time.Now())
	f.mu.Unlock()
	head, err := f.h.Head()
	if err != nil {
		return err
	}
	if head == fetched {
		f.settled("")
		return nil
	}
	var diverged string
	err = f.h.Move(func() ([]string, error) {
		head, err := f.h.Head() // again, under the lock
		if err != nil || head == fetched {
			return nil, err
		}
		if head != "" {
			_, err := git(ctx, root, "merge-base", "--is-ancestor", head, fetched)
			if exitOf(err) == 1 {
				diverged = f.divergedWords(ctx, head, fetched)
				return nil, nil
			}
			if err != nil {
				return nil, err
			}
		}
		args := append(append([]string{}, noMaintenance...), "merge", "--ff-only", "--quiet", "--no-stat", fetched)
		if _, err := git(ctx, root, args...); err != nil {
			return nil, errorf("moving %s forward to %s's %s: %v", strings.TrimPrefix(branch, "refs/heads/"), f.remote, short(fetched), err)
		}
		if head == "" {
			return []string{""}, nil
		}
		names, err := git(ctx, root, "diff", "--name-only", "-z", "--no-renames", head, fetched)
		if err != nil {
			return []string{""}, nil // every playbook is told
		}
		return strings.Split(strings.TrimSuffix(names, "\x00"), "\x00"), nil
	})
	if err != nil {
		return err
	}
	if diverged != "" && f.Log != nil && f.Status().Diverged != diverged {
		f.Log.Warn("follow: "+diverged, "remote", f.remote)
	}
	f.settled(diverged)
	if f.moved != nil {
		f.moved()
	}
	return nil
}

// settled records that the branch is where it will stay until the next
// fetch: at the fetched commit, or diverged from it.
func (f *Follower) settled(diverged string) {
	f.mu.Lock()
	f.st.Diverged = diverged
	if diverged == "" {
		f.st.Behind = 0
	}
	f.mu.Unlock()
}

// divergedWords says that the branch holds commits the remote lacks.
func (f *Follower) divergedWords(ctx context.Context, head, fetched string) string {
	b := strings.TrimPrefix(f.h.Branch(), "refs/heads/")
	n := "commits"
	if out, err := git(ctx, f.h.Root(), "rev-list", "--count", fetched+".."+head); err == nil {
		n = strings.TrimSpace(out) + " commit(s)"
	}
	return "the branch " + b + " has " + n + " that " + f.remote + "'s lacks (made in this clone, or the remote's history was rewritten), " +
		"so it cannot move forward to " + short(fetched) + ": quire never overwrites them. Push them from this clone, " +
		"or, if they are not wanted, git reset --hard " + f.remote + "/" + b + " here"
}

func short(id string) string { return id[:min(12, len(id))] }
