package ledger

import (
	"os"
	"sort"
	"strings"

	"quire/vault"
)

// pendingFile lists, one path a line, what writes recorded durably but
// could not commit (the commit failed after the record was on disk: a git
// lock held by another program, a full disk). The next commit any writer
// makes takes these paths along, and quire janitor commits them by
// themselves; so an answer that said committed: false is finished without a
// person.
const pendingFile = vault.QuireDir + "/uncommitted"

// commit commits paths after a write whose record is already durable, and
// says whether it could. A commit that fails leaves its paths in
// .quire/uncommitted for the next commit; the write's answer says
// committed: false instead of failing, because the write happened and a
// retry would make it twice. The caller holds the lock.
func (t *tx) commit(paths []string, sig vault.Signature, m vault.Message) bool {
	l := t.l
	pend := l.pending()
	all := append(append([]string(nil), paths...), pend...)
	if len(pend) > 0 {
		m.Body = append(m.Body, "Also commits what an earlier write left uncommitted: "+strings.Join(pend, ", "))
	}
	if _, err := l.gitCommit(all, sig, m.String()); err != nil {
		l.addPending(paths)
		return false
	}
	if len(pend) > 0 {
		os.Remove(l.v.Abs(pendingFile))
	}
	return true
}

// pending reads .quire/uncommitted.
func (l *Ledger) pending() []string {
	data, err := os.ReadFile(l.v.Abs(pendingFile))
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

func (l *Ledger) addPending(paths []string) {
	for _, p := range paths {
		// .quire/ is derived state; should this fail too, the change is
		// still in the work tree for the run's next boundary.
		if _, err := vault.AppendLine(l.v.Abs(pendingFile), []byte(p+"\n")); err != nil {
			return
		}
	}
}

// finishPending commits what earlier writes left uncommitted, for quire
// janitor. It returns the paths it committed. The caller holds the lock.
func (t *tx) finishPending(sig vault.Signature) ([]string, error) {
	l := t.l
	pend := l.pending()
	if len(pend) == 0 {
		return nil, nil
	}
	if _, err := l.gitCommit(pend, sig, "Commit what earlier writes left uncommitted\n\n"+strings.Join(pend, "\n")); err != nil {
		return nil, err
	}
	os.Remove(l.v.Abs(pendingFile))
	return pend, nil
}
