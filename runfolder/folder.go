package runfolder

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"quire/internal/crashpoint"
	"quire/internal/front"
	"quire/internal/fsys"
	"quire/vault"
	"quire/words/event"
	"quire/words/refusal"
)

// The six entries of a run folder.
const (
	DefinitionFile = "definition.md"
	ContextFile    = "context.md"
	ThreadFile     = "thread.md"
	LogFile        = "run.jsonl"
	StateFile      = "run.state.json"
	ArtifactsDir   = "artifacts"
	OutputArtifact = "output.json"
)

// Entries lists the six entries every run folder holds.
var Entries = []string{DefinitionFile, ContextFile, ThreadFile, LogFile, StateFile, ArtifactsDir}

// Front is the front matter of definition.md: the core fields, then the
// capsule's required fields, then quire's own.
type Front struct {
	UID             string   `yaml:"uid"`
	Type            string   `yaml:"type"`
	Name            string   `yaml:"name"`
	Created         string   `yaml:"created"`
	Playbook        string   `yaml:"playbook"`
	PlaybookVersion string   `yaml:"playbook_version"`
	MemberOf        []string `yaml:"member_of"`
	Binding         string   `yaml:"binding"`
	Started         string   `yaml:"started"`
	Executor        string   `yaml:"executor"`
	AuthorizedBy    string   `yaml:"authorized_by"`
	QuirePlaybook   string   `yaml:"quire_playbook"`
	DefinitionType  string   `yaml:"definition_type"`
	DefinitionName  string   `yaml:"definition_name"`
	// OutputShape is the shape the definition's outputs take, kept in
	// run.state.json (not in definition.md).
	OutputShape string `yaml:"-"`
}

// RequiredFields are the capsule's required front matter fields.
var RequiredFields = []string{"playbook", "playbook_version", "member_of", "binding", "started", "executor", "authorized_by"}

// Dir is the folder name of a run: <name>-<run_id>-<YYYY-MM-DD>.
func Dir(name, runID string, started time.Time) string {
	return path.Join(vault.RunsDir, fmt.Sprintf("%s-%s-%s", name, runID, started.UTC().Format("2006-01-02")))
}

// Folder is one run folder, at Rel relative to the vault's root.
type Folder struct {
	V   *vault.Vault
	Rel string
}

func (f Folder) abs(name string) string { return f.V.Abs(path.Join(f.Rel, name)) }

// write is the path of one of the folder's files for a write: it refuses a
// path through a symbolic link (the file itself included).
func (f Folder) write(name string) (string, error) { return f.V.WritePath(path.Join(f.Rel, name)) }

// Create makes the run folder with its six entries, all at once: it builds
// them in a hidden folder beside the final one and renames it into place,
// so no folder is ever seen without its six entries. first is the
// run_created line; its seq and id are set by the caller.
func Create(v *vault.Vault, rel string, front Front, context string, first *event.Line) (*State, error) {
	final, err := v.WritePath(rel)
	if err != nil {
		return nil, err
	}
	if _, err := os.Lstat(final); err == nil {
		return nil, refusal.New(refusal.Conflict, "%s already exists", rel)
	}
	tmp, err := v.WritePath(path.Join(vault.RunsDir, ".new-"+path.Base(rel)))
	if err != nil {
		return nil, err
	}
	crashpoint.Hit()
	os.RemoveAll(tmp)
	crashpoint.Hit()
	if err := os.MkdirAll(filepath.Join(tmp, ArtifactsDir), 0o755); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
	}()
	fm, err := yaml.Marshal(front)
	if err != nil {
		return nil, err
	}
	def := "---\n" + string(fm) + "---\n\n" + fmt.Sprintf("# %s run %s\n\nRun of %s/%s at version %s, authorized by %s, executed by %s.\n",
		front.DefinitionName, front.UID, front.DefinitionType, front.DefinitionName, front.PlaybookVersion, front.AuthorizedBy, front.Executor)
	line, err := first.Marshal()
	if err != nil {
		return nil, err
	}
	st := &State{
		RunID: front.UID, Playbook: front.QuirePlaybook, Type: front.DefinitionType, Name: front.DefinitionName,
		Executor: front.Executor, AuthorizedBy: front.AuthorizedBy, StepsSeen: []string{},
		OutputShape: front.OutputShape,
	}
	fmt.Sscan(front.PlaybookVersion, &st.Version)
	st.Apply(first, len(line))
	stateJSON, err := marshalState(st)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{
		DefinitionFile:                      []byte(def),
		ContextFile:                         []byte(context),
		ThreadFile:                          []byte(fmt.Sprintf("# Thread of run %s\n\n", front.UID)),
		LogFile:                             line,
		StateFile:                           stateJSON,
		path.Join(ArtifactsDir, ".gitkeep"): nil,
	}
	for name, data := range files {
		if err := vault.WriteAtomic(filepath.Join(tmp, filepath.FromSlash(name)), data); err != nil {
			return nil, err
		}
	}
	crashpoint.Hit()
	if err := os.Rename(tmp, final); err != nil {
		return nil, err
	}
	ok = true
	return st, nil
}

func marshalState(st *State) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(st); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ReadFront reads definition.md's front matter. One written in the
// capsule's own form, without quire's quire_playbook, definition_type and
// definition_name (a run folder another tool made), has them from the
// index line of the definition its playbook uid names.
func (f Folder) ReadFront() (Front, error) {
	data, err := fsys.ReadFile(f.abs(DefinitionFile))
	if err != nil {
		return Front{}, err
	}
	fr, err := ParseFront(data)
	if err == nil && (fr.QuirePlaybook == "" || fr.DefinitionType == "" || fr.DefinitionName == "") && fr.Playbook != "" {
		if d, ok := f.V.DefinitionOf(fr.Playbook); ok {
			fr.QuirePlaybook, fr.DefinitionType, fr.DefinitionName = d.Playbook, d.DefType, d.Name
		}
	}
	return fr, err
}

// ParseFront reads the strict YAML front matter of a definition.md
// (through package front): an unknown field is refused, as are a field of
// the wrong type and a key written twice, at its line.
func ParseFront(data []byte) (Front, error) {
	if fr, ok := fastFront(data); ok {
		return fr, nil
	}
	return parseFrontYAML(data)
}

// parseFrontYAML is ParseFront through YAML, whatever the front matter's
// form.
func parseFrontYAML(data []byte) (Front, error) {
	var fr Front
	m, err := front.Read(data)
	if errors.Is(err, front.ErrNone) {
		return fr, errors.New("definition.md does not begin with YAML front matter (---)")
	}
	if err == nil {
		err = m.Decode(&fr, true)
	}
	if err != nil {
		return fr, fmt.Errorf("definition.md front matter: %w", err)
	}
	return fr, nil
}

// LoadState reads run.state.json and replays the lines of run.jsonl after
// the ones it reflects, so it is current even after a crash between an
// event and its state write. A torn last line is not read.
//
// The state is also kept in memory per run, with the stat of
// run.state.json it was read from and how much of run.jsonl it reflects:
// while run.state.json is unchanged only the new lines are replayed, so an
// append costs the same after one event as after a thousand since the last
// boundary. A changed run.state.json (another process's boundary) is read
// again.
func (f Folder) LoadState() (*State, error) {
	// Neither file is read through a symbolic link.
	statePath, err := f.write(StateFile)
	if err != nil {
		return nil, err
	}
	logPath, err := f.write(LogFile)
	if err != nil {
		return nil, err
	}
	sfi, err := os.Stat(statePath)
	if errors.Is(err, fs.ErrNotExist) {
		// A run folder another tool wrote without the state file: the
		// state is derived from run.jsonl (quire janitor and quire reindex
		// write it, as does the run's next boundary).
		return f.Derive("")
	}
	if err != nil {
		return nil, err
	}
	stamp := sfi.ModTime().UnixNano() ^ sfi.Size()<<1
	var st *State
	fh, err := fsys.Open(logPath)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	cache := cacheOf(f.V)
	if cs, c, ok := cache.load(logPath); ok && cs == stamp && c.LogBytes <= fi.Size() {
		st = c
	} else {
		// run.state.json is derived state, written by quire or by another
		// process, or edited by hand: it is checked against definition.md
		// and the line it says it ends at, and derived again from run.jsonl
		// when it disagrees.
		data, err := fsys.ReadFile(statePath)
		if err != nil {
			return nil, err
		}
		st = &State{}
		if json.Unmarshal(data, st) != nil || !f.trusted(st, fh, fi.Size()) {
			if st, err = f.Derive(""); err != nil {
				return nil, err
			}
		}
	}
	if fi.Size() > st.LogBytes {
		tail := make([]byte, fi.Size()-st.LogBytes)
		if _, err := fh.ReadAt(tail, st.LogBytes); err != nil {
			return nil, err
		}
		var m conflictMarkers
		for len(tail) > 0 {
			i := bytes.IndexByte(tail, '\n')
			if i < 0 {
				break // torn
			}
			l, err := event.Parse(tail[:i])
			if !m.notHeads(tail[:i]) && err == nil {
				st.Apply(&l, i+1)
			} else {
				st.LogBytes += int64(i + 1)
			}
			tail = tail[i+1:]
		}
	}
	cache.store(logPath, stamp, st)
	return st, nil
}

// trusted says whether a state read from run.state.json may be built on:
// it names the run as definition.md does, and the line that ends at its
// log_bytes is its events-th, with its last seq. A cheap check (definition.md
// and one line of run.jsonl), so a hand edit that would skip or repeat
// event ids is caught before a write; quire check compares the whole state.
func (f Folder) trusted(st *State, fh *os.File, size int64) bool {
	fr, err := f.ReadFront()
	if err != nil || st.agrees(fr) != "" || st.LogBytes > size || st.LogBytes < 0 {
		return false
	}
	if st.LogBytes == 0 {
		return st.Events == 0
	}
	// The last line before log_bytes.
	start := max(st.LogBytes-event.MaxLine-1, 0)
	buf := make([]byte, st.LogBytes-start)
	if _, err := fh.ReadAt(buf, start); err != nil || buf[len(buf)-1] != '\n' {
		return false
	}
	line := buf[:len(buf)-1]
	if i := bytes.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:]
	} else if start > 0 {
		return false
	}
	ln, err := event.Parse(line)
	if err != nil {
		return false
	}
	if ln.ID != "" && ln.ID != fmt.Sprintf("%s_%d", st.RunID, st.Events) {
		return false
	}
	return ln.Seq == 0 || ln.Seq == st.LastSeq
}

// Derive makes the run's state from definition.md and run.jsonl alone, up
// to and with the line whose id is upto ("" for every whole line). The
// output shape, which neither file holds, is kept from run.state.json.
func (f Folder) Derive(upto string) (*State, error) {
	fr, err := f.ReadFront()
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %v", f.Rel, DefinitionFile, err)
	}
	st := initial(fr)
	var old State
	if data, err := fsys.ReadFile(f.abs(StateFile)); err == nil && json.Unmarshal(data, &old) == nil {
		st.OutputShape = old.OutputShape
	}
	var m conflictMarkers
	err = f.ReadLines(func(off int64, raw []byte) error {
		ln, err := event.Parse(raw)
		if m.notHeads(raw) || err != nil {
			st.LogBytes += int64(len(raw) + 1)
			return nil
		}
		st.Apply(&ln, len(raw)+1)
		if ln.Event == event.RunSucceeded && len(st.Output) == 0 {
			// An output too large for its line is kept beside it.
			if out, err := fsys.ReadFile(f.abs(path.Join(ArtifactsDir, OutputArtifact))); err == nil && json.Valid(out) {
				st.Output = out
			}
		}
		if upto != "" && ln.ID == upto {
			return errUpto
		}
		return nil
	})
	if err != nil && err != errUpto {
		return nil, err
	}
	return st, nil
}

var errUpto = errors.New("upto")

// conflictMarkers follows git's conflict markers through a run.jsonl that
// a merge stopped in: between "<<<<<<< " and "=======" (or "||||||| ") are
// HEAD's lines; between there and ">>>>>>> " the base's and the other
// side's, which are not the run's until the merge is made. So a run's
// state read during the merge is HEAD's.
type conflictMarkers struct{ other bool }

// notHeads reports whether raw is a marker or a line of the other side.
func (m *conflictMarkers) notHeads(raw []byte) bool {
	switch {
	case bytes.HasPrefix(raw, []byte("<<<<<<< ")), bytes.HasPrefix(raw, []byte(">>>>>>> ")):
		m.other = false
		return true
	case bytes.HasPrefix(raw, []byte("||||||| ")), bytes.Equal(raw, []byte("=======")):
		m.other = true
		return true
	}
	return m.other
}

// StateDisagrees compares run.state.json as it is on disk with the state
// derived from definition.md and the lines of run.jsonl it says it
// reflects (log_bytes; the lines after it are events since the last
// boundary), and says how they differ, or "" when they agree.
func (f Folder) StateDisagrees() (string, error) {
	r := f.readState()
	if r.fileErr != nil {
		return "", r.fileErr
	}
	if r.fileMsg != "" {
		return r.fileMsg, nil
	}
	fr, err := f.ReadFront()
	if err != nil {
		return "", err
	}
	r.begin(fr)
	err = f.ReadLines(func(off int64, raw []byte) error {
		if r.file != nil && off >= r.file.LogBytes {
			return errUpto
		}
		if ln, err := event.Parse(raw); err == nil {
			r.Line(raw, &ln)
		} else {
			r.Line(raw, nil)
		}
		return nil
	})
	if err != nil && err != errUpto {
		return "", err
	}
	return r.StateDisagrees()
}

// A Replay derives a run's state from definition.md's front matter and
// the lines of run.jsonl as a reader goes through them once, and keeps
// the state at the line run.state.json says it reflects: quire check
// compares the file with the events, and judges the run's steps, from
// the one read of the log it makes to check its lines.
type Replay struct {
	State          // derived from the lines given so far
	file    *State // run.state.json as read (nil: none, or no state)
	fileMsg string // how the file is no run state
	fileErr error  // why it could not be read
	at      *State // the derived state at file.LogBytes
	agrees  string // how the file disagrees with definition.md
}

// Replay begins the replay of the run whose front matter is fr, reading
// run.state.json.
func (f Folder) Replay(fr Front) *Replay {
	r := f.readState()
	r.begin(fr)
	return r
}

// readState is a replay's read of run.state.json.
func (f Folder) readState() *Replay {
	r := &Replay{}
	data, err := fsys.ReadFile(f.abs(StateFile))
	if err != nil {
		r.fileErr = err
		return r
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		r.fileMsg = fmt.Sprintf("is not a run state: %v", err)
		return r
	}
	r.file = &st
	return r
}

// begin starts the replay from what definition.md says of the run.
func (r *Replay) begin(fr Front) {
	r.State = *initial(fr)
	if r.file != nil {
		r.agrees = r.file.agrees(fr)
	}
	r.mark()
}

// Line replays the next line of the log: ln is it parsed, or nil when it
// is no event line (its bytes are counted, and nothing else).
func (r *Replay) Line(raw []byte, ln *event.Line) {
	if ln != nil {
		r.Apply(ln, len(raw)+1)
	} else {
		r.LogBytes += int64(len(raw) + 1)
	}
	r.mark()
}

// mark keeps the state derived so far when it ends where run.state.json
// says it does.
func (r *Replay) mark() {
	if r.file != nil && r.at == nil && r.LogBytes == r.file.LogBytes {
		r.at = r.State.clone()
	}
}

// StateDisagrees is Folder.StateDisagrees of the lines replayed: how
// run.state.json differs from what definition.md and the lines up to its
// log_bytes say, or "" when they agree.
func (r *Replay) StateDisagrees() (string, error) {
	switch {
	case r.fileErr != nil:
		return "", r.fileErr
	case r.fileMsg != "":
		return r.fileMsg, nil
	case r.agrees != "":
		return r.agrees, nil
	}
	st, want := r.file, r.at
	if want == nil {
		return fmt.Sprintf("says log_bytes %d, which is not the end of a line of run.jsonl", st.LogBytes), nil
	}
	switch {
	case st.Events != want.Events || st.LastSeq != want.LastSeq:
		return fmt.Sprintf("says %d events up to seq %d; its log_bytes of run.jsonl hold %d up to seq %d", st.Events, st.LastSeq, want.Events, want.LastSeq), nil
	case st.State != want.State || st.Status != want.Status:
		return fmt.Sprintf("says state %s, status %s; the events say %s, %s", st.State, st.Status, want.State, want.Status), nil
	case st.LastEventAt != want.LastEventAt || st.Started != want.Started || st.Ended != want.Ended:
		return fmt.Sprintf("says its events run from %s to %s (ended %q); the events say %s to %s (ended %q)", st.Started, st.LastEventAt, st.Ended, want.Started, want.LastEventAt, want.Ended), nil
	case strings.Join(st.StepsSeen, "\x00") != strings.Join(want.StepsSeen, "\x00") || (st.CurrentStep == nil) != (want.CurrentStep == nil) || (st.CurrentStep != nil && *st.CurrentStep != *want.CurrentStep):
		return "says other steps than the events", nil
	}
	return "", nil
}

func (s *State) clone() *State {
	c := *s
	c.StepsSeen = slices.Clone(s.StepsSeen) // an empty list stays one, not null
	if s.CurrentStep != nil {
		step := *s.CurrentStep
		c.CurrentStep = &step
	}
	return &c
}

// WriteState replaces run.state.json atomically.
func (f Folder) WriteState(st *State) error {
	data, err := marshalState(st)
	if err != nil {
		return err
	}
	cache := cacheOf(f.V)
	abs, err := f.write(StateFile)
	if err != nil {
		cache.drop(f.abs(LogFile))
		return err
	}
	// Derived from run.jsonl, which is durable: a state file the
	// machine's stop left older or empty is caught up or derived again by
	// LoadState (log_bytes), so it is not fsynced.
	if err := vault.WriteDerived(abs, data); err != nil {
		cache.drop(f.abs(LogFile))
		return err
	}
	if fi, err := os.Stat(f.abs(StateFile)); err == nil {
		cache.store(f.abs(LogFile), fi.ModTime().UnixNano()^fi.Size()<<1, st)
	}
	return nil
}

// AppendTo checks the line against the run's state st, as the caller
// loaded it (LoadState) under the same lock, and the run's rules, and
// appends it to run.jsonl; the state is not loaded again (a second
// LoadState was a tenth of an append's CPU). reserve is called with the
// offset and length the line will take, after every check and before the
// write, so the caller can record where the event goes before it exists.
// At a boundary it rewrites run.state.json. It returns the state after
// the line (st, changed).
//
// now is the clock: a previous event dated more than event.MaxAhead after
// it (a line written by hand) does not bind the line's time.
func (f Folder) AppendTo(st *State, l *event.Line, now time.Time, reserve func(off int64, n int) error) (*State, error) {
	if err := st.Check(l); err != nil {
		return nil, err
	}
	if err := checkTime(st, l.Timestamp, now); err != nil {
		return nil, err
	}
	line, err := l.Marshal()
	if err != nil {
		return nil, err
	}
	if len(line) > event.MaxLine {
		return nil, refusal.Invalid("/data", "the event line would take %d bytes; one line holds at most %d", len(line), event.MaxLine)
	}
	logPath, err := f.write(LogFile)
	if err != nil {
		return nil, err
	}
	if event.IsBoundary(l.Event) {
		// run.state.json is written at a boundary alone: a link there is
		// refused before the line is.
		if _, err := f.write(StateFile); err != nil {
			return nil, err
		}
	}
	var before func(int64) error
	if reserve != nil {
		before = func(off int64) error { return reserve(off, len(line)) }
	}
	if _, err := f.V.AppendEventLine(logPath, line, before); err != nil {
		return nil, err
	}
	st.Apply(l, len(line))
	if event.IsBoundary(l.Event) {
		// The line is durable, so the event happened: a state file that
		// cannot be written now is derived again from run.jsonl by the next
		// LoadState (WriteState drops the cached state when it fails).
		_ = f.WriteState(st)
	} else {
		cacheOf(f.V).update(logPath, st)
	}
	return st, nil
}

func checkTime(st *State, ts string, now time.Time) error {
	t, err := event.ParseTime(ts)
	if err != nil {
		return refusal.Invalid("/time", "%v", err)
	}
	if prev, ok := st.PreviousTime(now); ok {
		if t.Before(prev) {
			return refusal.Invalid("/time", "%s is before the run's previous event at %s; time may not go back", ts, st.LastEventAt)
		}
	}
	return nil
}

// AppendThread appends text to thread.md, which is append-only; an archived
// run refuses it.
func (f Folder) AppendThread(text string) error {
	st, err := f.LoadState()
	if err != nil {
		return err
	}
	if st.State == Archived {
		return refusal.At(refusal.Conflict, "/run_id", "rule 5: run %s is archived, and archived runs are read-only: to go on with the work, start a new run", st.RunID)
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	thread, err := f.write(ThreadFile)
	if err != nil {
		return err
	}
	fh, err := fsys.OpenNoFollow(thread, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	defer fh.Close()
	crashpoint.Hit()
	if _, err := fh.Write([]byte(text + "\n")); err != nil {
		return err
	}
	return fh.Sync()
}

// ArtifactPath checks an artifact's name and returns its path relative to
// the vault. A name is one or more segments of letters, digits, '.', '_'
// and '-', none of them "." or ".." or starting with a dot; nothing can
// climb out of artifacts/.
func (f Folder) ArtifactPath(name string) (string, error) {
	if name == "" || len(name) > 255 {
		return "", refusal.Invalid("/name", "an artifact's name is 1 to 255 characters")
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == "" || strings.HasPrefix(seg, ".") {
			return "", refusal.Invalid("/name", "%q would leave artifacts/ or hide a file: no empty segment, no segment starting with '.'", name)
		}
		for _, r := range seg {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
				return "", refusal.Invalid("/name", "%q holds %q; an artifact's name takes letters, digits, '.', '_', '-' and '/'", name, r)
			}
		}
	}
	rel := path.Join(f.Rel, ArtifactsDir, name)
	if _, err := f.V.Join(rel); err != nil {
		return "", refusal.Invalid("/name", "%v", err)
	}
	return rel, nil
}

// PutArtifact writes an artifact atomically.
func (f Folder) PutArtifact(name string, content []byte) (string, error) {
	st, err := f.LoadState()
	if err != nil {
		return "", err
	}
	if st.State == Archived {
		return "", refusal.At(refusal.Conflict, "/run_id", "rule 5: run %s is archived, and archived runs are read-only: to go on with the work, start a new run", st.RunID)
	}
	rel, err := f.ArtifactPath(name)
	if err != nil {
		return "", err
	}
	abs := f.V.Abs(rel)
	crashpoint.Hit()
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return "", err
	}
	if fi, err := os.Lstat(abs); err == nil && !fi.Mode().IsRegular() {
		return "", refusal.Invalid("/name", "%s exists and is not a regular file", name)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	return rel, vault.WriteAtomic(abs, content)
}

// ReadLines reads every whole line of run.jsonl with its offset; a torn last
// line is left out.
func (f Folder) ReadLines(fn func(off int64, raw []byte) error) error {
	data, err := fsys.ReadFile(f.abs(LogFile))
	if err != nil {
		return err
	}
	off := int64(0)
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return nil
		}
		if err := fn(off, data[:i]); err != nil {
			return err
		}
		off += int64(i + 1)
		data = data[i+1:]
	}
	return nil
}

// Input is the input the run was started with, as its run_created line,
// the first of run.jsonl, recorded it; nil when it was started without
// one. It reads that line alone, so a long log costs nothing more.
func (f Folder) Input() (json.RawMessage, error) {
	fh, err := fsys.Open(f.abs(LogFile))
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	first, err := bufio.NewReader(fh).ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	var ln struct {
		Event string `json:"event"`
		Data  struct {
			Input json.RawMessage `json:"input"`
		} `json:"data"`
	}
	if json.Unmarshal(first, &ln) != nil || ln.Event != event.RunCreated {
		return nil, nil // a log a hand edit broke; quire check says so
	}
	return ln.Data.Input, nil
}
