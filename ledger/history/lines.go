package history

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"quire/internal/fsys"
	"quire/runfolder"
	"quire/vault"
	"quire/words/event"
)

// Lines written by hand.
//
// An agent with only files may append a line to run.jsonl in the capsule's
// minimal form (event, timestamp, step, detail), without the id and seq
// quire writes. Such a line gets its place in the playbook's history as a
// recorded one does, and nothing is numbered twice:
//
//   - When quire next writes to the file (record_event, end_run,
//     transition_run on the run; any playbook event for events.jsonl), or
//     reads it (list_playbook_events, get_event), the lines after the
//     file's last numbered line that the history lacks are numbered, in
//     the order of the file, under the vault's lock, before the write or
//     the read.
//   - When the history is rebuilt (quire reindex, or .quire/ gone), see
//     History.rebuild.
//
// Its id is <run_id>_<n>, n its place among the events of run.jsonl (the
// nth line that is an event), the id a recorded line carries; its run,
// subject and version are its run's. In events.jsonl its id is
// <playbook uid>_<n>. Its seq is its place in the history.

// handLine is one whole line of an event file.
type handLine struct {
	off  int64
	n    int // bytes, the newline included
	line event.Line
}

// trailingLines reads, from the end of an event file, the whole lines after
// its last line that carries a seq: the lines written by hand since quire
// last wrote it. A torn last line is not a line; nor is a line that is not
// an event. Most files end with a numbered line, and then it reads only
// their last bytes.
func trailingLines(abs string) ([]handLine, fs.FileInfo, error) {
	fh, err := fsys.Open(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := fi.Size()
	for chunk := int64(2 << 10); ; chunk *= 4 {
		start := max(0, size-chunk)
		buf := make([]byte, size-start)
		if _, err := fh.ReadAt(buf, start); err != nil && err != io.EOF {
			return nil, nil, err
		}
		// Drop a torn last line, then the partial first line of the chunk.
		end := bytes.LastIndexByte(buf, '\n') + 1
		buf = buf[:end]
		base := start
		if start > 0 {
			i := bytes.IndexByte(buf, '\n')
			if i < 0 {
				continue // one line longer than the chunk
			}
			buf, base = buf[i+1:], start+int64(i+1)
		}
		// From the last line back to the last numbered one, then put in
		// the file's order (prepending each was quadratic: minutes for a
		// long run's 30,000 lines).
		var lines []handLine
		numbered := false
		for end := len(buf); end > 0 && !numbered; {
			i := bytes.LastIndexByte(buf[:end-1], '\n') + 1
			if ln, err := event.Parse(buf[i : end-1]); err == nil {
				if numbered = ln.Seq > 0; !numbered {
					lines = append(lines, handLine{off: base + int64(i), n: end - i, line: ln})
				}
			}
			end = i
		}
		if numbered || start == 0 {
			slices.Reverse(lines)
			return lines, fi, nil
		}
	}
}

// seqsOf reads where the history holds lines of file: offset → seq. It
// reads the whole history; callers come here only for a file with lines
// written by hand.
func (h *History) seqsOf(file string) (map[int64]int64, error) {
	out := map[int64]int64{}
	h.mu.Lock()
	no, ok := h.fileNo[file]
	count := h.count
	h.mu.Unlock()
	if !ok || count == 0 {
		return out, nil
	}
	data, err := fsys.ReadFile(h.seqPath())
	if err != nil {
		return nil, err
	}
	for seq := int64(1); seq <= count && seq*recSize <= int64(len(data)); seq++ {
		b := data[(seq-1)*recSize:]
		if fileNo := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]); fileNo == no {
			off := int64(b[8])<<56 | int64(b[9])<<48 | int64(b[10])<<40 | int64(b[11])<<32 | int64(b[12])<<24 | int64(b[13])<<16 | int64(b[14])<<8 | int64(b[15])
			out[off] = seq
		}
	}
	return out, nil
}

// Adopt numbers, in the playbook's history, the lines written by hand at
// the end of file that it lacks, in the order of the file. The caller holds
// the vault's lock. A file as it was when it last ended with numbered
// lines (ends) is not read.
func (s *Store) Adopt(playbook, file string) error {
	abs := s.v.Abs(file)
	if s.ends(abs) {
		return nil
	}
	// A whole last line that lacks only its newline is given it first:
	// it is a line, numbered as the others are.
	if err := vault.GiveNewline(abs); err != nil {
		return err
	}
	lines, fi, err := trailingLines(abs)
	if err != nil || fi == nil {
		return err
	}
	if len(lines) > 0 {
		h, err := s.Of(playbook)
		if err != nil {
			return err
		}
		if err := h.Repair(); err != nil {
			return err
		}
		have, err := h.seqsOf(file)
		if err != nil {
			return err
		}
		var spans []Span
		for _, ln := range lines {
			if _, ok := have[ln.off]; !ok {
				spans = append(spans, Span{file, ln.off, ln.n})
			}
		}
		if len(spans) > 0 {
			if err := h.reserve(spans); err != nil {
				return err
			}
		}
	}
	s.adopted.Store(abs, keptStatOf(fi))
	return nil
}

// AdoptFor is Adopt for a reader, which holds no lock: it calls adopt
// (which takes the lock and calls Adopt) only when the file ends with a
// line written by hand that the history may lack, and only once for a file
// as it is. adopt answers ErrNotNow when the vault takes no write now: the
// file is read as it is, and looked at again by the next read.
func (s *Store) AdoptFor(file string, adopt func() error) error {
	_, err := s.adoptFor(file, adopt)
	return err
}

// ErrNotNow is what AdoptFor's adopt answers when the vault takes no
// write now (HEAD detached, a merge in the middle, read-only here).
var ErrNotNow = errors.New("history: the vault takes no write now")

// adoptFor is AdoptFor, answering whether the file is now known to end
// with lines the history holds (or is gone).
func (s *Store) adoptFor(file string, adopt func() error) (bool, error) {
	abs := s.v.Abs(file)
	if s.ends(abs) {
		return true, nil
	}
	lines, fi, err := trailingLines(abs)
	if err != nil || fi == nil {
		return err == nil, err
	}
	if len(lines) > 0 {
		if err := adopt(); errors.Is(err, ErrNotNow) {
			return false, nil
		} else if err != nil {
			return false, err
		}
	}
	s.adopted.Store(abs, keptStatOf(fi))
	return true, nil
}

// AdoptAllFor is AdoptFor for every event file of a playbook (files),
// calling adopt(file) for those that end with lines written by hand the
// history may lack. A process that has not yet seen a file (a new one: a
// CLI's read, a server's first) would read the end of each, 3 s at
// 100,000 runs; so the playbook's records are read once, and a file whose
// size is where its last recorded line ends is taken as ending with lines
// the history holds, unread. That holds because every writer numbers the
// lines written by hand at a file's end before it appends its own (Adopt),
// so a recorded last line has no line the history lacks before it.
//
// A warm process asks the vault's file system monitor, where .git/config
// names one (as quire check and git status do), which paths changed since
// its last answer, and looks only at those files: 100,000 stats were 0.5 s
// of every whole-history read at 100,000 runs. The monitor is trusted as
// git trusts it. Without one, or when it knows nothing, every file is
// stated; so is a playbook of fewer than MonitorFrom files, for which
// the stats cost little (a whole read at 1,000 runs, stats and all, some
// 12 ms) and a hook run more (some 50 ms; git's Watchman hook is asked
// over Watchman's socket instead, 1-2 ms, vault.AskMonitor).
//
// gitToken answers the monitor's token git keeps in its index
// (vault.IndexMonitorToken, under the lock).
func (s *Store) AdoptAllFor(playbook string, files []string, gitToken func() string, adopt func(file string) error) error {
	var a vault.MonitorAnswer
	asked := false
	if len(files) >= MonitorFrom && s.v.Monitored() {
		s.mu.Lock()
		since, warm := s.monitored[playbook]
		s.mu.Unlock()
		if !warm {
			// Asked with no token, Watchman's hook lists every path
			// of the work tree: the first question is asked with
			// git's own token, its paths unused (every file is
			// looked at), for a token of now.
			since = gitToken()
		}
		if since != "" {
			a, asked = s.v.AskMonitor(since)
		}
		if asked && warm && !a.All {
			files = changedOf(files, a.Paths)
		}
	}
	var recorded map[string]int64 // file → where its last recorded line ends
	for _, file := range files {
		abs := s.v.Abs(file)
		if s.ends(abs) {
			continue
		}
		if recorded == nil {
			recorded = s.lastLineEnds(playbook)
		}
		if end, ok := recorded[file]; ok {
			if fi, err := os.Stat(abs); err == nil && fi.Mode().IsRegular() && fi.Size() == end {
				s.adopted.Store(abs, keptStatOf(fi))
				continue
			}
		}
		done, err := s.adoptFor(file, func() error { return adopt(file) })
		if err != nil {
			return err
		}
		asked = asked && done
	}
	if asked {
		// Every file was as adopted says when the monitor gave this
		// token: what changes after is in its next answer.
		s.mu.Lock()
		s.monitored[playbook] = a.Token
		s.mu.Unlock()
	}
	return nil
}

// MonitorFrom is how many event files a playbook has before a whole
// history's read asks the file system monitor which changed (AdoptAllFor),
// rather than a stat of each. Tests lower it.
var MonitorFrom = 10_000

// changedOf answers those of files that a monitor's paths name: the file
// itself, or a folder it is in (a path ending in "/").
func changedOf(files, paths []string) []string {
	named := make(map[string]bool, len(paths))
	folders := false
	for _, p := range paths {
		named[p] = true
		folders = folders || strings.HasSuffix(p, "/")
	}
	var out []string
	for _, f := range files {
		in := named[f]
		for i := 0; folders && !in && i < len(f); i++ {
			in = f[i] == '/' && named[f[:i+1]]
		}
		if in {
			out = append(out, f)
		}
	}
	return out
}

// lastLineEnds answers where the last line the playbook's history records
// in each file ends, as .quire/history holds it now; none when it cannot
// be read whole.
func (s *Store) lastLineEnds(playbook string) map[string]int64 {
	h := s.newHistory(playbook)
	names, err := fsys.ReadFile(h.filesPath())
	if err != nil {
		return map[string]int64{}
	}
	recs, err := fsys.ReadFile(h.seqPath())
	if err != nil {
		return map[string]int64{}
	}
	files := listedFiles(names)
	end, ok := recordedEnds(recs, len(files))
	if !ok {
		return map[string]int64{}
	}
	out := make(map[string]int64, len(files))
	for i, f := range files {
		if end[i] > 0 {
			out[f] = max(out[f], end[i])
		}
	}
	return out
}

// Appended tells the store that its writer appended a numbered line of n
// bytes at off in file. A file that ended with numbered lines at off ends
// with one at off+n, and the next Adopt need not read it; a file that
// grew otherwise meanwhile (a line appended by hand, by another process)
// is read. The caller holds the vault's lock.
func (s *Store) Appended(file string, off int64, n int) {
	abs := s.v.Abs(file)
	m, ok := s.adopted.Load(abs)
	if !ok || m.(keptStat).size != off {
		return
	}
	if fi, err := os.Stat(abs); err == nil && fi.Size() == off+int64(n) {
		s.adopted.Store(abs, keptStatOf(fi))
	} else {
		s.adopted.Delete(abs)
	}
}

// ends says whether the file at abs is as it was when it was last found
// to end with numbered lines (adopted): of that stat (keptStat). A line
// appended since changes it.
func (s *Store) ends(abs string) bool {
	m, ok := s.adopted.Load(abs)
	if !ok {
		return false
	}
	fi, err := os.Stat(abs)
	return err == nil && keptStatOf(fi) == m.(keptStat)
}

// lineFiller gives a line written by hand what a recorded one carries: the
// id <run_id>_<n> by its place among its run's events, and its run's id,
// subject and version; in a playbook's events.jsonl, <playbook uid>_<n>.
// It reads each file once.
type lineFiller struct {
	v     *vault.Vault
	src   Source
	files map[string]*filledFile
}

type filledFile struct {
	owner   string // the run's id, or the playbook's uid
	run     bool
	subject string
	version int
	events  map[int64]int // offset of each event line → its place, from 1
}

func newLineFiller(v *vault.Vault, src Source) *lineFiller {
	return &lineFiller{v: v, src: src, files: map[string]*filledFile{}}
}

// eachLine calls fn with every whole line of a file and its offset.
func eachLine(abs string, fn func(off int64, raw []byte) error) error {
	data, err := fsys.ReadFile(abs)
	if err != nil {
		return err
	}
	return eachLineOf(data, fn)
}

// eachLineOf calls fn with every whole line of data and its offset.
func eachLineOf(data []byte, fn func(off int64, raw []byte) error) error {
	for off := 0; ; {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			return nil
		}
		if err := fn(int64(off), data[off:off+i]); err != nil {
			return err
		}
		off += i + 1
	}
}

// fill completes ln, the line at off in file, where it lacks an id.
func (lf *lineFiller) fill(file string, off int64, ln *event.Line) error {
	if ln.ID != "" {
		return nil
	}
	f, ok := lf.files[file]
	if !ok {
		owner, run := lf.src.Owner(file)
		if owner == "" {
			return nil
		}
		var subject string
		var version int
		if run {
			rf := runfolder.Folder{V: lf.v, Rel: path.Dir(file)}
			if st, err := rf.LoadState(); err == nil && st.Type != "" {
				subject, version = st.Type+"/"+st.Name, st.Version
			}
		}
		data, err := fsys.ReadFile(lf.v.Abs(file))
		if err != nil {
			return err
		}
		f = newFilledFile(owner, run, subject, version, data)
		lf.files[file] = f
	}
	return f.fill(file, off, ln)
}

// newFilledFile numbers the event lines of a file's data, whose lines
// written by hand are owner's.
func newFilledFile(owner string, run bool, subject string, version int, data []byte) *filledFile {
	f := &filledFile{owner: owner, run: run, subject: subject, version: version, events: map[int64]int{}}
	n := 0
	eachLineOf(data, func(off int64, raw []byte) error {
		if _, err := event.Parse(raw); err == nil {
			n++
			f.events[off] = n
		}
		return nil
	})
	return f
}

// fill completes ln, the line at off in the file, where it lacks an id.
func (f *filledFile) fill(file string, off int64, ln *event.Line) error {
	n, ok := f.events[off]
	if !ok {
		return fmt.Errorf("%s: no event line at byte %d", file, off)
	}
	ln.ID = fmt.Sprintf("%s_%d", f.owner, n)
	if !f.run {
		return nil
	}
	if ln.Run == "" {
		ln.Run = f.owner
	}
	if ln.Subject == "" {
		ln.Subject = f.subject
	}
	if ln.Version == 0 {
		ln.Version = f.version
	}
	return nil
}

// EachEvent calls fn with every event line of an event file of the
// playbook, in the order of the file, as reads present it: a line written
// by hand with its seq in the history (0 while it has none) and, once it
// has one, the id, run, subject and version a recorded line carries. It
// answers what fn answers first that is not nil, or the error of reading
// the file.
func (s *Store) EachEvent(playbook, file string, fn func(ln *event.Line) error) error {
	var filler *lineFiller
	var seqs map[int64]int64
	return eachLine(s.v.Abs(file), func(off int64, raw []byte) error {
		ln, err := event.Parse(raw)
		if err != nil {
			return nil // not an event
		}
		if ln.Seq == 0 || ln.ID == "" {
			// Written by hand: its seq is its place in the history.
			if seqs == nil {
				h, err := s.Of(playbook)
				if err != nil {
					return err
				}
				if seqs, err = h.seqsOf(file); err != nil {
					return err
				}
			}
			if ln.Seq = seqs[off]; ln.Seq != 0 {
				if filler == nil {
					filler = newLineFiller(s.v, s.src)
				}
				if err := filler.fill(file, off, &ln); err != nil {
					return err
				}
			}
		}
		return fn(&ln)
	})
}

// NthEvent reads the nth event line of an event file of the playbook (n
// from 1), as EachEvent presents it; nil when the file has no such event.
// Only that line is completed.
func (s *Store) NthEvent(playbook, file string, n int) (*event.Line, error) {
	var found *event.Line
	i := 0
	err := eachLine(s.v.Abs(file), func(off int64, raw []byte) error {
		ln, err := event.Parse(raw)
		if err != nil {
			return nil // not an event, and not counted
		}
		if i++; i != n {
			return nil
		}
		if ln.Seq == 0 || ln.ID == "" {
			// Written by hand: its seq is its place in the history.
			h, err := s.Of(playbook)
			if err != nil {
				return err
			}
			seqs, err := h.seqsOf(file)
			if err != nil {
				return err
			}
			ln.Seq = seqs[off]
			if err := newLineFiller(s.v, s.src).fill(file, off, &ln); err != nil {
				return err
			}
		}
		found = &ln
		return errFound
	})
	if errors.Is(err, fs.ErrNotExist) || err == errFound {
		err = nil
	}
	return found, err
}

var errFound = errors.New("found")
