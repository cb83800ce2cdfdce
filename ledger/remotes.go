package ledger

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"quire/internal/gitcmd"
	"quire/ledger/follow"
	"quire/ledger/mirror"
	"quire/vault"
	"quire/words/event"
	"quire/words/refusal"
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

// unionFiles are the files several writers append to, which git merges
// by keeping both sides' lines (git's union merge): the index of things
// and the members' seen marks. The meeting of two writers declares them
// in .git/info/attributes, git's own place for a repository's local
// attributes, so that nothing committed changes.
var unionFiles = []string{vault.IndexFile, "org/members/*/seen.jsonl"}

// Meet takes the remote's branch into the vault's after the remote
// refused a push as not a fast-forward: git fetches the branch, then,
// under the vault's lock, merges it (each writer writes its own run
// folders, and the files several append to are merged by union); the
// histories then follow what the merge brought (FollowGit). A merge that
// meets a conflict is taken back (git merge --abort) and says which
// files: a person merges them.
func (h mirrorHost) Meet(ctx context.Context, remote string) error {
	l := h.l
	branch := strings.TrimPrefix(l.v.Branch(), "refs/heads/")
	tracking := "refs/remotes/" + remote + "/" + branch
	// The fetch outside the lock: writes never wait for the network.
	if _, err := gitcmd.Run(ctx, l.Root(), nil, "fetch", "--quiet", remote, "+refs/heads/"+branch+":"+tracking); err != nil {
		return err
	}
	return l.write(writeArgs{}, func(t *tx) error {
		if err := declareUnion(filepath.Join(l.v.GitDir(), "info", "attributes")); err != nil {
			return err
		}
		who := []string{"GIT_AUTHOR_NAME=quire", "GIT_AUTHOR_EMAIL=quire@quire.invalid", "GIT_COMMITTER_NAME=quire", "GIT_COMMITTER_EMAIL=quire@quire.invalid"}
		merge := append(append([]string(nil), gitcmd.NoMaintenance...), "merge", "--quiet", "--no-edit", "-m", "Merge what "+remote+" holds (another writer's commits)", tracking)
		if _, err := gitcmd.Run(ctx, l.Root(), who, merge...); err != nil {
			conflicted, _ := gitcmd.Run(ctx, l.Root(), nil, "diff", "--name-only", "--diff-filter=U")
			gitcmd.Run(ctx, l.Root(), nil, "merge", "--abort")
			if files := strings.Fields(conflicted); len(files) > 0 {
				return fmt.Errorf("the remote's branch and this vault's change the same files (%s): a person merges them (git pull %s)", strings.Join(files, ", "), remote)
			}
			return err
		}
		return t.followGit()
	})
}

// declareUnion adds git's union merge for unionFiles to the attributes
// file at abs, once.
func declareUnion(abs string) error {
	data, err := os.ReadFile(abs)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	add := ""
	for _, f := range unionFiles {
		line := f + " merge=union"
		if !strings.Contains("\n"+string(data), "\n"+line+"\n") {
			add += line + "\n"
		}
	}
	if add == "" {
		return nil
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		add = "\n" + add
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(abs, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(add)
	return err
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

// Homes: each playbook may name the node that writes it (its home, in
// playbook.md), so that servers meeting at one remote each write their
// own playbooks' files and number their histories alone. A write to a
// playbook homed elsewhere is refused (homeHolds, for every writing
// operation with a playbook); one without a home is any node's.

// playbookField is the index of an operation's Playbook argument, or -1.
func playbookField(t reflect.Type) int {
	if f, ok := t.FieldByName("Playbook"); ok && f.Type.Kind() == reflect.String && len(f.Index) == 1 {
		return f.Index[0]
	}
	return -1
}

// Node is this vault's node name (vault.Node).
func (l *Ledger) Node() string { return l.v.Node() }

// SetNode sets it (quire node set).
func (l *Ledger) SetNode(name string) error { return l.v.SetNode(name) }

// homeHolds refuses a write to a playbook homed at another node.
func (l *Ledger) homeHolds(playbook string) error {
	if playbook == "" || checkPlaybookID(playbook) != nil {
		return nil
	}
	home := l.homeOf(playbook)
	if home == "" {
		return nil
	}
	if node := l.v.Node(); home != node {
		return refusal.At(refusal.Conflict, "/playbook", "playbook %s is written at its home, the node %s, and this is %s: send its writes to %s (quire playbook move %s --home %s makes this node its home)",
			playbook, home, node, home, playbook, node)
	}
	return nil
}

// homeOf is the playbook's home as its playbook.md names it ("" for none,
// or no playbook), read again only when the file changed.
func (l *Ledger) homeOf(playbook string) string {
	fi, err := os.Stat(l.v.Abs(path.Join(playbookDir(playbook), "playbook.md")))
	if err != nil {
		return ""
	}
	type known struct {
		size int64
		mod  time.Time
		home string
	}
	if k, ok := l.homes.Load(playbook); ok {
		if k := k.(known); k.size == fi.Size() && k.mod.Equal(fi.ModTime()) {
			return k.home
		}
	}
	f, err := l.readPlaybook(playbook)
	if err != nil {
		return ""
	}
	l.homes.Store(playbook, known{fi.Size(), fi.ModTime(), f.Home})
	return f.Home
}

// MovePlaybook makes node the playbook's home (quire playbook move),
// recorded as a commit of its playbook.md. It is refused unless this
// vault holds every commit its remotes hold (fetched now): a new home
// that lacked the old home's last commits would number the history
// again from where it left it.
func (l *Ledger) MovePlaybook(ctx context.Context, playbook, node, actor string) error {
	if err := vault.CheckRemoteName(node); err != nil {
		return refusal.Invalid("--home", "%q is not a node's name", node)
	}
	rs, err := l.v.Remotes()
	if err != nil {
		return err
	}
	branch := strings.TrimPrefix(l.v.Branch(), "refs/heads/")
	for _, r := range rs {
		tracking := "refs/remotes/" + r.Name + "/" + branch
		if _, err := gitcmd.Run(ctx, l.Root(), nil, "fetch", "--quiet", r.Name, "+refs/heads/"+branch+":"+tracking); err != nil {
			return refusal.New(refusal.Unavailable, "the remote %s cannot be read, so this vault cannot know it holds every commit of playbook %s: %v", r.Name, playbook, err)
		}
		if _, err := gitcmd.Run(ctx, l.Root(), nil, "merge-base", "--is-ancestor", tracking, "HEAD"); err != nil {
			return refusal.At(refusal.Conflict, "--home", "the remote %s holds commits this vault lacks: take them in first (git pull %s %s), then move the playbook", r.Name, r.Name, branch)
		}
	}
	return l.write(writeArgs{Keeps: playbookKeeps(playbook)}, func(t *tx) error {
		f, err := l.readPlaybook(playbook)
		if err != nil {
			return err
		}
		from := f.Home
		f.Home = node
		fm, err := yaml.Marshal(f)
		if err != nil {
			return err
		}
		rel := playbookDir(playbook) + "/playbook.md"
		if err := t.writeNew(rel, []byte("---\n"+string(fm)+"---\n")); err != nil {
			return err
		}
		now := l.Now()
		detail := "Home set to " + node
		if from != "" {
			detail = "Home moved from " + from + " to " + node
		}
		if err := t.recordPlaybookEvent(playbook, &event.Line{Event: event.PlaybookUpdated, Timestamp: event.FormatTime(now), Detail: detail, Actor: actorOr(actor)}); err != nil {
			return err
		}
		t.commit([]string{playbookDir(playbook)}, vault.Signature{Name: actorOr(actor), When: now}, vault.Message{Subject: fmt.Sprintf("%s: %s", playbook, strings.ToLower(detail[:1])+detail[1:])})
		return nil
	})
}
