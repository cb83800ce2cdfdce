package vault

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"

	"quire/internal/fsys"
)

// Entry is one line of vault/00-index.jsonl: a thing's identity, written
// once when the thing is made. State that changes lives in the thing's own
// files.
type Entry struct {
	UID      string `json:"uid"`
	Type     string `json:"type"` // project, playbook, definition, playbook-run, comment
	Path     string `json:"path"`
	Playbook string `json:"playbook,omitempty"`
	Name     string `json:"name,omitempty"`
	DefType  string `json:"definition_type,omitempty"`
	Created  string `json:"created,omitempty"`
}

// registry reads the index incrementally: it holds what it took with the
// file's stamp (fsys.Grown) and takes only the lines added since, or the
// whole index again when the file was rewritten, replaced or cut (a git
// checkout, reset or pull, a repair).
type registry struct {
	path    string
	log     func(format string, args ...any) // the vault's logf
	root    string                           // the vault's folder, where a run's definition.md is read
	mu      sync.Mutex
	grown   fsys.Grown
	scanned bool // a lookup was answered by scan
	entries []Entry
	shared  bool // a slice of entries was handed out (Shared)
	byUID   map[string]int
	// lines is how many lines were taken, so a line read later is named
	// by its number in the file.
	lines int
	// bad are the lines that are not an index line (see BadLine), which
	// reads and writes alike read past.
	bad []BadLine
	// told are the bad lines already said on the log, by number.
	told map[int]bool
	// incomplete are the entries of runs written in the capsule's own
	// form whose definition could not be found yet (completeRun).
	incomplete []int
}

// BadLine is a whole line of the index that is not an index line: not a
// JSON object, or one without a uid (a line written by hand, a merge's
// conflict markers). The index is read past it, by reads and writes alike,
// so one such line hides only the thing it may have named; quire check
// reports it at its line, and it stays for a person to mend or remove
// (quire never rewrites the index).
type BadLine struct {
	Line    int
	Message string
}

func (r *registry) refresh() error {
	f, err := fsys.OpenNoFollow(r.path, os.O_RDONLY, 0)
	if fsys.IsLink(err) {
		return linkRefusal(IndexFile)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("vault: %s is missing", IndexFile)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	from, data, err := r.grown.Next(f)
	if err != nil {
		return err
	}
	if from == 0 {
		r.entries, r.byUID, r.lines, r.bad, r.incomplete = nil, map[string]int{}, 0, nil, nil
		r.shared = false
	}
	first := len(r.entries)
	// Only whole lines count; a torn last line waits for its repair.
	end := bytes.LastIndexByte(data, '\n') + 1
	for rest := data[:end]; len(rest) > 0; {
		nl := bytes.IndexByte(rest, '\n')
		line := rest[:nl]
		rest = rest[nl+1:]
		r.lines++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		e, msg := parseEntry(line)
		if msg != "" {
			r.badLine(r.lines, msg)
			continue
		}
		if incompleteRun(&e) {
			r.incomplete = append(r.incomplete, len(r.entries))
		}
		r.byUID[e.UID] = len(r.entries)
		r.entries = append(r.entries, e)
	}
	r.grown.Took(from, data, end)
	r.completeRuns()
	r.order(first)
	return nil
}

// Less orders index lines as every reader reads them: by the time the
// thing was made, then by uid. The index is appended to at several homes
// and met by git's union merge, which puts one side's new lines before the
// other's as it merges; ordered by what each line carries, every clone of
// the same commits reads the same index whichever side a merge took first
// (docs/vault-format.md). A line without a time (written by hand) comes
// first.
func Less(a, b *Entry) bool {
	if a.Created != b.Created {
		return a.Created < b.Created
	}
	return a.UID < b.UID
}

// order keeps r.entries in Less's order once the lines from first on were
// added: lines appended by quire come in order and cost a comparison each;
// a line out of order (a merge's, a hand-written one) sorts them all again.
func (r *registry) order(first int) {
	if first < 1 {
		first = 1
	}
	for i := first; i < len(r.entries); i++ {
		if Less(&r.entries[i], &r.entries[i-1]) {
			r.own()
			sort.SliceStable(r.entries, func(i, j int) bool { return Less(&r.entries[i], &r.entries[j]) })
			r.byUID, r.incomplete = make(map[string]int, len(r.entries)), nil
			for i := range r.entries {
				r.byUID[r.entries[i].UID] = i
				if incompleteRun(&r.entries[i]) {
					r.incomplete = append(r.incomplete, i)
				}
			}
			return
		}
	}
}

// parseEntry reads one line of the index: the entry, or why the line is
// not one.
func parseEntry(line []byte) (Entry, string) {
	if e, ok := ownEntry(line); ok && e.UID != "" {
		return e, ""
	}
	var e Entry
	if err := json.Unmarshal(line, &e); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) || !json.Valid(line) {
			return e, "is not a JSON object"
		}
		return e, fmt.Sprintf("is not an index line: %v", err)
	}
	if e.UID == "" {
		return e, "is not an index line: it has no uid"
	}
	return e, ""
}

// badLine notes a line of the index that is not an index line, and says
// so on the log the first time this process reads it.
func (r *registry) badLine(n int, msg string) {
	r.bad = append(r.bad, BadLine{Line: n, Message: msg})
	if r.told == nil {
		r.told = map[int]bool{}
	}
	if !r.told[n] && r.log != nil {
		r.told[n] = true
		r.log("%s:%d %s; read past it (quire check names it): mend or remove the line", IndexFile, n, msg)
	}
}

// scan looks for the line of uid in the index's bytes, as quire writes
// it: a line that begins {"uid":"<uid>". The byte sequence "uid":" can
// occur nowhere else (inside a JSON string every quote is escaped), and
// the line found is decoded and checked. The last such whole line is the
// one refresh would keep. Not found here (a line written by hand in
// another form, or no such uid) is no answer: the caller reads the index.
func (r *registry) scan(uid string) (Entry, bool, error) {
	data, release, err := r.mapped()
	if err != nil {
		return Entry{}, false, nil // refresh says why
	}
	defer release()
	key := []byte(`{"uid":"` + uid + `"`)
	for end := len(data); end > 0; {
		i := bytes.LastIndex(data[:end], key)
		if i < 0 {
			break
		}
		end = i
		if i > 0 && data[i-1] != '\n' {
			continue
		}
		nl := bytes.IndexByte(data[i:], '\n')
		if nl < 0 {
			continue // a torn last line waits for its repair
		}
		var e Entry
		if json.Unmarshal(data[i:i+nl], &e) != nil || e.UID != uid || incompleteRun(&e) {
			continue
		}
		return e, true, nil
	}
	return Entry{}, false, nil
}

// mapped reads the index's file whole into one buffer of its size
// (io.ReadAll's growing buffer, zeroed and copied at each step, was most of
// a lookup), and answers its bytes and what to call when done with them.
// It is not mapped into memory: a writer cutting a torn tail while a
// reader looks would make the reader fault.
func (r *registry) mapped() ([]byte, func(), error) {
	f, err := fsys.OpenNoFollow(r.path, os.O_RDONLY, 0)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	data := make([]byte, fi.Size())
	n, err := io.ReadFull(f, data)
	if err != nil && err != io.ErrUnexpectedEOF {
		return nil, nil, err
	}
	return data[:n], func() {}, nil
}

// Entries returns every line of the index, in Less's order.
func (v *Vault) Entries() ([]Entry, error) {
	r := v.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.refresh(); err != nil {
		return nil, err
	}
	return append([]Entry(nil), r.entries...), nil
}

// Shared returns every line of the index, in Less's order, without a
// copy: the lines as the registry holds them, which the caller must not
// change. They stay as they are however the index changes after: lines
// the registry takes later are appended past them, and a change of the
// lines it holds (a sort after a merge's line out of order, a run's line
// completed from its folder) is made in a copy once a slice was shared.
// list_runs at 100,000 runs spent most of its time copying every line
// (Find).
func (v *Vault) Shared() ([]Entry, error) {
	r := v.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.refresh(); err != nil {
		return nil, err
	}
	r.shared = true
	return r.entries[:len(r.entries):len(r.entries)], nil
}

// own makes r.entries the registry's own before a change in place: a
// copy, when a slice of them was shared. The caller holds r.mu.
func (r *registry) own() {
	if r.shared {
		r.entries = slices.Clone(r.entries)
		r.shared = false
	}
}

// Lookup finds the index line of a uid.
func (v *Vault) Lookup(uid string) (Entry, bool, error) {
	r := v.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.grown.Held() && !r.scanned {
		// A process's first lookup (a `quire call`) finds the line without
		// decoding the others: reading every line was a sixth of a call at
		// 5,000 runs, and grows with the vault. A process that looks up
		// again (a warm server) reads the index once and then only what is
		// added to it, where a scan reads the whole file every time.
		r.scanned = true
		if e, ok, err := r.scan(uid); err != nil || ok {
			return e, ok, err
		}
	}
	if err := r.refresh(); err != nil {
		return Entry{}, false, err
	}
	i, ok := r.byUID[uid]
	if !ok {
		return Entry{}, false, nil
	}
	return r.entries[i], true, nil
}

// Find returns the index lines for which keep answers true.
func (v *Vault) Find(keep func(*Entry) bool) ([]Entry, error) {
	r := v.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.refresh(); err != nil {
		return nil, err
	}
	// Counted first, then copied into a slice of that size: appending
	// 100,000 runs' lines grew and copied the slice some 25 times, a third
	// of a list_runs at 100,000 runs with the garbage it left.
	n := 0
	for i := range r.entries {
		if keep(&r.entries[i]) {
			n++
		}
	}
	if n == 0 {
		return nil, nil
	}
	out := make([]Entry, 0, n)
	for i := range r.entries {
		if keep(&r.entries[i]) {
			out = append(out, r.entries[i])
		}
	}
	return out, nil
}

// FindType returns the index lines of things of type typ for which keep
// answers true, in Less's order. A process that has not read the index (a `quire
// call`) decodes only the lines that may be of that type: a line whose one
// "type" key (the bytes "type" occur only as a key: a quote inside a JSON
// string is escaped) says another type right after it, as quire writes
// lines, is skipped undecoded; every other line is decoded and judged, so
// the answer is the one reading every line gives.
func (v *Vault) FindType(typ string, keep func(*Entry) bool) ([]Entry, error) {
	r := v.reg
	r.mu.Lock()
	if r.grown.Held() || typ == "playbook-run" {
		// A run's line in the capsule's own form is completed from its
		// folder (completeRun), which a line alone cannot be.
		r.mu.Unlock()
		return v.Find(func(e *Entry) bool { return e.Type == typ && keep(e) })
	}
	r.mu.Unlock()
	data, release, err := r.mapped()
	if err != nil {
		return v.Find(func(e *Entry) bool { return e.Type == typ && keep(e) }) // it says why
	}
	defer release()
	key, want := []byte(`"type"`), []byte(`"type":"`+typ+`"`)
	var out []Entry
	for len(data) > 0 {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			break // a torn last line waits for its repair
		}
		line := data[:nl]
		data = data[nl+1:]
		if i := bytes.Index(line, key); i >= 0 && bytes.Count(line, key) == 1 && line[i+len(key)] == ':' && !bytes.HasPrefix(line[i:], want) &&
			len(line) > i+len(key)+1 && line[i+len(key)+1] == '"' {
			continue
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		e, msg := parseEntry(line)
		if msg != "" {
			continue // read past, as refresh does (BadLine)
		}
		if e.Type == typ && keep(&e) {
			out = append(out, e)
		}
	}
	if !sort.SliceIsSorted(out, func(i, j int) bool { return Less(&out[i], &out[j]) }) {
		sort.SliceStable(out, func(i, j int) bool { return Less(&out[i], &out[j]) })
	}
	return out, nil
}

// IndexProblems reads the index and answers its lines that are not index
// lines (BadLine), in order.
func (v *Vault) IndexProblems() ([]BadLine, error) {
	r := v.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.refresh(); err != nil {
		return nil, err
	}
	return append([]BadLine(nil), r.bad...), nil
}

// Register appends a thing's line to the index. The caller holds the lock,
// has already written the thing's files, and commits the index with them.
func (v *Vault) Register(e Entry) error {
	if !v.locked {
		return errors.New("vault: Register called without the lock")
	}
	if _, dup, err := v.Lookup(e.UID); err != nil {
		return err
	} else if dup {
		return fmt.Errorf("vault: uid %s is already in the index", e.UID)
	}
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if rel, err := filepath.Rel(v.root, v.reg.path); err != nil {
		return err
	} else if err := v.Touch(filepath.ToSlash(rel), true); err != nil {
		return err
	}
	_, err = AppendLine(v.reg.path, append(line, '\n'))
	return err
}
