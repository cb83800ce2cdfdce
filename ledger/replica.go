package ledger

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"quire/ledger/follow"
	"quire/vault"
	"quire/words/refusal"
)

// Replicas (package follow): quire clone makes a vault from a remote and
// builds its .quire/, and quire serve --follow NAME keeps its branch on
// the remote's: a fetch every interval and at once on POST .../sync, the
// branch moved forward under the write transaction's lock, the histories
// and the views following. A replica takes no write: every write of every
// door is refused as conflict, naming the remote that takes them.

// replica is what a ledger that follows a remote knows of it.
type replica struct {
	f atomic.Pointer[follow.Follower]
	// moving is held by a move of the branch, and shared by each read
	// operation of a replica, so that no read answers from a work tree
	// git is half way through moving.
	moving sync.RWMutex
}

// Clone makes a vault at dir from the remote at url (quire clone): one
// branch (branch, or the remote's default), the remote named origin, and
// .quire/ built (the playbooks' histories) before the folder appears at
// dir. A dir that exists and is not empty is refused, and so is a remote
// that is not a quire vault this quire reads; nothing is left at dir
// then. It answers the vault's folder and the branch cloned.
func Clone(ctx context.Context, url, dir, branch string) (root, cloned string, err error) {
	return follow.Clone(ctx, url, dir, branch, func(tmp, branch string) error {
		data, err := os.ReadFile(filepath.Join(tmp, vault.ConfigFile))
		if err != nil {
			return refusal.New(refusal.NotFound, "%s is not a quire vault: its branch %s has no %s, where a vault names its format", follow.Redacted(url), branch, vault.ConfigFile)
		}
		n, err := vault.FormatOf(data)
		if err != nil {
			return refusal.New(refusal.Conflict, "%s is not a quire vault this quire can read: its %s: %v", follow.Redacted(url), vault.ConfigFile, err)
		}
		if n > vault.FormatVersion {
			return refusal.New(refusal.Conflict, "%s holds a vault of format %d; this quire reads format %d at most: install a newer quire to clone it", follow.Redacted(url), n, vault.FormatVersion)
		}
		if err := vault.UseManyFiles(tmp); err != nil {
			return err
		}
		l, err := Open(tmp)
		if err != nil {
			return err
		}
		defer l.Close()
		return l.buildHistories()
	})
}

// buildHistories builds every playbook's history under .quire/ and
// records them true to git as it is, writing nothing that is committed.
func (l *Ledger) buildHistories() error {
	return l.write(writeArgs{derived: true}, func(t *tx) error {
		es, err := l.v.FindType("playbook", func(*vault.Entry) bool { return true })
		if err != nil {
			return err
		}
		for i, e := range es {
			if _, err := t.historyOf(e.Playbook); err != nil {
				return err
			}
			l.progress("clone: building the playbooks' histories", "playbooks", i+1, len(es))
		}
		return t.followGit()
	})
}

// Follow makes this ledger a replica of the remote name until ctx ends
// (quire serve --follow NAME): the remote's branch fetched every interval
// and on Sync, the vault's moved forward to it, and every write refused.
func (l *Ledger) Follow(ctx context.Context, name string, interval time.Duration) error {
	r, err := l.v.RemoteNamed(name)
	if err != nil {
		return err
	}
	if !strings.HasPrefix(l.v.Branch(), "refs/heads/") {
		return refusal.New(refusal.Conflict, "HEAD is detached (%s), so this vault has no branch to follow %s with: git checkout the branch first", l.v.Branch(), name)
	}
	f := follow.New(followHost{l}, r.Name, r.URL)
	if interval > 0 {
		f.Interval = interval
	}
	f.Log = l.v.Logger()
	if !l.replica.f.CompareAndSwap(nil, f) {
		return refusal.New(refusal.Conflict, "this server follows %s already: a replica follows one remote", l.replica.f.Load().Remote())
	}
	go f.Run(ctx)
	return nil
}

// Sync asks a replica to fetch its remote now (POST /v1/orgs/{org}/sync,
// a forge's push webhook) and answers the remote's name; a server that
// follows none is answered not_found.
func (l *Ledger) Sync() (string, error) {
	f := l.replica.f.Load()
	if f == nil {
		return "", refusal.New(refusal.NotFound, "this server follows no remote, so there is nothing to sync: POST /v1/orgs/{org}/sync is for a replica (quire serve --follow NAME)")
	}
	f.Kick()
	return f.Remote(), nil
}

// replicaRefusal is the refusal of every write a replica is sent, nil
// when this ledger follows no remote.
func (l *Ledger) replicaRefusal() error {
	if l == nil {
		return nil
	}
	f := l.replica.f.Load()
	if f == nil {
		return nil
	}
	return refusal.New(refusal.Conflict, "this server follows %s (%s): send writes to the server that pushes to it", f.Remote(), follow.Redacted(f.URL()))
}

// holdMoves keeps the branch from moving while a read operation of a
// replica reads; it answers the release.
func (l *Ledger) holdMoves() func() {
	if l == nil || l.replica.f.Load() == nil {
		return func() {}
	}
	l.replica.moving.RLock()
	return l.replica.moving.RUnlock
}

// followStatus is what is known of following the remote name, with how
// far behind the fetched commit head is: ok is false when no follower
// ever followed it here.
func (l *Ledger) followStatus(name string, head vault.Hash) (*follow.Status, bool) {
	st, ok := follow.Read(l.Root(), name)
	if !ok {
		return nil, false
	}
	if f := l.replica.f.Load(); f != nil && f.Remote() == name {
		st = f.Status()
	}
	st.Behind = 0
	if st.Fetched != "" && st.Diverged == "" {
		if n, ok := l.firstParentsTo(parseHash(st.Fetched), head); ok {
			st.Behind = n
		}
	}
	return &st, true
}

// firstParentsTo counts the commits from from back to (not with) to along
// first parents; ok is false when to is not met within maxWaitingCount.
func (l *Ledger) firstParentsTo(from, to vault.Hash) (int, bool) {
	n := 0
	for c := from; c != to; n++ {
		if c.IsZero() || n >= maxWaitingCount {
			return n, false
		}
		m, err := l.v.ReadCommit(c)
		if err != nil {
			return n, false
		}
		if len(m.Parents) == 0 {
			c = vault.ZeroHash
			continue
		}
		c = m.Parents[0]
	}
	return n, true
}

// followHost is the ledger as a follower's host.
type followHost struct{ l *Ledger }

func (h followHost) Root() string   { return h.l.Root() }
func (h followHost) Branch() string { return h.l.v.Branch() }
func (h followHost) Head() (string, error) {
	id, err := h.l.v.HeadCommit()
	if err != nil || id.IsZero() {
		return "", err
	}
	return id.String(), nil
}

// Move runs the follower's fast-forward as one write transaction that
// writes only what is derived: the branch, the work tree and .git/index
// are git's to move, and the histories follow them under the same lock.
// Reads of this process wait for it (holdMoves); after it, the playbooks
// whose files it changed have their histories rebuilt and their views and
// watchers told.
func (h followHost) Move(fn func() ([]string, error)) error {
	l := h.l
	var changed []string
	l.replica.moving.Lock()
	err := l.write(writeArgs{derived: true}, func(t *tx) error {
		var err error
		if changed, err = fn(); err != nil {
			return err
		}
		return t.followGit()
	})
	l.replica.moving.Unlock()
	if err != nil {
		return err
	}
	if len(changed) > 0 {
		l.followed(changed)
	}
	return nil
}

// followed tells the playbooks whose files a move changed (every playbook
// for a path "" or one of no playbook's): their histories are read again
// (rebuilt now, not by the next read), their keepers woken and the
// watchers told, so every open page follows.
func (l *Ledger) followed(changed []string) {
	pbs := map[string]bool{}
	all := false
	var runs map[string]string // a run folder → its playbook
	for _, p := range changed {
		parts := strings.SplitN(p, "/", 3)
		switch {
		case p == vault.IndexFile:
			// What it names has its own paths among the changed.
		case len(parts) >= 2 && parts[0] == "playbooks":
			pbs[parts[1]] = true
		case len(parts) >= 2 && parts[0] == vault.RunsDir:
			if runs == nil {
				runs = map[string]string{}
				es, _ := l.v.FindType("playbook-run", func(*vault.Entry) bool { return true })
				for _, e := range es {
					runs[e.Path] = e.Playbook
				}
			}
			if pb, ok := runs[parts[0]+"/"+parts[1]]; ok {
				pbs[pb] = true
			} else if p != vault.AgentsFile {
				all = true
			}
		default:
			all = true
		}
	}
	if all {
		es, _ := l.v.FindType("playbook", func(*vault.Entry) bool { return true })
		for _, e := range es {
			pbs[e.Playbook] = true
		}
	}
	for pb := range pbs {
		if _, err := l.HistoryLen(pb); err != nil {
			l.v.Logf("follow: the history of %s: %v", pb, err)
		}
		l.wake(pb)
		l.tell(pb, WatchEvent)
	}
}
