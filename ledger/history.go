package ledger

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"quire/internal/crashpoint"
	"quire/ledger/event"
	"quire/runfolder"
	"quire/vault"
)

// history is where each event of one playbook's history lies: derived
// state under .quire/history/, rebuilt from the files when missing.
//
//	<playbook>.files  the files that hold its events, one path a line
//	<playbook>.seq    one 16-byte record per event, the record of seq n at
//	                  (n-1)*16: file number (uint32), line length (uint32),
//	                  offset (uint64), big-endian
//
// A record is written before its line (a reservation). If the process dies
// between the two, the next writer finds a record whose line is not whole
// and drops it, cutting the file back to the record's offset. So seq stays
// without gaps or repeats and no event is ever read twice.
type history struct {
	playbook string
	dir      string
	files    []string
	fileNo   map[string]uint32
	count    int64 // records
}

const recSize = 16

type record struct {
	file string
	off  int64
	n    int
}

func (l *Ledger) historyOf(playbook string) (*history, error) {
	l.histMu.Lock()
	defer l.histMu.Unlock()
	if h, ok := l.hist[playbook]; ok {
		return h, h.refresh()
	}
	h := &history{playbook: playbook, dir: l.V.Abs(path.Join(vault.QuireDir, "history"))}
	if err := h.refresh(); err != nil {
		return nil, err
	}
	if h.count == 0 && !h.exists() {
		if err := l.rebuildHistory(h); err != nil {
			return nil, err
		}
	}
	l.hist[playbook] = h
	return h, nil
}

func (h *history) seqPath() string   { return filepath.Join(h.dir, h.playbook+".seq") }
func (h *history) filesPath() string { return filepath.Join(h.dir, h.playbook+".files") }
func (h *history) exists() bool {
	_, err := os.Stat(h.seqPath())
	return err == nil
}

// refresh reads what other processes added since.
func (h *history) refresh() error {
	fi, err := os.Stat(h.seqPath())
	if errors.Is(err, fs.ErrNotExist) {
		h.count, h.files, h.fileNo = 0, nil, map[string]uint32{}
		return nil
	}
	if err != nil {
		return err
	}
	h.count = fi.Size() / recSize
	data, err := os.ReadFile(h.filesPath())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	lines := strings.Split(string(data), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	} else if n > 0 {
		lines = lines[:n-1] // torn
	}
	if len(lines) != len(h.files) {
		h.files = lines
		h.fileNo = make(map[string]uint32, len(lines))
		for i, f := range lines {
			h.fileNo[f] = uint32(i)
		}
	}
	return nil
}

func (h *history) read(seq int64) (record, error) {
	f, err := os.Open(h.seqPath())
	if err != nil {
		return record{}, err
	}
	defer f.Close()
	return h.readFrom(f, seq)
}

func (h *history) readFrom(f io.ReaderAt, seq int64) (record, error) {
	var b [recSize]byte
	if _, err := f.ReadAt(b[:], (seq-1)*recSize); err != nil {
		return record{}, err
	}
	no := binary.BigEndian.Uint32(b[0:])
	if int(no) >= len(h.files) {
		return record{}, fmt.Errorf("history of %s: record %d names file %d of %d", h.playbook, seq, no, len(h.files))
	}
	return record{file: h.files[no], n: int(binary.BigEndian.Uint32(b[4:])), off: int64(binary.BigEndian.Uint64(b[8:]))}, nil
}

// repair drops a last record whose line was never written whole. The
// caller holds the vault's lock.
func (h *history) repair(v *vault.Vault) error {
	if fi, err := os.Stat(h.seqPath()); err == nil && fi.Size()%recSize != 0 {
		crashpoint.Hit()
		if err := os.Truncate(h.seqPath(), fi.Size()-fi.Size()%recSize); err != nil {
			return err
		}
	}
	if err := h.refresh(); err != nil || h.count == 0 {
		return err
	}
	r, err := h.read(h.count)
	if err != nil {
		return err
	}
	abs := v.Abs(r.file)
	ok, err := lineAt(abs, r.off, r.n)
	if err != nil {
		return err
	}
	if ok {
		return nil
	}
	// The reservation's line is missing or torn: cut both back.
	if fi, err := os.Stat(abs); err == nil && fi.Size() > r.off {
		crashpoint.Hit()
		if err := os.Truncate(abs, r.off); err != nil {
			return err
		}
	}
	h.count--
	crashpoint.Hit()
	return os.Truncate(h.seqPath(), h.count*recSize)
}

func lineAt(abs string, off int64, n int) (bool, error) {
	f, err := os.Open(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off+int64(n)-1); err != nil {
		return false, nil
	}
	return b[0] == '\n', nil
}

// reserve appends the record of the next seq. The caller holds the lock.
func (h *history) reserve(file string, off int64, n int) (int64, error) {
	if err := os.MkdirAll(h.dir, 0o755); err != nil {
		return 0, err
	}
	no, ok := h.fileNo[file]
	if !ok {
		no = uint32(len(h.files))
		if _, err := vault.AppendLine(h.filesPath(), []byte(file+"\n")); err != nil {
			return 0, err
		}
		h.files = append(h.files, file)
		h.fileNo[file] = no
	}
	var b [recSize]byte
	binary.BigEndian.PutUint32(b[0:], no)
	binary.BigEndian.PutUint32(b[4:], uint32(n))
	binary.BigEndian.PutUint64(b[8:], uint64(off))
	f, err := os.OpenFile(h.seqPath(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	crashpoint.Hit()
	if _, err := f.Write(b[:]); err != nil {
		return 0, err
	}
	h.count++
	return h.count, nil
}

// Record is one event of a playbook's history, as read back.
type Record struct {
	Seq  int64
	File string
	Line event.Line
	Raw  []byte
}

// page reads up to limit records after seq after, in history order.
func (h *history) page(v *vault.Vault, after int64, limit int) ([]Record, error) {
	if after >= h.count {
		return nil, nil
	}
	f, err := os.Open(h.seqPath())
	if err != nil {
		return nil, err
	}
	defer f.Close()
	end := min(h.count, after+int64(limit))
	out := make([]Record, 0, end-after)
	open := map[string]*os.File{}
	defer func() {
		for _, f := range open {
			f.Close()
		}
	}()
	for seq := after + 1; seq <= end; seq++ {
		r, err := h.readFrom(f, seq)
		if err != nil {
			return nil, err
		}
		ef, ok := open[r.file]
		if !ok {
			if ef, err = os.Open(v.Abs(r.file)); err != nil {
				return nil, err
			}
			open[r.file] = ef
		}
		if r.n <= 0 {
			return nil, fmt.Errorf("history of %s: record %d is empty; quire reindex rebuilds it", h.playbook, seq)
		}
		raw := make([]byte, r.n)
		if _, err := ef.ReadAt(raw, r.off); err != nil || raw[len(raw)-1] != '\n' {
			if seq == h.count && (err == nil || errors.Is(err, io.EOF)) {
				// The last record is reserved and its line is being written
				// under the lock right now: the page ends before it.
				break
			}
			if err == nil {
				err = errors.New("the line is not whole")
			}
			return nil, fmt.Errorf("history of %s: event %d in %s: %w", h.playbook, seq, r.file, err)
		}
		raw = raw[:len(raw)-1]
		line, err := event.Parse(raw)
		if err != nil {
			return nil, fmt.Errorf("%s at byte %d: %v", r.file, r.off, err)
		}
		if line.Seq == 0 {
			line.Seq = seq
		}
		out = append(out, Record{Seq: seq, File: r.file, Line: line, Raw: raw})
	}
	return out, nil
}

// rebuildHistory makes the history's files anew from the event lines of
// the playbook's runs and its events.jsonl. Lines carrying a seq take their
// place by it; lines without one (written by hand, in the capsule's minimal
// form) take the place after the line before them in their file.
func (l *Ledger) rebuildHistory(h *history) error {
	type item struct {
		seq   int64
		after int64 // for an unnumbered line: the seq of the line before it
		pos   int   // its order among unnumbered lines after the same seq
		rec   record
	}
	var items []item
	files := []string{path.Join(playbookDir(h.playbook), "events.jsonl")}
	runs, err := l.V.Find(func(e *vault.Entry) bool { return e.Type == "playbook-run" && e.Playbook == h.playbook })
	if err != nil {
		return err
	}
	for _, r := range runs {
		files = append(files, path.Join(r.Path, runfolder.LogFile))
	}
	for _, file := range files {
		fh, err := os.Open(l.V.Abs(file))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		br := bufio.NewReaderSize(fh, 64<<10)
		off := int64(0)
		prev, pos := int64(0), 0
		for {
			raw, err := br.ReadBytes('\n')
			if err != nil {
				break // EOF, or a torn last line, which is not an event
			}
			ln, perr := event.Parse(raw[:len(raw)-1])
			if perr == nil {
				if ln.Seq > 0 {
					items = append(items, item{seq: ln.Seq, rec: record{file: file, off: off, n: len(raw)}})
					prev, pos = ln.Seq, 0
				} else {
					pos++
					items = append(items, item{after: prev, pos: pos, rec: record{file: file, off: off, n: len(raw)}})
				}
			}
			off += int64(len(raw))
		}
		fh.Close()
	}
	key := func(it item) (int64, int) {
		if it.seq > 0 {
			return it.seq, 0
		}
		return it.after, it.pos
	}
	sort.SliceStable(items, func(i, j int) bool {
		a1, a2 := key(items[i])
		b1, b2 := key(items[j])
		if a1 != b1 {
			return a1 < b1
		}
		return a2 < b2
	})
	if err := os.MkdirAll(h.dir, 0o755); err != nil {
		return err
	}
	os.Remove(h.seqPath())
	os.Remove(h.filesPath())
	h.count, h.files, h.fileNo = 0, nil, map[string]uint32{}
	for _, it := range items {
		if _, err := h.reserve(it.rec.file, it.rec.off, it.rec.n); err != nil {
			return err
		}
	}
	return nil
}
