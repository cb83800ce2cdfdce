package history

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"quire/internal/crashpoint"
	"quire/internal/fsys"
	"quire/vault"
	"quire/words/event"
)

// History is where each event of one playbook's history lies: derived
// state under .quire/history/, rebuilt from the files when missing.
//
//	<playbook>.files  the files that hold its events, one path a line
//	                  (after a rebuild, first a line "# rebuilt <nonce>")
//	<playbook>.seq    one 16-byte record per event, the record of seq n at
//	                  (n-1)*16: file number (uint32), line length (uint32),
//	                  offset (uint64), big-endian
//
// A record is written before its line (a reservation). If the process dies
// between the two, the next writer finds a record whose line is not whole
// and drops it, cutting the file back to the record's offset. So seq stays
// without gaps or repeats and no event is ever read twice.
//
// One history is shared by the process's writers (which hold the vault's
// lock) and its readers (the page keepers, which do not): mu guards files,
// fileNo and count, and readers work from a copy taken under it. Its
// writing methods (Reserve, Repair) are for the caller that holds the
// vault's lock: package ledger's write transaction.
type History struct {
	playbook string
	dir      string
	v        *vault.Vault
	src      Source

	mu     sync.Mutex
	files  []string
	fileNo map[string]uint32
	count  int64      // records
	grown  fsys.Grown // what was read of the list of files

	chainMu sync.Mutex // held while the chain file is extended (chain.go)
}

const recSize = 16

type record struct {
	file string
	off  int64
	n    int
}

// filesHead begins the first line of a list of files made by a rebuild,
// which names no file.
const filesHead = "# rebuilt "

// listedFiles answers the files a list of files names, line by line,
// passing its head line over.
func listedFiles(data []byte) []string {
	var out []string
	for rest := data; len(rest) > 0; {
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			nl = len(rest)
		}
		if name := string(rest[:nl]); !strings.HasPrefix(name, filesHead) {
			out = append(out, name)
		}
		rest = rest[min(nl+1, len(rest)):]
	}
	return out
}

func (h *History) seqPath() string   { return filepath.Join(h.dir, h.playbook+".seq") }
func (h *History) filesPath() string { return filepath.Join(h.dir, h.playbook+".files") }
func (h *History) exists() bool {
	_, err := os.Stat(h.seqPath())
	return err == nil
}

// Len is the number of records, as last refreshed.
func (h *History) Len() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.count
}

// refresh reads what other processes added since.
func (h *History) refresh() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.refreshLocked()
}

func (h *History) refreshLocked() error {
	fi, err := os.Stat(h.seqPath())
	if errors.Is(err, fs.ErrNotExist) {
		h.count, h.files, h.fileNo = 0, nil, map[string]uint32{}
		h.grown.Forget()
		return nil
	}
	if err != nil {
		return err
	}
	h.count = fi.Size() / recSize
	return h.refreshFilesLocked()
}

// refreshFilesLocked reads what was added to the list of files. The caller
// holds h.mu.
func (h *History) refreshFilesLocked() error {
	// The list of files only grows, but another process rebuilds it (a
	// reindex, a repair after git took lines back): fsys.Grown takes only
	// what was added, or the whole list when it was made anew.
	f, err := fsys.Open(h.filesPath())
	if errors.Is(err, fs.ErrNotExist) {
		h.files, h.fileNo = nil, map[string]uint32{}
		h.grown.Forget()
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	from, data, err := h.grown.Next(f)
	if err != nil {
		return err
	}
	if from == 0 {
		h.files, h.fileNo = nil, map[string]uint32{}
	}
	end := bytes.LastIndexByte(data, '\n') + 1 // a torn last line is not a file yet
	for _, name := range listedFiles(data[:end]) {
		h.fileNo[name] = uint32(len(h.files))
		h.files = append(h.files, name)
	}
	h.grown.Took(from, data, end)
	return nil
}

// read reads the record of seq. The caller holds h.mu.
func (h *History) read(seq int64) (record, error) {
	f, err := fsys.Open(h.seqPath())
	if err != nil {
		return record{}, err
	}
	defer f.Close()
	return h.readFrom(f, h.files, seq)
}

// readFrom reads the record of seq from f, naming its file from files (h's
// files, or a copy of them taken under h.mu).
func (h *History) readFrom(f io.ReaderAt, files []string, seq int64) (record, error) {
	var b [recSize]byte
	if _, err := f.ReadAt(b[:], (seq-1)*recSize); err != nil {
		return record{}, err
	}
	no := binary.BigEndian.Uint32(b[0:])
	if int(no) >= len(files) {
		return record{}, fmt.Errorf("history of %s: record %d names file %d of %d", h.playbook, seq, no, len(files))
	}
	return record{file: files[no], n: int(binary.BigEndian.Uint32(b[4:])), off: int64(binary.BigEndian.Uint64(b[8:]))}, nil
}

// Repair drops a last record whose line was never written whole, cutting
// the torn line off its file (kept in the quarantine). The caller holds the
// vault's lock.
func (h *History) Repair() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if fi, err := os.Stat(h.seqPath()); err == nil && fi.Size()%recSize != 0 {
		crashpoint.Hit()
		if err := os.Truncate(h.seqPath(), fi.Size()-fi.Size()%recSize); err != nil {
			return err
		}
	}
	if err := h.refreshLocked(); err != nil || h.count == 0 {
		return err
	}
	r, err := h.read(h.count)
	if err != nil {
		return err
	}
	abs, err := h.v.WritePath(r.file) // never cut a file through a link
	if err != nil {
		return err
	}
	ok, err := lineAt(abs, r.off, r.n)
	if err != nil {
		return err
	}
	if ok {
		return nil
	}
	// The reservation's line is missing or torn: cut both back, keeping
	// what is cut in the quarantine.
	if fi, err := os.Stat(abs); err == nil && fi.Size() > r.off {
		crashpoint.Hit()
		if err := vault.CutTail(abs, r.off); err != nil {
			return err
		}
	}
	h.count--
	crashpoint.Hit()
	if err := os.Truncate(h.seqPath(), h.count*recSize); err != nil {
		return err
	}
	return h.cutChain(h.count)
}

// Verify says whether every record points at a whole line: nil, or the
// first record that does not, for quire check.
func (h *History) Verify() error {
	_, err := h.VerifyFrom(Mark{}, nil)
	return err
}

// Mark is what a verification proved of a history: its first Records
// records, read with its list of files' first FilesSize bytes, whose
// SHA-256 (with both lengths) is Sum.
type Mark struct {
	Records, FilesSize int64
	Sum                [32]byte
}

// VerifyFrom is Verify reading only the lines that since did not prove:
// a record it proved (the history's first records and list of files are
// the ones it read, by their sum) whose file is held (unchanged since,
// as quire check's stamps say) is not read again. It answers the mark of
// the records verified. A history rebuilt or edited since has another sum,
// and is read whole (quire check at 100,000 runs: 200,000 files opened,
// 0.9 s, after one boundary).
func (h *History) VerifyFrom(since Mark, held func(file string) bool) (Mark, error) {
	h.mu.Lock()
	count, files := h.count, h.files
	h.mu.Unlock()
	recs, err := fsys.ReadFile(h.seqPath())
	if err != nil {
		if count == 0 {
			return Mark{}, nil
		}
		return Mark{}, fmt.Errorf("record 1 cannot be read: %v", err)
	}
	list, _ := fsys.ReadFile(h.filesPath())
	markOf := func(records, size int64) Mark {
		m := Mark{Records: records, FilesSize: size}
		if records*recSize > int64(len(recs)) || size > int64(len(list)) {
			return Mark{}
		}
		sum := sha256.New()
		var n [16]byte
		binary.BigEndian.PutUint64(n[:8], uint64(records))
		binary.BigEndian.PutUint64(n[8:], uint64(size))
		sum.Write(n[:])
		sum.Write(recs[:records*recSize])
		sum.Write(list[:size])
		sum.Sum(m.Sum[:0])
		return m
	}
	proved := int64(0)
	if held != nil && since.Records > 0 && markOf(since.Records, since.FilesSize) == since {
		proved = since.Records
	}
	r := bytes.NewReader(recs)
	var ends lineEnds
	defer ends.close()
	for seq := int64(1); seq <= count; seq++ {
		rec, err := h.readFrom(r, files, seq)
		if err != nil {
			return Mark{}, fmt.Errorf("record %d cannot be read: %v", seq, err)
		}
		if seq <= proved && held(rec.file) {
			continue
		}
		if ok, _ := ends.at(h.v.Abs(rec.file), rec.off, rec.n); !ok {
			return Mark{}, fmt.Errorf("record %d points at %s byte %d, where no whole line is", seq, rec.file, rec.off)
		}
	}
	return markOf(count, int64(len(list))), nil
}

func lineAt(abs string, off int64, n int) (bool, error) {
	var ends lineEnds
	defer ends.close()
	return ends.at(abs, off, n)
}

// lineEnds answers whether lines end where records say, keeping the last
// file it read open: a history's records of one file come in runs (a
// run's lines written together), and an open of each was most of a check
// --full's 200,000 at 100,000 runs.
type lineEnds struct {
	abs string
	f   *os.File
	err error
}

// at says whether the n bytes at off in the file at abs end a line.
func (l *lineEnds) at(abs string, off int64, n int) (bool, error) {
	if l.f == nil && l.err == nil || abs != l.abs {
		l.close()
		l.abs = abs
		l.f, l.err = fsys.Open(abs)
	}
	if errors.Is(l.err, fs.ErrNotExist) {
		return false, nil
	}
	if l.err != nil {
		return false, l.err
	}
	var b [1]byte
	if _, err := l.f.ReadAt(b[:], off+int64(n)-1); err != nil {
		return false, nil
	}
	return b[0] == '\n', nil
}

// close closes the file kept open.
func (l *lineEnds) close() {
	if l.f != nil {
		l.f.Close()
	}
	l.f, l.err = nil, nil
}

// Reserve appends the record of the next seq, the line of n bytes (its
// newline included) at off in file (relative to the vault), and answers
// the seq. The line is written after it. The caller holds the vault's lock.
func (h *History) Reserve(file string, off int64, n int) (int64, error) {
	if err := h.reserve([]Span{{file, off, n}}); err != nil {
		return 0, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.count, nil
}

// Span is where a line is: n bytes (its newline included) at off in a
// file (relative to the vault).
type Span struct {
	File string
	Off  int64
	N    int
}

// reserve appends the records of the next seqs, one a line, in one write
// and at most one fsync: a rebuild, or lines written by hand being
// adopted, number 130,000 lines of a long run at once, which with a sync
// each took minutes. The caller holds the vault's lock.
func (h *History) reserve(lines []Span) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := os.MkdirAll(h.dir, 0o755); err != nil {
		return err
	}
	buf := make([]byte, 0, len(lines)*recSize)
	for _, ln := range lines {
		no, ok := h.fileNo[ln.File]
		if !ok {
			if _, err := vault.AppendLine(h.filesPath(), []byte(ln.File+"\n")); err != nil {
				return err
			}
			// The line is taken from the file, as another process's would be.
			if err := h.refreshFilesLocked(); err != nil {
				return err
			}
			if no, ok = h.fileNo[ln.File]; !ok {
				return fmt.Errorf("history of %s: %s was not added to its list of files", h.playbook, ln.File)
			}
		}
		var b [recSize]byte
		binary.BigEndian.PutUint32(b[0:], no)
		binary.BigEndian.PutUint32(b[4:], uint32(ln.N))
		binary.BigEndian.PutUint64(b[8:], uint64(ln.Off))
		buf = append(buf, b[:]...)
	}
	f, err := fsys.OpenFile(h.seqPath(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	taken := false
	defer func() {
		if !taken {
			f.Close()
		}
	}()
	crashpoint.Hit()
	if _, err := f.Write(buf); err != nil {
		return err
	}
	// The records are written before the lines they number, so a process
	// killed between them leaves a record whose line is missing, which
	// Repair drops, never a line whose seq the history lost and would give
	// again. They are synced with the lines at the end of the write's
	// group (vault.SyncAtEnd), before any write is answered: one fsync a
	// group, not one an event under the lock. Only a stop of the machine
	// can lose a record and keep its line, and the git stamp's boot has
	// the histories checked after one (stamp.go). Where the platform names
	// no boot (fsys.BootID), the records are synced here, first.
	if fsys.BootID() != "" && h.v.SyncAtEnd(f) {
		taken = true
	} else if err := f.Sync(); err != nil {
		return err
	}
	h.count += int64(len(lines))
	return nil
}

// Record is one event of a playbook's history, as read back.
type Record struct {
	Seq  int64
	File string
	Off  int64 // where its line begins in File
	Line event.Line
	Raw  []byte // the line without its newline
}

// Page reads up to limit records after seq after, in history order. A
// last record whose line is still being written (under the lock, by
// another writer) ends the page before it.
func (h *History) Page(after int64, limit int) ([]Record, error) {
	h.mu.Lock()
	count, files := h.count, h.files
	h.mu.Unlock()
	if after >= count {
		return nil, nil
	}
	f, err := fsys.Open(h.seqPath())
	if err != nil {
		return nil, err
	}
	defer f.Close()
	end := min(count, after+int64(limit))
	out := make([]Record, 0, end-after)
	open := map[string]*os.File{}
	var filler *lineFiller
	defer func() {
		for _, f := range open {
			f.Close()
		}
	}()
	for seq := after + 1; seq <= end; seq++ {
		r, err := h.readFrom(f, files, seq)
		if err != nil {
			return nil, err
		}
		ef, ok := open[r.file]
		if !ok {
			if ef, err = fsys.Open(h.v.Abs(r.file)); err != nil {
				if seq == count && errors.Is(err, fs.ErrNotExist) {
					// The last record is reserved for a new run whose
					// folder is being put in place under the lock.
					break
				}
				return nil, err
			}
			open[r.file] = ef
		}
		if r.n <= 0 {
			return nil, fmt.Errorf("history of %s: record %d is empty; quire reindex rebuilds it", h.playbook, seq)
		}
		raw := make([]byte, r.n)
		if _, err := ef.ReadAt(raw, r.off); err != nil || raw[len(raw)-1] != '\n' {
			if seq == count && (err == nil || errors.Is(err, io.EOF)) {
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
		// Its seq is its place, and a line written by hand gets the id,
		// run and subject a recorded one carries (lines.go).
		line.Seq = seq
		if line.ID == "" {
			if filler == nil {
				filler = newLineFiller(h.v, h.src)
			}
			if err := filler.fill(r.file, r.off, &line); err != nil {
				return nil, err
			}
		}
		out = append(out, Record{Seq: seq, File: r.file, Off: r.off, Line: line, Raw: raw})
	}
	// A chain that cannot be extended here (a vault read-only to this
	// process) leaves the read as it is: Chain says so to who asks.
	_ = h.extendChain(after, out)
	return out, nil
}

// rebuild makes the history's files anew from the event lines of the
// playbook's events.jsonl and its runs' run.jsonl (in that order, runs in
// the index's order: Source.Files), so that every line has one place, and
// the place of a line is the seq it is presented with:
//
//  1. N is the number of event lines. A line's own seq is kept when it is
//     1 to N, it follows the seq kept for the line before it in its file,
//     and no other line carrying it was written later (by its time, then
//     its id): a seq two lines carry was given back when git took back
//     the lines the history had counted (a reset), and given again by the
//     history to the later line, while the earlier one was numbered anew
//     by the rebuild that followed. Every other line (one written by
//     hand, or one whose seq cannot be kept) is unnumbered, and there are
//     as many unnumbered lines as seqs left free in 1..N.
//  2. Unnumbered lines followed in their file by a numbered one (seq S,
//     the numbered line before them P) take the highest free seqs between
//     P and S: where quire numbered them when it next wrote the file.
//  3. The others (at the end of their file, or where no seq between was
//     free) take, in the order of the files and then of their lines, the
//     lowest free seq after the line before them, or else the lowest free
//     seq: where quire numbered them when it read or rebuilt the history.
//
// So a rebuild of the same files gives the same history (the same records
// naming the same files; the list of files begins with a nonce of its
// own), lines quire wrote keep their seq, and nothing is numbered twice. (Lines
// written by hand at the ends of several runs and numbered at different
// times may come back in another order among themselves.)
func (h *History) rebuild() error {
	var files [][]*placed
	names, err := h.src.Files(h.playbook)
	if err != nil {
		return err
	}
	// The files outrank the history, and HEAD's lines outrank the files:
	// a file a person deleted or changed in what was committed would
	// number the lines again and give a later event a seq that HEAD's
	// lines hold. It is refused, naming the file (quire janitor restores
	// it from HEAD).
	if err := h.v.Kept(names); err != nil {
		return err
	}
	for _, file := range names {
		fh, err := fsys.Open(h.v.Abs(file))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		files = append(files, scanLines(file, fh))
		fh.Close()
	}
	at, err := number(files)
	if err != nil {
		return fmt.Errorf("history of %s: %w", h.playbook, err)
	}
	if err := os.MkdirAll(h.dir, 0o755); err != nil {
		return err
	}
	os.Remove(h.seqPath())
	os.Remove(h.filesPath())
	os.Remove(h.chainPath())
	h.count, h.files, h.fileNo = 0, nil, map[string]uint32{}
	h.grown.Forget()
	// The list made anew begins with a line of its own, so that a process
	// that held the old one reads it whole (fsys.Grown's head): the new
	// file may get the old one's inode, and the paths of a playbook's runs
	// are often of one length, so its old last line may stand at its old
	// end.
	var nonce [8]byte
	rand.Read(nonce[:])
	if _, err := vault.AppendLine(h.filesPath(), []byte(fmt.Sprintf("%s%x\n", filesHead, nonce))); err != nil {
		return err
	}
	spans := make([]Span, len(at))
	for i, ln := range at {
		spans[i] = Span{ln.file, ln.off, ln.n}
	}
	return h.reserve(spans)
}

// placed is one event line of a file, as a rebuild numbers it.
type placed struct {
	file string
	off  int64
	n    int
	own  int64 // the seq the line carries, 0 for none
	seq  int64 // its place; 0 until given
	// when and id order two lines that carry one seq (rule 1).
	when time.Time
	id   string
}

// scanLines reads the event lines of an event file, passing over lines that
// are not events and a torn last line.
func scanLines(file string, r io.Reader) []*placed {
	var lines []*placed
	br := bufio.NewReaderSize(r, 64<<10)
	off := int64(0)
	for {
		raw, err := br.ReadBytes('\n')
		if err != nil {
			break // EOF, or a torn last line, which is not an event
		}
		if ln, perr := event.Parse(raw[:len(raw)-1]); perr == nil {
			l := &placed{file: file, off: off, n: len(raw), own: ln.Seq}
			if ln.Seq != 0 {
				l.when, _ = event.ParseTime(ln.Timestamp)
				l.id = ln.ID
			}
			lines = append(lines, l)
		}
		off += int64(len(raw))
	}
	return lines
}

// number gives every line of the files its place by rebuild's rules, and
// answers the lines in seq order (the line of seq s at s-1).
func number(files [][]*placed) ([]*placed, error) {
	total := int64(0)
	for _, lines := range files {
		total += int64(len(lines))
	}
	// 1. The seqs lines carry, where they can be kept.
	at := make([]*placed, total+1) // seq → line
	later := func(a, b *placed) bool {
		if !a.when.Equal(b.when) {
			return a.when.After(b.when)
		}
		return a.id > b.id
	}
	for _, lines := range files {
		prev := int64(0)
		for _, ln := range lines {
			s := ln.own
			if s <= prev || s > total {
				continue
			}
			if had := at[s]; had != nil {
				if !later(ln, had) {
					continue
				}
				had.seq = 0 // numbered by rules 2 and 3
			}
			ln.seq, at[s], prev = s, ln, s
		}
	}
	// Free seqs, found from above and from below in near constant time.
	up, down := make([]int64, total+2), make([]int64, total+2)
	for i := range up {
		up[i], down[i] = int64(i), int64(i)
	}
	find := func(p []int64, i int64) int64 {
		for p[i] != i {
			p[i] = p[p[i]]
			i = p[i]
		}
		return i
	}
	take := func(s int64, ln *placed) {
		ln.seq, at[s] = s, ln
		up[s], down[s] = s+1, s-1
	}
	for s := int64(1); s <= total; s++ {
		if at[s] != nil {
			up[s], down[s] = s+1, s-1
		}
	}
	down[0], up[total+1] = 0, total+1
	// 2. Unnumbered lines before a numbered one, the latest block first.
	type block struct {
		lines []*placed
		p, s  int64
	}
	var blocks []block
	for _, lines := range files {
		p, start := int64(0), 0
		for i, ln := range lines {
			if ln.seq == 0 {
				continue
			}
			if i > start {
				blocks = append(blocks, block{lines[start:i], p, ln.seq})
			}
			p, start = ln.seq, i+1
		}
	}
	sort.SliceStable(blocks, func(i, j int) bool { return blocks[i].s > blocks[j].s })
	for _, b := range blocks {
		below := b.s
		for i := len(b.lines) - 1; i >= 0; i-- {
			s := find(down, below-1)
			if s <= b.p {
				break
			}
			take(s, b.lines[i])
			below = s
		}
	}
	// 3. The rest, in the order of the files and their lines.
	for _, lines := range files {
		prev := int64(0)
		for _, ln := range lines {
			if ln.seq == 0 {
				s := find(up, prev+1)
				if s > total {
					s = find(up, 1)
				}
				take(s, ln)
			}
			prev = ln.seq
		}
	}
	for s := int64(1); s <= total; s++ {
		if at[s] == nil {
			return nil, fmt.Errorf("seq %d was given no line", s)
		}
	}
	return at[1:], nil
}
