package ledger

import (
	"context"
	"sync"

	"quire/ledger/follow"
	"quire/ledger/mirror"
	"quire/vault"
)

// The vault's git remotes (vault/remotes.go) and the pushes to them
// (package mirror): quire remote add|list|remove, quire serve --push NAME,
// and the operation list_remotes.

// Remote is a remote of the vault with what is known of pushing to it
// (mirror.Status) and, on a replica, of following it (follow.Status:
// the commit fetched last and when, how far behind it the branch is, the
// last fetch error).
type Remote struct {
	mirror.Status
	Follow *follow.Status `json:"follow,omitempty"`
}

// maxWaitingCount is how far back list_remotes counts the commits a
// remote lacks: past it, it says that many.
const maxWaitingCount = 100000

// mirrors are the pushers this ledger runs, told of each of its commits.
type mirrors struct {
	mu      sync.Mutex
	pushers []*mirror.Pusher
}

func (m *mirrors) kick() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range m.pushers {
		p.Kick()
	}
}

// AddRemote adds a git remote to the vault (quire remote add).
func (l *Ledger) AddRemote(name, url string) error { return l.v.AddRemote(name, url) }

// RemoveRemote takes a git remote away (quire remote remove), and what
// quire knew of pushing to it.
func (l *Ledger) RemoveRemote(name string) error {
	if err := vault.CheckRemoteName(name); err != nil {
		return err
	}
	if err := l.v.RemoveRemote(name); err != nil {
		return err
	}
	mirror.Forget(l.Root(), name)
	follow.Forget(l.Root(), name)
	return nil
}

// Mirror pushes the vault's branch to the remote name after every commit
// until ctx ends (quire serve --push NAME): in the background, never
// holding up a write.
func (l *Ledger) Mirror(ctx context.Context, name string) error {
	r, err := l.v.RemoteNamed(name)
	if err != nil {
		return err
	}
	p := mirror.New(mirrorHost{l}, r.Name, r.URL)
	l.mirrors.mu.Lock()
	l.mirrors.pushers = append(l.mirrors.pushers, p)
	l.mirrors.mu.Unlock()
	go p.Run(ctx)
	return nil
}

// mirrorHost is the ledger as a pusher's host.
type mirrorHost struct{ l *Ledger }

func (h mirrorHost) Root() string   { return h.l.Root() }
func (h mirrorHost) Branch() string { return h.l.v.Branch() }
func (h mirrorHost) Head() (string, error) {
	id, err := h.l.v.HeadCommit()
	if err != nil || id.IsZero() {
		return "", err
	}
	return id.String(), nil
}

// listRemotes is the operation list_remotes (ops.go).
func (l *Ledger) listRemotes(_ context.Context, _ *struct{}) ([]Remote, error) {
	rs, err := l.v.Remotes()
	if err != nil {
		return nil, err
	}
	head, _ := l.v.HeadCommit()
	out := []Remote{}
	for _, r := range rs {
		st, _ := mirror.Read(l.Root(), r.Name)
		st.Remote, st.URL = r.Name, r.URL
		if st.Pushed == "" {
			// Never pushed from here: what the remote is known to hold
			// (its remote-tracking branch: a clone's, a person's push).
			st.Pushed = l.v.RemoteHead(r.Name)
		}
		st.Waiting = l.commitsSince(head, parseHash(st.Pushed))
		fs, _ := l.followStatus(r.Name, head)
		if fs != nil && fs.Fetched != "" && fs.Diverged == "" {
			st.Waiting = 0 // the branch is the fetched commit or behind it
		}
		out = append(out, Remote{Status: st, Follow: fs})
	}
	return out, nil
}

// commitsSince counts the commits from head back to (not with) since,
// along first parents (the branch as quire commits it), up to
// maxWaitingCount: what a remote that took since lacks.
func (l *Ledger) commitsSince(head, since vault.Hash) int {
	n := 0
	for c := head; !c.IsZero() && c != since && n < maxWaitingCount; n++ {
		m, err := l.v.ReadCommit(c)
		if err != nil || len(m.Parents) == 0 {
			return n + 1
		}
		c = m.Parents[0]
	}
	return n
}
