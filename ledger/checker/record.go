package checker

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"io"
	"os"
	"path"
	"path/filepath"
	"time"

	"quire/internal/fsys"
	"quire/runfolder"
	"quire/vault"
)

// What the last check that passed read of each run folder, so that the
// next check reads only the folders that changed since (issue 28: a
// check read every run, 83 s at 100,000 runs). A folder is read again
// when a stamp (size, modification time, inode) of the folder itself
// (an entry made, removed or replaced, as run.state.json is at each
// boundary), its definition.md, run.jsonl or run.state.json differs from
// the record's, or was taken too soon after the file changed to tell
// (racy, as git's index entries are); and every folder is read again
// when the index of things is not the one recorded with lines appended
// (what a run's front matter resolves against), a binding the runs name
// is gone, or there is no record. A record is written only by a check
// that found no problem, so a folder it holds had none. quire check
// --full reads every folder, and writes the record anew when it passes.
//
// It is derived state (.quire/check-record, gob): deleting it costs one
// full check.
const recordFile = vault.QuireDir + "/check-record"

// recordVersion changes with the record's form: another is not read.
const recordVersion = 1

// racyRecord is how close to the record's time a stamp is too new to
// trust: a write in the same tick of the file system's clock leaves the
// same times behind.
const racyRecord = 100 * time.Millisecond

// stampFiles are what a folder's record stamps, the folder first.
var stampFiles = []string{"", runfolder.DefinitionFile, runfolder.LogFile, runfolder.StateFile}

type stamp struct {
	Size, MTime int64
	Ino         uint64
}

// runRecord is what a passing check read of one run folder.
type runRecord struct {
	Stamps     []stamp
	Binding    string
	Events     int
	Seqs       []int64 // the lines' own seqs, in order
	Unnumbered int     // lines without one
}

type checkRecord struct {
	Version int
	At      time.Time // when the stamps were taken
	// IndexSize and IndexSum are the index of things' size and the
	// SHA-256 of its bytes.
	IndexSize int64
	IndexSum  [32]byte
	Runs      map[string]*runRecord // by the folder's path
}

// stampOfFile stamps one file.
func stampOfFile(abs string) (stamp, bool) {
	fi, err := os.Lstat(abs)
	if err != nil {
		return stamp{}, false
	}
	return stamp{Size: fi.Size(), MTime: fi.ModTime().UnixNano(), Ino: fsys.Inode(fi)}, true
}

// stampsOf stamps a run folder's files; nil when one cannot be stat'ed
// (it is then read, and says why).
func (c *Checker) stampsOf(rel string) []stamp {
	out := make([]stamp, len(stampFiles))
	for i, name := range stampFiles {
		s, ok := stampOfFile(c.v.Abs(path.Join(rel, name)))
		if !ok {
			return nil
		}
		out[i] = s
	}
	return out
}

// loadRecord reads the last passing check's record, when it still holds
// for the vault as it is now (see above); nil otherwise.
func (c *Checker) loadRecord() *checkRecord {
	data, err := os.ReadFile(c.v.Abs(recordFile))
	if err != nil {
		return nil
	}
	var r checkRecord
	if gob.NewDecoder(bytes.NewReader(data)).Decode(&r) != nil || r.Version != recordVersion {
		return nil
	}
	if size, sum, ok := c.indexSum(r.IndexSize); !ok || size < r.IndexSize || sum != r.IndexSum {
		return nil
	}
	bindings := map[string]bool{}
	for _, run := range r.Runs {
		if run.Binding != "" && !bindings[run.Binding] {
			if !c.v.Exists(run.Binding) {
				return nil
			}
			bindings[run.Binding] = true
		}
	}
	return &r
}

// indexSum answers the index's size and the SHA-256 of its first n bytes
// (all of it, with n of -1).
func (c *Checker) indexSum(n int64) (int64, [32]byte, bool) {
	var sum [32]byte
	f, err := os.Open(c.v.Abs(vault.IndexFile))
	if err != nil {
		return 0, sum, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, sum, false
	}
	if n < 0 || n > fi.Size() {
		n = fi.Size()
	}
	h := sha256.New()
	if _, err := io.CopyN(h, f, n); err != nil {
		return 0, sum, false
	}
	copy(sum[:], h.Sum(nil))
	return fi.Size(), sum, true
}

// holds answers the record of a folder when its stamps are the record's
// and none is too new to tell.
func (r *checkRecord) holds(rel string, now []stamp) *runRecord {
	if r == nil || now == nil {
		return nil
	}
	run := r.Runs[rel]
	if run == nil || len(run.Stamps) != len(now) {
		return nil
	}
	racy := r.At.Add(-racyRecord).UnixNano()
	for i, s := range now {
		if s != run.Stamps[i] || s.MTime >= racy {
			return nil
		}
	}
	return run
}

// saveRecord writes the record of a check that passed.
func (c *Checker) saveRecord(r *checkRecord) {
	size, sum, ok := c.indexSum(-1)
	if !ok {
		return
	}
	r.Version, r.IndexSize, r.IndexSum = recordVersion, size, sum
	var buf bytes.Buffer
	if gob.NewEncoder(&buf).Encode(r) != nil {
		return
	}
	abs := c.v.Abs(recordFile)
	if os.MkdirAll(filepath.Dir(abs), 0o755) != nil || os.WriteFile(abs+".new", buf.Bytes(), 0o644) != nil {
		return
	}
	os.Rename(abs+".new", abs)
}
