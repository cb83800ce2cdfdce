package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"quire/runfolder"
	"quire/vault"
	"quire/words/address"
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
//     rebuildHistory.
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
func trailingLines(abs string) ([]handLine, error) {
	fh, err := os.Open(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	for chunk := int64(2 << 10); ; chunk *= 4 {
		start := max(0, size-chunk)
		buf := make([]byte, size-start)
		if _, err := fh.ReadAt(buf, start); err != nil && err != io.EOF {
			return nil, err
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
		// From the last line back to the last numbered one.
		var lines []handLine
		for end := len(buf); end > 0; {
			i := bytes.LastIndexByte(buf[:end-1], '\n') + 1
			if ln, err := event.Parse(buf[i : end-1]); err == nil {
				if ln.Seq > 0 {
					return lines, nil
				}
				lines = append([]handLine{{off: base + int64(i), n: end - i, line: ln}}, lines...)
			}
			end = i
		}
		if start == 0 {
			return lines, nil
		}
	}
}

// recordsOf reads where the history holds lines of file: offset → seq.
// It reads the whole history; callers come here only for a file with lines
// written by hand.
func (h *history) recordsOf(file string) (map[int64]int64, error) {
	out := map[int64]int64{}
	no, ok := h.fileNo[file]
	if !ok || h.count == 0 {
		return out, nil
	}
	data, err := os.ReadFile(h.seqPath())
	if err != nil {
		return nil, err
	}
	for seq := int64(1); seq <= h.count && seq*recSize <= int64(len(data)); seq++ {
		b := data[(seq-1)*recSize:]
		if fileNo := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]); fileNo == no {
			off := int64(b[8])<<56 | int64(b[9])<<48 | int64(b[10])<<40 | int64(b[11])<<32 | int64(b[12])<<24 | int64(b[13])<<16 | int64(b[14])<<8 | int64(b[15])
			out[off] = seq
		}
	}
	return out, nil
}

// seqsOf reads where the playbook's history holds lines of file: offset →
// seq.
func (l *Ledger) seqsOf(playbook, file string) (map[int64]int64, error) {
	h, err := l.historyOf(playbook)
	if err != nil {
		return nil, err
	}
	return h.recordsOf(file)
}

// adoptLines numbers, in the playbook's history, the lines written by hand
// at the end of file that it lacks. The caller holds the lock.
func (t *tx) adoptLines(playbook, file string) error {
	l := t.l
	lines, err := trailingLines(l.v.Abs(file))
	if err != nil || len(lines) == 0 {
		return err
	}
	h, err := l.historyOf(playbook)
	if err != nil {
		return err
	}
	if err := h.repair(l.v); err != nil {
		return err
	}
	have, err := h.recordsOf(file)
	if err != nil {
		return err
	}
	for _, ln := range lines {
		if _, ok := have[ln.off]; ok {
			continue
		}
		if _, err := h.reserve(file, ln.off, ln.n); err != nil {
			return err
		}
	}
	return nil
}

// adoptLinesOf is adoptLines for a reader: it takes the lock only when the
// file ends with a line written by hand that the history may lack, and
// only once for a file of the same size.
func (l *Ledger) adoptLinesOf(playbook, file string) error {
	abs := l.v.Abs(file)
	fi, err := os.Stat(abs)
	if err != nil {
		return nil
	}
	if size, ok := l.adopted.Load(abs); ok && size.(int64) == fi.Size() {
		return nil
	}
	lines, err := trailingLines(abs)
	if err != nil {
		return err
	}
	if len(lines) > 0 {
		if err := l.write(writeArgs{}, func(t *tx) error { return t.adoptLines(playbook, file) }); err != nil {
			return err
		}
	}
	l.adopted.Store(abs, fi.Size())
	return nil
}

// adoptAllOf is adoptLinesOf for every event file of a playbook: a stat of
// each, and a read of its last bytes when it changed since.
func (l *Ledger) adoptAllOf(playbook string) error {
	if err := l.adoptLinesOf(playbook, path.Join(playbookDir(playbook), "events.jsonl")); err != nil {
		return err
	}
	runs, err := l.v.Find(func(e *vault.Entry) bool { return e.Type == "playbook-run" && e.Playbook == playbook })
	if err != nil {
		return err
	}
	for _, r := range runs {
		if err := l.adoptLinesOf(playbook, path.Join(r.Path, runfolder.LogFile)); err != nil {
			return err
		}
	}
	return nil
}

// lineFiller gives a line written by hand what a recorded one carries: the
// id <run_id>_<n> by its place among its run's events, and its run's id,
// subject and version; in a playbook's events.jsonl, <playbook uid>_<n>.
// It reads each file once.
type lineFiller struct {
	v     *vault.Vault
	files map[string]*filledFile
}

type filledFile struct {
	owner   string // the run's id, or the playbook's uid
	run     bool
	subject string
	version int
	events  map[int64]int // offset of each event line → its place, from 1
}

func newLineFiller(v *vault.Vault) *lineFiller {
	return &lineFiller{v: v, files: map[string]*filledFile{}}
}

// ownerOf is the uid an event file's derived ids begin with: the run's id
// of a run.jsonl (by its folder's name <name>-<run_id>-<YYYY-MM-DD>), the
// playbook's uid of its events.jsonl; "" for any other file.
func ownerOf(v *vault.Vault, file string) (uid string, run bool) {
	dir, base := path.Split(file)
	dir = strings.TrimSuffix(dir, "/")
	switch base {
	case runfolder.LogFile:
		folder := path.Base(dir)
		if len(folder) < 36+11 {
			return "", false
		}
		id := folder[len(folder)-11-36 : len(folder)-11]
		if !address.ValidLowerUUID(id) {
			return "", false
		}
		return id, true
	case "events.jsonl":
		p := path.Base(dir)
		if dir != playbookDir(p) {
			return "", false
		}
		es, err := v.Find(func(e *vault.Entry) bool { return e.Type == "playbook" && e.Playbook == p })
		if err != nil || len(es) == 0 {
			return "", false
		}
		return es[0].UID, false
	}
	return "", false
}

// eachLine calls fn with every whole line of a file and its offset.
func eachLine(abs string, fn func(off int64, raw []byte) error) error {
	data, err := os.ReadFile(abs)
	if err != nil {
		return err
	}
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
		owner, run := ownerOf(lf.v, file)
		if owner == "" {
			return nil
		}
		f = &filledFile{owner: owner, run: run, events: map[int64]int{}}
		if run {
			rf := runfolder.Folder{V: lf.v, Rel: path.Dir(file)}
			if st, err := rf.LoadState(); err == nil && st.Type != "" {
				f.subject, f.version = st.Type+"/"+st.Name, st.Version
			}
		}
		n := 0
		err := eachLine(lf.v.Abs(file), func(off int64, raw []byte) error {
			if _, err := event.Parse(raw); err == nil {
				n++
				f.events[off] = n
			}
			return nil
		})
		if err != nil {
			return err
		}
		lf.files[file] = f
	}
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

// nthEvent reads the nth event of an event file, as reads present it: a
// line written by hand with its seq and derived id. It answers nil when
// the file has no such event.
func (l *Ledger) nthEvent(playbook, file string, want int) (*Event, error) {
	if err := l.adoptLinesOf(playbook, file); err != nil {
		return nil, err
	}
	var found *Event
	i := 0
	err := eachLine(l.v.Abs(file), func(off int64, raw []byte) error {
		ln, err := event.Parse(raw)
		if err != nil {
			return nil // not an event, and not counted
		}
		if i++; i != want {
			return nil
		}
		if ln.Seq == 0 || ln.ID == "" {
			// Written by hand: its seq is its place in the history.
			seqs, err := l.seqsOf(playbook, file)
			if err != nil {
				return err
			}
			ln.Seq = seqs[off]
			if err := newLineFiller(l.v).fill(file, off, &ln); err != nil {
				return err
			}
		}
		ev := eventOf(playbook, &ln)
		found = &ev
		return errStop
	})
	if errors.Is(err, fs.ErrNotExist) || err == errStop {
		err = nil
	}
	return found, err
}
