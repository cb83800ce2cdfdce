package history

import (
	"os"
	"sync"

	"quire/vault"
)

// Dir is the folder of the histories, relative to the vault.
const Dir = vault.QuireDir + "/history"

// Source is what the histories ask of their caller (package ledger, which
// knows where a playbook's files are and what is derived from a history).
type Source interface {
	// Files lists the event files of a playbook's history, relative to
	// the vault, in the order a rebuild numbers their lines: the
	// playbook's events.jsonl, then its runs' run.jsonl in the index's
	// order.
	Files(playbook string) ([]string, error)
	// Owner says whose events an event file holds, the uid the id of a
	// line written by hand in it begins with: its run's id (run true) for
	// a run's run.jsonl, the playbook's uid for its events.jsonl; "" for
	// any other file.
	Owner(file string) (uid string, run bool)
	// Forget is told, under the vault's lock, that the history of a
	// playbook was thrown away because git took its files back: what was
	// derived from it (the pages' views, the requests filed from it) goes
	// too. The history is rebuilt from the files on its next use.
	Forget(playbook string)
}

// Store is one vault's histories: each playbook's History, the git stamp
// that says they are true to the files (stamp.go), and the commits left
// pending (pending.go). One Store is shared by a ledger's writers and
// readers.
type Store struct {
	v   *vault.Vault
	src Source

	mu   sync.Mutex
	hist map[string]*History
	// mark is .git/index as this store last left it, under the lock
	// (stamp.go).
	mark vault.IndexMark
	// adopted: abs path of an event file → its keptStat when it was last
	// found to end with numbered lines: by Adopt or AdoptFor, which
	// number the lines written by hand at its end, and after each of the
	// writer's own appends to it since (Appended; lines.go).
	adopted sync.Map
	// monitored: playbook → the file system monitor's token when every
	// event file of the playbook was last as adopted says (AdoptAllFor),
	// under mu.
	monitored map[string]string
	// stamp and head are the git stamp and git's HEAD as the store last
	// read or wrote them (kept.go).
	stamp, head keptFile
}

// New makes the histories of the vault v.
func New(v *vault.Vault, src Source) *Store {
	return &Store{v: v, src: src, hist: map[string]*History{}, monitored: map[string]string{}}
}

func (s *Store) newHistory(playbook string) *History {
	return &History{playbook: playbook, dir: s.v.Abs(Dir), v: s.v, src: s.src}
}

// Of answers the playbook's history, read again for what other processes
// added since, and rebuilt from the files when .quire/history holds none.
// The caller holds the vault's lock.
func (s *Store) Of(playbook string) (*History, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok, err := s.readLocked(playbook)
	if err != nil || ok {
		return h, err
	}
	h = s.newHistory(playbook)
	if err := h.rebuild(); err != nil {
		return nil, err
	}
	s.hist[playbook] = h
	return h, nil
}

// Read answers the playbook's history, read again for what other
// processes added since, as Of does, and true; or false when it must be
// built first (.quire/history holds none): a rebuild checks the files
// against HEAD and writes the history's files, so it is a write, made
// under the vault's lock (Of), which a read does not hold.
func (s *Store) Read(playbook string) (*History, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readLocked(playbook)
}

// readLocked is Read under s.mu.
func (s *Store) readLocked(playbook string) (*History, bool, error) {
	if h, ok := s.hist[playbook]; ok {
		return h, true, h.refresh()
	}
	h := s.newHistory(playbook)
	if err := h.refresh(); err != nil {
		return nil, false, err
	}
	if h.count == 0 && !h.exists() {
		return nil, false, nil
	}
	s.hist[playbook] = h
	return h, true, nil
}

// Peek answers the playbook's history as .quire/history holds it, neither
// rebuilt nor kept (for quire check), and false when it holds none.
func (s *Store) Peek(playbook string) (*History, bool, error) {
	h := s.newHistory(playbook)
	if !h.exists() {
		return nil, false, nil
	}
	if err := h.refresh(); err != nil {
		return nil, true, err
	}
	return h, true, nil
}

// Reset forgets every history the store holds, for quire reindex, which
// removes .quire/history: each is read again, or rebuilt, on its next use.
func (s *Store) Reset() {
	s.mu.Lock()
	s.hist = map[string]*History{}
	s.mu.Unlock()
}

// forget drops a playbook's history (rebuilt from the files on its next
// use) and tells the source, which forgets what was derived from it. The
// caller holds the vault's lock.
func (s *Store) forget(playbook string) {
	s.mu.Lock()
	delete(s.hist, playbook)
	s.mu.Unlock()
	h := s.newHistory(playbook)
	os.Remove(h.seqPath())
	os.Remove(h.filesPath())
	os.Remove(h.chainPath())
	s.src.Forget(playbook)
}
