package vault

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"gopkg.in/yaml.v3"

	"quire/internal/fsys"
	"quire/vault/git/index"
	"quire/vault/git/object"
	"quire/words/address"
	"quire/words/refusal"
)

// Config is quire.yaml, committed with the vault.
type Config struct {
	// Format is the version of the vault's format (FormatVersion, format.go):
	// written by Init; a quire.yaml without it is format 1, and Config
	// answers 1 for it, so WriteConfig writes the key it lacked.
	Format int    `yaml:"format"`
	Org    string `yaml:"org"`
	// PageMaxRebuilds is PAGE_MAX_REBUILDS: how many pages' views are built
	// at once (default 4).
	PageMaxRebuilds int `yaml:"page_max_rebuilds,omitempty"`
	// Typecheck is "full" (default) or "syntax-only".
	Typecheck string `yaml:"typecheck,omitempty"`
	// TSC is the path of the TypeScript compiler (tsc of typescript@7)
	// that checks pages' modules at save, relative to the vault's folder
	// or absolute; second in the lookup, after QUIRE_TSC (fold/module).
	TSC string `yaml:"tsc,omitempty"`
	// Tokens are the bearer tokens of quire serve, stored hashed.
	Tokens []Token `yaml:"tokens,omitempty"`
}

// Token is one bearer token: only its SHA-256 is kept.
type Token struct {
	ID        string   `yaml:"id"`
	Principal string   `yaml:"principal"`
	Scopes    []string `yaml:"scopes"`
	SHA256    string   `yaml:"sha256"`
	Created   string   `yaml:"created"`
	// Expires is when the token stops being taken (RFC 3339); never when
	// empty.
	Expires string `yaml:"expires,omitempty"`
}

// Vault is an open vault. Its methods are safe for concurrent use; writes
// serialise on the vault's lock, across goroutines and processes alike.
type Vault struct {
	root   string
	gitDir string
	branch string // e.g. refs/heads/main

	mu     sync.Mutex // held while this process holds the file lock
	lockF  *os.File
	locked bool
	// lockRO: lockF is open read-only, and lockErr says why it could not
	// be opened to write (a read-only vault; see openLock).
	lockRO  bool
	lockErr error

	objs    *objects
	gitIdx  *gitIndex
	commits int
	// lastCommit and lastTree are the commit this process made last and
	// its tree, so the next commit need not read it back.
	lastCommit, lastTree Hash
	refDirs              bool // the branch's folders under refs/ and logs/ exist

	compacting    sync.WaitGroup
	compactMu     sync.Mutex
	busy          bool
	noAutoCompact bool
	// packs is the count of packs compactDue last took, at packsAt: taken
	// again at most once a second (under compactMu).
	packs      int
	packsAt    time.Time
	compactCtx context.Context
	compactBy  func() error // what starts a compaction elsewhere (SetCompactBy)

	// grp is the group of writes under way (group.go), and writers counts
	// the writers of this process waiting for v.mu, who join it.
	grp     *group
	writers atomic.Int32

	reg *registry

	log *slog.Logger
	// commitFailed says a commit of this write stopped on an error: its
	// journal stays for the next writer, even when the error is a refusal.
	commitFailed bool
	jf           *os.File   // the journal, open from the first write on
	undo         *undoState // this write's undo, when it is undoable (undo.go)
	opening      bool       // the repair of .git/index at open, which leaves a journal to the next writer
	recovered    []string   // what this process's writers finished of others' (see Recovered)
	// OnRecover, set by the owner before the vault is used, finishes or
	// rolls back, under the lock, what a writer that stopped in the middle
	// left beyond git's locks and .git/index (the ledger's run folders,
	// staging folders, temporary files, uncommitted changes). It answers
	// what it did, one sentence each.
	OnRecover func() ([]string, error)

	guard       func(rel string) Keep // what each committed file keeps of HEAD's (guard.go)
	formatStamp fileStamp             // quire.yaml's stat when its format was last checked (format.go)
	kept        map[string]keptBlob   // sizes of HEAD's blobs checked last (guard.go)
	// checked: the files Kept found holding HEAD's part in this hold of
	// the lock, which the commit need not check again (guard.go).
	checked map[string]bool
}

// Paths of a vault, relative to its root.
const (
	ConfigFile = "quire.yaml"
	IndexFile  = "vault/00-index.jsonl"
	RunsDir    = "playbook-runs"
	AgentsFile = "playbook-runs/AGENTS.md"
	QuireDir   = ".quire"
)

// Open opens the vault at dir, which must hold quire.yaml and a git
// repository, and be of a format this quire reads (FormatVersion at
// most): a newer one is refused as conflict, saying to install a newer
// quire.
func Open(dir string) (*Vault, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	cfg, err := os.Stat(filepath.Join(root, ConfigFile))
	if err != nil {
		return nil, refusal.New(refusal.NotFound, "%s is not a quire vault: it has no %s (make one with quire init)", root, ConfigFile)
	}
	if err := checkFormat(root); err != nil {
		return nil, err
	}
	formatStamp := stampOf(cfg) // the format just checked holds for this stat
	gitDir := filepath.Join(root, ".git")
	if fi, err := os.Stat(gitDir); err != nil || !fi.IsDir() {
		return nil, refusal.New(refusal.NotFound, "%s is not a quire vault: it has no .git folder", root)
	}
	v := &Vault{root: root, gitDir: gitDir, formatStamp: formatStamp}
	head, err := fsys.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return nil, err
	}
	ref, ok := strings.CutPrefix(strings.TrimSpace(string(head)), "ref: ")
	if !ok {
		// A detached HEAD (git checkout <commit>): reads answer from the
		// files checked out, and HEAD itself holds the commit; every write
		// is refused (headHolds).
		ref = "HEAD"
	}
	v.branch = ref
	v.objs = newObjects(gitDir)
	v.gitIdx = &gitIndex{path: indexPath(gitDir), treeDirs: v.treeDirs}
	v.reg = &registry{path: filepath.Join(root, filepath.FromSlash(IndexFile)), root: root, log: v.logf}
	if err := os.MkdirAll(filepath.Join(root, QuireDir), 0o755); err != nil && !fsys.IsReadOnly(err) {
		return nil, err // a vault read-only here is read without it (openLock)
	}
	v.checkIndexOnOpen()
	return v, nil
}

// treeDirs lists the folders of a tree, for the cache-tree of
// .git/index (gitindex.go).
func (v *Vault) treeDirs(tree Hash) ([]index.TreeNode, error) {
	entries, err := v.objs.readTree(tree)
	if err != nil {
		return nil, err
	}
	var dirs []index.TreeNode
	for _, e := range entries {
		if e.Mode == object.Dir {
			dirs = append(dirs, index.TreeNode{Name: e.Name, Tree: e.Hash})
		}
	}
	return dirs, nil
}

// Root is the vault's folder.
func (v *Vault) Root() string { return v.root }

// GitDir is the vault's .git folder.
func (v *Vault) GitDir() string { return v.gitDir }

// Abs is the absolute path of rel, which the caller has already checked.
func (v *Vault) Abs(rel string) string { return filepath.Join(v.root, filepath.FromSlash(rel)) }

// Close waits for background work (compaction) to end.
func (v *Vault) Close() error {
	v.compacting.Wait()
	v.mu.Lock()
	if v.jf != nil {
		v.jf.Close()
		v.jf = nil
	}
	v.mu.Unlock()
	return nil
}

// Config reads quire.yaml.
func (v *Vault) Config() (Config, error) {
	var c Config
	data, err := fsys.ReadFile(filepath.Join(v.root, ConfigFile))
	if err != nil {
		return c, err
	}
	if err := yaml.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("%s: %w", ConfigFile, err)
	}
	if c.Format == 0 {
		c.Format = 1
	}
	if c.PageMaxRebuilds <= 0 {
		c.PageMaxRebuilds = 4
	}
	return c, nil
}

// WriteConfig replaces quire.yaml; the caller holds the lock and commits.
func (v *Vault) WriteConfig(c Config) error {
	data, err := yaml.Marshal(c)
	if err != nil {
		return err
	}
	return WriteAtomic(filepath.Join(v.root, ConfigFile), data)
}

// Locked runs fn holding the vault's write lock: an in-process mutex and an
// exclusive flock(2) on .git/quire.lock, so writers in every process take
// turns. fn sees the vault as other writers left it: what a writer that
// died holding the lock left half done is finished or rolled back first
// (see the journal in journal.go). Writes of this process that wait for
// the lock at once are a group (group.go): each answers once the branch
// shows its commit.
func (v *Vault) Locked(fn func() error) error {
	return v.withLock(true, fn)
}

// LockedRead runs fn holding the write lock, as a reader that must see the
// vault between writes (quire check): it neither finishes what a dead writer
// left nor keeps a journal, and fn must change nothing.
func (v *Vault) LockedRead(fn func() error) error {
	return v.withLock(false, fn)
}

func (v *Vault) withLock(write bool, fn func() error) error {
	if write {
		return v.writeGrouped(fn)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	// A reader sees the vault between groups of writes, never inside one
	// (whose commits the branch does not show yet).
	for g := v.grp; g != nil; g = v.grp {
		v.mu.Unlock()
		<-g.done
		v.mu.Lock()
	}
	if err := v.openLock(); err != nil {
		return err
	}
	if v.lockF == nil {
		// No quire ever made the lock file, and this process cannot: no
		// quire writer holds a lock that does not exist.
		return fn()
	}
	if err := fsys.Lock(v.lockF); err != nil {
		return err
	}
	v.checked = nil
	defer func() {
		v.checked = nil
		fsys.Unlock(v.lockF)
	}()
	return fn() // a reader: quire check reports links, never refused for them
}

// takeLock takes the file lock for a group of writes and checks what every
// write needs of the vault first; on error the lock is not held. The
// caller holds v.mu.
func (v *Vault) takeLock() error {
	if err := v.openLock(); err != nil {
		return err
	}
	if v.lockF == nil || v.lockRO {
		return v.readOnlyRefusal()
	}
	if err := fsys.Lock(v.lockF); err != nil {
		return err
	}
	err := v.linked()
	if err == nil {
		err = v.formatHolds()
	}
	if err == nil {
		if op := v.gitOperation(); op != nil {
			err = op.Refusal()
		}
	}
	if err == nil {
		err = v.headHolds()
	}
	if err != nil {
		fsys.Unlock(v.lockF)
	}
	return err
}

// WritesRefused answers the refusal every write would get now for what
// the vault is, without taking the lock: a vault read-only here, git's
// merge (or cherry-pick, revert, rebase) not finished, a HEAD detached or
// moved to another branch; nil otherwise. A reader that would
// write only derived state goes on without it.
func (v *Vault) WritesRefused() error {
	if v.ReadOnly() {
		return v.readOnlyRefusal()
	}
	if what := v.operationMarked(); what != "" {
		// The refusal itself, with the files in conflict, is the write's
		// (under the lock): a reader only learns it would get one.
		return refusal.New(refusal.Conflict, "git's %s is not finished", what)
	}
	return v.headHolds()
}

// Detached reports whether HEAD is detached, and at which commit.
func (v *Vault) Detached() (string, bool) {
	data, err := fsys.ReadFile(filepath.Join(v.gitDir, "HEAD"))
	if err != nil {
		return "", false
	}
	head := strings.TrimSpace(string(data))
	if strings.HasPrefix(head, "ref: ") {
		return "", false
	}
	return head, true
}

// detachedWords say what a detached HEAD means for quire.
func detachedWords(at string) string {
	if len(at) > 12 {
		at = at[:12]
	}
	return fmt.Sprintf("HEAD is detached (at %s): quire commits only onto a branch, so it writes nothing while HEAD is detached; reads answer from the files checked out. Check out a branch (git switch <branch>) to write", at)
}

// headHolds checks, before a write, that HEAD is the branch this vault
// was opened on: a detached HEAD (git checkout <commit>) refuses every
// write, as a commit on it would be left behind by the next checkout,
// and a HEAD moved to another branch since the vault was opened (a
// server running while a person switched) refuses it too, rather than
// commit onto a branch the files are no longer checked out from.
func (v *Vault) headHolds() error {
	data, err := fsys.ReadFile(filepath.Join(v.gitDir, "HEAD"))
	if err != nil {
		return err
	}
	head := strings.TrimSpace(string(data))
	ref, ok := strings.CutPrefix(head, "ref: ")
	if !ok {
		return refusal.New(refusal.Conflict, "%s", detachedWords(head))
	}
	if ref != v.branch {
		return refusal.New(refusal.Conflict, "HEAD is on %s now, and this quire opened the vault on %s: start it again (quire serve, quire mcp) to write on %s", ref, v.branch, ref)
	}
	return nil
}

// openLock opens .git/quire.lock once. A vault this process may not
// write (its files made read-only, a read-only mount, another user's) is
// read all the same: the lock is taken through a read-only descriptor
// (flock needs no more), and where the file does not exist and cannot be
// made, there is no lock to take. lockErr keeps why for the refusal of a
// write. The caller holds v.mu.
func (v *Vault) openLock() error {
	if v.lockF != nil || v.lockErr != nil {
		return nil
	}
	p := filepath.Join(v.gitDir, "quire.lock")
	f, err := fsys.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err == nil {
		v.lockF = f
		return nil
	}
	if !fsys.IsReadOnly(err) {
		return err
	}
	v.lockErr = err
	if f, err := fsys.Open(p); err == nil {
		v.lockF, v.lockRO = f, true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// readOnlyRefusal is what a write answers on a vault this process may not
// write.
func (v *Vault) readOnlyRefusal() error {
	return refusal.New(refusal.Conflict, "this vault is read-only here (%v): quire writes nothing to it; reads and quire check answer", v.lockErr)
}

// ReadOnly reports whether this process may not write the vault (see
// openLock): reads answer, writes are refused.
func (v *Vault) ReadOnly() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.openLock()
	return v.lockErr != nil
}

// Journaled reports whether a writer left its journal: it stopped in the
// middle, and the next writer or quire janitor finishes what it left. The
// caller holds the lock.
func (v *Vault) Journaled() (string, bool) {
	data, err := fsys.ReadFile(v.journalPath())
	if err != nil || len(data) == 0 {
		return "", false
	}
	var pids []string
	for _, line := range strings.Split(string(data), "\n") {
		if pid, ok := strings.CutPrefix(line, "pid "); ok {
			pids = append(pids, pid)
		}
	}
	return strings.Join(pids, ", "), true
}

// Commit records the given paths (files or folders) in a new commit, as
// Signature author with message msg. The caller holds the lock. It returns
// the new commit's id, or the zero id when nothing changed.
func (v *Vault) Commit(paths []string, author Signature, msg string) (string, error) {
	if !v.locked {
		return "", errors.New("vault: Commit called without the lock")
	}
	id, err := v.commitPaths(paths, author, tidyMessage(msg))
	if err != nil {
		// The failed commit staged its files in the index kept in memory;
		// forget them (read .git/index again next time), or the next commit
		// would take them for committed and leave them out of its tree.
		v.gitIdx.stat = fileStamp{}
		return "", err
	}
	if id.IsZero() {
		return "", nil
	}
	return id.String(), nil
}

// ReadBlob reads a file as it was committed in the blob with the given id.
func (v *Vault) ReadBlob(id string) ([]byte, error) {
	h, err := object.ParseHash(id)
	if err != nil {
		return nil, fmt.Errorf("vault: %q is not a blob id", id)
	}
	return v.objs.readBlob(h)
}

// BlobID is git's blob id of data.
func BlobID(data []byte) string { return hashObject("blob", data).String() }

// Init makes a vault at dir: a git repository on branch main, quire.yaml,
// the index, playbook-runs/AGENTS.md, .gitignore and a first commit. dir
// may exist but must be empty.
func Init(dir, org string, now time.Time) (*Vault, error) {
	// The org is a segment of every URL (/v1/orgs/<org>/…): it takes a
	// playbook id's rule.
	if !address.ValidPlaybookID(org) {
		return nil, refusal.Invalid("--org", "%q is not an organization's id: 3 to 48 lowercase letters, digits and hyphens, beginning with a letter (acme, north-star)", org)
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(root, ConfigFile)); err == nil {
		return nil, refusal.New(refusal.Conflict, "%s is already a quire vault", root)
	}
	if _, err := os.Stat(filepath.Join(root, ".git")); err == nil {
		return nil, refusal.New(refusal.Conflict, "%s already holds a git repository; quire init makes a new one", root)
	}
	if names, err := os.ReadDir(root); err == nil && len(names) > 0 {
		// As git clone refuses: files already there would show in the
		// vault's git status, and a source tree's folder made a vault
		// (quire init ./vault in quire's own clone) nests a repository.
		shown := []string{}
		for _, n := range names[:min(3, len(names))] {
			shown = append(shown, n.Name())
		}
		more := ""
		if len(names) > 3 {
			more = fmt.Sprintf(" and %d more", len(names)-3)
		}
		return nil, refusal.New(refusal.Conflict, "%s is not empty (it holds %s%s): quire init makes a vault in a new or empty folder", root, strings.Join(shown, ", "), more)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	if err := gitInit(root); err != nil {
		return nil, fmt.Errorf("vault: git init: %w", err)
	}
	files := map[string][]byte{
		".gitignore": []byte(".quire/\n"),
		// Several writers that meet at a remote append to these; git's
		// union merge keeps both sides' lines, for quire's meeting and a
		// person's git pull alike.
		AttributesFile: []byte(UnionAttributes),
		ConfigFile:     mustYAML(Config{Format: FormatVersion, Org: org}),
		IndexFile:      nil,
		AgentsFile:     []byte(agentsMD),
	}
	for rel, data := range files {
		abs := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			return nil, err
		}
		if err := WriteAtomic(abs, data); err != nil {
			return nil, err
		}
	}
	v, err := Open(root)
	if err != nil {
		return nil, err
	}
	err = v.Locked(func() error {
		_, err := v.Commit([]string{".gitignore", AttributesFile, ConfigFile, IndexFile, AgentsFile},
			Signature{Name: "quire", When: now}, "Make the vault of "+org)
		return err
	})
	return v, err
}

func mustYAML(v any) []byte {
	data, err := yaml.Marshal(v)
	if err != nil {
		panic(err)
	}
	return data
}

// Exists reports whether rel exists in the vault's work tree.
func (v *Vault) Exists(rel string) bool {
	_, err := os.Lstat(v.Abs(rel))
	return !errors.Is(err, fs.ErrNotExist)
}

// gitInit makes an empty repository in root, as git init does: .git/
// with its folders and config (not bare), and HEAD naming the branch
// main. It works at the storage level: go-git's root package, which
// PlainInit is in, links every network transport (ssh, http and their
// crypto) into the binary, and quire never fetches or pushes.
func gitInit(root string) error {
	s := filesystem.NewStorage(osfs.New(filepath.Join(root, ".git")), cache.NewObjectLRUDefault())
	if err := s.Init(); err != nil {
		return err
	}
	cfg, err := s.Config()
	if err != nil {
		return err
	}
	cfg.Core.IsBare = false
	if err := s.SetConfig(cfg); err != nil {
		return err
	}
	if err := setManyFiles(filepath.Join(root, ".git")); err != nil {
		return err
	}
	return s.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName("main")))
}
