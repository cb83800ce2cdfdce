package vault

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"quire/vault/git/index"
	"quire/vault/git/object"
)

// Unchanged is what quire check may take as the last check that passed
// saw it (issue 28: after one boundary at 100,000 runs the checks of the
// vault as a whole read every file of HEAD's tree, every object, .git/index
// and the work tree again, 22 s). It is made from that check's HEAD and
// the run folders whose files it did not find as it left them (their
// stamps: ledger/checker's record):
//
//   - HEAD's tree is compared with that commit's, folder by folder where
//     their ids differ: the files it holds that are new or changed are the
//     ones whose blobs and modes are looked at.
//   - Status and HandEdits look at the run folders named, those whose
//     tree in HEAD is not the one that commit held, those where
//     .git/index and HEAD differ, and everything outside playbook-runs/.
//     Any other run folder is as that check saw it: its work tree agreed
//     with .git/index then, and .git/index with HEAD, as it does now
//     (its cache-tree says so, or it was compared entry by entry).
//
// A nil *Unchanged is nothing known: everything is read (quire check
// --full, a first check, a commit that cannot be read).
type Unchanged struct {
	// look holds the names (in playbook-runs/) of the run folders looked
	// at; every other run folder is left out.
	look map[string]bool
	// changed are HEAD's files not in since's tree with the same blob and
	// mode, by path.
	changed map[string]change
	// differ are the paths where .git/index and HEAD differ.
	differ []string
	// held: playbook-runs/ holds the entries it held when the check at
	// since passed (HoldsNames).
	held bool
}

// HoldsNames tells u that playbook-runs/ holds the entries it held when
// the check at its commit passed (its stamp is that check's: a folder's
// times change when an entry is made, removed or renamed in it). Status
// then walks the run folders u looks at by name rather than listing
// playbook-runs/: 100,000 names read and sorted, 0.3-0.5 s of a check
// after one boundary at 100,000 runs.
func (u *Unchanged) HoldsNames() {
	if u != nil {
		u.held = true
	}
}

// UnchangedSince is what is unchanged since the commit since, but for
// the run folders named in look (names in playbook-runs/, and the files
// beside them, which are looked at by name); nil when since
// is zero or its tree cannot be read. The caller holds the lock.
func (v *Vault) UnchangedSince(since Hash, look []string) *Unchanged {
	if since.IsZero() {
		return nil
	}
	head, err := v.head()
	if err != nil || head.IsZero() {
		return nil
	}
	now, err := v.objs.readCommitTree(head)
	if err != nil {
		return nil
	}
	old, err := v.objs.readCommitTree(since)
	if err != nil {
		return nil // gone (a reset and git gc): everything is read
	}
	u := &Unchanged{look: map[string]bool{}, changed: map[string]change{}}
	for _, name := range look {
		u.look[name] = true
	}
	if err := v.diffTrees(old, now, "", u.changed, u.look); err != nil {
		return nil
	}
	if err := v.gitIdx.loadVerified(); err != nil {
		return nil // InspectGit says so, reading everything
	}
	if v.gitIdx.cacheTree != now {
		// .git/index is not known to make HEAD's tree: where it differs,
		// the run folders are looked at as well (their files against
		// what the index now says).
		_, want, err := v.headFiles()
		if err != nil {
			return nil
		}
		u.differ = v.indexAgainst(want)
		for _, p := range u.differ {
			if rest, ok := strings.CutPrefix(p, RunsDir+"/"); ok {
				name, _, _ := strings.Cut(rest, "/")
				u.look[name] = true
			}
		}
	}
	return u
}

// skips says whether the run folder name (in playbook-runs/) is left out.
func (u *Unchanged) skips(name string) bool { return u != nil && !u.look[name] }

// diffTrees puts in out the files of the tree b (at prefix) that the tree
// a does not hold with the same blob and mode, reading only the folders
// whose ids differ, and in runs the names of the run folders they lie in
// or that a holds and b does not.
func (v *Vault) diffTrees(a, b Hash, prefix string, out map[string]change, runs map[string]bool) error {
	if a == b {
		return nil
	}
	var ta []treeEntry
	if !a.IsZero() {
		var err error
		if ta, err = v.objs.readTree(a); err != nil {
			return err
		}
	}
	tb, err := v.objs.readTree(b)
	if err != nil {
		return err
	}
	run := func(name string) {
		if prefix == RunsDir+"/" {
			runs[name] = true
		}
	}
	i := 0
	for _, e := range tb {
		// Entries are in git's order, a folder's name as though it ended
		// in "/". Trees out of order only make more look changed.
		for i < len(ta) && object.TreeLess(ta[i], e) {
			run(ta[i].Name) // gone from b
			i++
		}
		var old *treeEntry
		if i < len(ta) && ta[i].Name == e.Name {
			old = &ta[i]
			i++
		}
		if old != nil && old.Hash == e.Hash && old.Mode == e.Mode {
			continue
		}
		run(e.Name)
		switch e.Mode {
		case object.Dir:
			from := ZeroHash
			if old != nil && old.Mode == object.Dir {
				from = old.Hash
			}
			if err := v.diffTrees(from, e.Hash, prefix+e.Name+"/", out, runs); err != nil {
				return err
			}
		case object.Submodule:
		default:
			out[prefix+e.Name] = change{hash: e.Hash, mode: e.Mode}
		}
	}
	for ; i < len(ta); i++ {
		run(ta[i].Name)
	}
	return nil
}

// InspectGitFrom is InspectGit reading of HEAD only what changed since u's
// commit (nil: everything). The index is taken to make HEAD's tree when
// its cache-tree's root says so, as git commit takes it; else it was
// compared with HEAD when u was made.
func (v *Vault) InspectGitFrom(u *Unchanged) []Finding {
	out := v.InspectGitState()
	if u == nil {
		return append(out, v.inspectHead()...)
	}
	for _, name := range slices.Sorted(maps.Keys(u.changed)) {
		out = append(out, v.blobFindings(name, u.changed[name])...)
	}
	return append(out, indexFindings(u.differ)...)
}

// blobFindings are what is wrong with one file of HEAD's tree: a symbolic
// link, or a blob missing from .git/objects.
func (v *Vault) blobFindings(name string, w change) []Finding {
	var out []Finding
	if w.mode == object.Symlink {
		out = append(out, Finding{name, "HEAD holds it as a symbolic link; quire never follows one"})
	}
	if ok, err := v.objs.has(w.hash); err == nil && !ok {
		out = append(out, Finding{name, fmt.Sprintf("its blob %s in HEAD's tree is missing from .git/objects; a person must restore it (a clone of the vault has it)", w.hash)})
	}
	return out
}

// eachFrom calls fn with the entries of .git/index (their names alone
// unless fields) outside the run folders u leaves out, in order, until it
// answers false: those before playbook-runs/, those of each run folder
// looked at, then those after. An entry is valid only during the call.
func (x *gitIndex) eachFrom(u *Unchanged, fields bool, fn func(e *index.Entry) bool) {
	each := func(e *index.Entry, _ int, _ bool) bool { return fn(e) }
	if u == nil {
		x.walkFrom("", fields, each)
		return
	}
	more := true
	// under walks the entries whose names begin with prefix.
	under := func(prefix string) {
		x.walkFrom(prefix, fields, func(e *index.Entry, _ int, _ bool) bool {
			if !strings.HasPrefix(e.Name, prefix) {
				return false
			}
			more = fn(e)
			return more
		})
	}
	x.walkFrom("", fields, func(e *index.Entry, _ int, _ bool) bool {
		if e.Name >= RunsDir+"/" {
			return false
		}
		more = fn(e)
		return more
	})
	for _, name := range slices.Sorted(maps.Keys(u.look)) {
		if !more {
			return
		}
		// The entry of that name (a file beside the run folders), then
		// those below it.
		p := RunsDir + "/" + name
		if e, ok := x.get(p); ok {
			if more = fn(e); !more {
				return
			}
		}
		under(p + "/")
	}
	if more {
		x.walkFrom(RunsDir+"0", fields, each) // '0' follows '/'
	}
}
