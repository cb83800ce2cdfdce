package history

import (
	"os"
	"sort"
	"strings"

	"quire/internal/fsys"
	"quire/vault"
)

// pendingFile lists, one path a line, what writes recorded durably but
// could not commit (the commit failed after the record was on disk: a git
// lock held by another program, a full disk). The next commit any writer
// makes takes these paths along, and quire janitor commits them by
// themselves; so an answer that said committed: false is finished without a
// person.
const pendingFile = vault.QuireDir + "/uncommitted"

// Commit commits paths after a write whose record is already durable,
// with what earlier writes left pending, keeping the histories' git stamp
// (stamp.go). It answers the commit's id, or false when it could not: its
// paths are then left in .quire/uncommitted for the next commit. The
// write's answer says committed: false instead of failing, because the
// write happened and a retry would make it twice. The caller holds the
// vault's lock.
func (s *Store) Commit(paths []string, sig vault.Signature, m vault.Message) (id string, ok bool) {
	pend := s.pending()
	all := append(append([]string(nil), paths...), pend...)
	if len(pend) > 0 {
		m.Body = append(m.Body, "Also commits what an earlier write left uncommitted: "+strings.Join(pend, ", "))
	}
	id, err := s.gitCommit(all, sig, m.String())
	if err != nil {
		s.addPending(paths)
		return "", false
	}
	if len(pend) > 0 {
		os.Remove(s.v.Abs(pendingFile))
	}
	return id, true
}

// FinishPending commits what earlier writes left uncommitted, for quire
// janitor. It answers the commit's id and the paths it committed (none,
// and no commit, when nothing was pending). The caller holds the vault's
// lock.
func (s *Store) FinishPending(sig vault.Signature) (id string, paths []string, err error) {
	pend := s.pending()
	if len(pend) == 0 {
		return "", nil, nil
	}
	if id, err = s.gitCommit(pend, sig, "Commit what earlier writes left uncommitted\n\n"+strings.Join(pend, "\n")); err != nil {
		return "", nil, err
	}
	os.Remove(s.v.Abs(pendingFile))
	return id, pend, nil
}

// Pending lists the paths quire's writes left uncommitted: quire's own
// changes, which its next commit or quire janitor commits.
func (s *Store) Pending() []string { return s.pending() }

// WillCommit lists paths in .quire/uncommitted before a write changes
// them, so that a writer that stops between the change and its commit
// leaves them known as quire's, for the next writer to commit (a file a
// person also edits, such as quire.yaml). The caller holds the vault's
// lock; the commit that takes them clears them.
func (s *Store) WillCommit(paths []string) { s.addPending(paths) }

// pending reads .quire/uncommitted.
func (s *Store) pending() []string {
	data, err := fsys.ReadFile(s.v.Abs(pendingFile))
	if err != nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, p := range strings.Split(string(data), "\n") {
		if p == "" || seen[p] {
			continue
		}
		if _, err := vault.CleanRel(p); err != nil {
			continue // not a path quire wrote; a hand edit
		}
		seen[p] = true
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func (s *Store) addPending(paths []string) {
	for _, p := range paths {
		// .quire/ is derived state; should this fail too, the change is
		// still in the work tree for the run's next boundary.
		if _, err := vault.AppendLine(s.v.Abs(pendingFile), []byte(p+"\n")); err != nil {
			return
		}
	}
}
