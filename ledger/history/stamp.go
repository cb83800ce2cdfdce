package history

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"quire/internal/fsys"
	"quire/vault"
	"quire/words/event"
)

// The history under .quire/history/ is derived from the event files, and
// a person's git command can take those files back (git stash, git reset
// --hard, git checkout): the history then points past them, and the next
// event would take a seq an event already has. So the history records what
// it was built from: .quire/history/git.stamp holds the stat of git's HEAD,
// branch folder, packed-refs and index as they were when quire last knew
// the history true (after its own commits, and after each check). A write
// compares them (four stats) and, when git changed anything quire did not,
// checks every playbook's history against the sizes of the files it points
// into (a stat a file), and rebuilds the histories that point past them,
// with their views. A warm process also keeps .git/index as it left it
// (vault.IndexMark): git writes a file of the work tree only with its
// entry, so it stats only the files whose entries git changed and those
// the index does not hold, not every file (200 ms at 20,000 runs).
//
// The stamp also names the machine's boot it was written in (fsys.BootID):
// a history's records are synced with the lines they number at the end of
// their write's group, not before the lines are written (History.reserve),
// so a machine that stopped in between may have kept a line and lost its
// record. After the machine starts again, the stamp's boot is not this
// one's, and the first use of the histories checks every playbook's, as
// after git moved, including the lines past its records (lacksLines), and
// rebuilds those the files disagree with: once a boot, a stat of each
// event file.
const gitStampFile = Dir + "/git.stamp"

// gitStamp is the stat of what a git command that moves files changes:
// HEAD, the index, packed-refs and the branch HEAD names (git writes a ref
// anew and renames it into place). Not the branch's folder: a group of
// quire's writes takes the branch's lock in it at its first commit, and its
// later writes would take that for git moving.
func (s *Store) gitStamp() string {
	var b strings.Builder
	if boot := fsys.BootID(); boot != "" {
		fmt.Fprintf(&b, "boot %s\n", boot)
	}
	names := []string{"HEAD", "index", "packed-refs"}
	if head, err := s.head.read(filepath.Join(s.v.GitDir(), "HEAD")); err == nil {
		if ref, ok := strings.CutPrefix(strings.TrimSpace(head), "ref: "); ok && strings.HasPrefix(ref, "refs/") && filepath.IsLocal(ref) {
			names = append(names, ref)
		}
	}
	for _, name := range names {
		fi, err := os.Stat(filepath.Join(s.v.GitDir(), filepath.FromSlash(name)))
		if err != nil {
			fmt.Fprintf(&b, "%s -\n", name)
			continue
		}
		fmt.Fprintf(&b, "%s %d %d %d\n", name, fi.Size(), fi.ModTime().UnixNano(), fsys.Inode(fi))
	}
	return b.String()
}

// restamp records that the histories are true to git as it is now. The
// caller holds the lock.
func (s *Store) restamp() {
	p := s.v.Abs(gitStampFile)
	if os.MkdirAll(filepath.Dir(p), 0o755) == nil {
		stamp := s.gitStamp()
		if writeStamp(p, []byte(stamp)) {
			s.stamp.wrote(p, stamp)
		} else {
			s.stamp.forget()
		}
	}
	var err error
	if s.mark, err = s.v.MarkIndex(); err != nil {
		s.mark = vault.IndexMark{} // every file is checked next time
	}
}

// writeStamp writes the stamp over the one before, in place and not
// synced: it is only ever compared whole with git's stat, so a stamp a
// crash or a failed write leaves cut, mixed, older or missing differs from
// it and costs one check of the histories, never a check skipped. (A
// temporary file renamed over it and synced cost a millisecond or two a
// boundary.)
func writeStamp(p string, stamp []byte) bool {
	f, err := fsys.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return false
	}
	defer f.Close()
	if _, err := f.WriteAt(stamp, 0); err != nil || f.Truncate(int64(len(stamp))) != nil {
		os.Remove(p)
		return false
	}
	return true
}

// FollowGit throws away the histories that a git command took files back
// under (Source.Forget forgets what was derived from them), to be rebuilt
// from the files on their next use: four stats while git is as quire left
// it. Every write runs it before it numbers an event. The caller holds the
// vault's lock.
func (s *Store) FollowGit() error {
	if !s.GitMoved() {
		return nil
	}
	written, ok, err := s.v.WrittenSince(s.mark)
	if err != nil || !ok {
		written = nil // every file
	}
	stale, err := s.staleOf(written, true, nil)
	if err != nil {
		return err
	}
	for _, p := range stale {
		s.forget(p)
	}
	s.restamp()
	return nil
}

// GitMoved reports whether git changed HEAD, a branch, packed-refs or the
// index since the histories were last known true to it (four stats, and
// the stamp's and HEAD's: keptFile): a
// reader that sees it has the histories follow git (FollowGit, under the
// lock) before it reads them, so that a git reset --hard or revert does
// not leave it reading past the files.
func (s *Store) GitMoved() bool {
	stamp, err := s.stamp.read(s.v.Abs(gitStampFile))
	return err != nil || stamp != s.gitStamp()
}

// Stale lists the playbooks whose history points past the end of a file
// it names (or into a file that is gone): git took lines back, and the
// next write rebuilds it.
func (s *Store) Stale() ([]string, error) { return s.staleOf(nil, false, nil) }

// StaleSized is Stale taking a file's size from size where it knows it
// (quire check stamped every file already), else from a stat.
func (s *Store) StaleSized(size func(file string) (int64, bool)) ([]string, error) {
	return s.staleOf(nil, false, size)
}

// staleOf is Stale looking only at the files for which written answers
// true (every file when it is nil), and with lacking also at the histories
// that lack lines git brought in (lacksLines).
func (s *Store) staleOf(written *vault.Written, lacking bool, size func(string) (int64, bool)) ([]string, error) {
	seqs, err := filepath.Glob(filepath.Join(s.v.Abs(Dir), "*.seq"))
	if err != nil {
		return nil, err
	}
	var stale []string
	for _, seq := range seqs {
		p := strings.TrimSuffix(filepath.Base(seq), ".seq")
		if s.isStale(p, seq, written, lacking, size) {
			stale = append(stale, p)
		}
	}
	return stale, nil
}

// isStale reports whether the playbook's history points past the end of
// a file it names, or with lacking whether it lacks lines git brought in
// (lacksLines). Its records are read once and each file stated once, for
// both questions: after a reboot or a copy of the vault that is every
// event file.
func (s *Store) isStale(playbook, seqPath string, written *vault.Written, lacking bool, size func(string) (int64, bool)) bool {
	recs, err := fsys.ReadFile(seqPath)
	if err != nil {
		return false
	}
	names, err := fsys.ReadFile(strings.TrimSuffix(seqPath, ".seq") + ".files")
	if err != nil {
		return len(recs) > 0
	}
	files := listedFiles(names)
	end, ok := recordedEnds(recs, len(files))
	if !ok {
		return true
	}
	var asked map[string]bool
	if written != nil {
		asked = written.Of(files)
	}
	var sizes map[string]int64 // what the stats found, for lacksLines
	if lacking {
		sizes = make(map[string]int64, len(files))
	}
	for i, f := range files {
		if end[i] == 0 || written != nil && !asked[f] {
			continue
		}
		if size != nil {
			if n, ok := size(f); ok {
				if n < end[i] {
					return true
				}
				continue
			}
		}
		fi, err := os.Stat(s.v.Abs(f))
		if err != nil || fi.Size() < end[i] {
			return true
		}
		if sizes != nil {
			sizes[f] = fi.Size()
		}
	}
	return lacking && s.lacksLines(playbook, files, end, sizes, written)
}

// recordedEnds reads records (a history's .seq) against its list of
// nfiles files: where the last line recorded in each ends (0 for none),
// by the file's place in the list. ok is false when a record names a file
// the list does not hold.
func recordedEnds(recs []byte, nfiles int) (end []int64, ok bool) {
	end = make([]int64, nfiles)
	for i := 0; i+recSize <= len(recs); i += recSize {
		no := binary.BigEndian.Uint32(recs[i:])
		n := int64(binary.BigEndian.Uint32(recs[i+4:]))
		off := int64(binary.BigEndian.Uint64(recs[i+8:]))
		if int(no) >= nfiles {
			return nil, false
		}
		end[no] = max(end[no], off+n)
	}
	return end, true
}

// lacksLines reports whether git brought lines the playbook's history
// does not hold into its files: a merge or a pull of another clone's
// lines (numbered there, so they carry a seq) into a run's log or the
// playbook's events.jsonl, or a run folder of its own. The history is then
// rebuilt by the files' rule, as a fresh clone's is. Lines written by hand
// at a file's end (without a seq) are not reported: the next write to the
// file numbers them. listed and end are the history's files and where its
// lines end in each; sizes holds the sizes of those isStale stated.
func (s *Store) lacksLines(playbook string, listed []string, end []int64, sizes map[string]int64, written *vault.Written) bool {
	if s.src == nil {
		return false
	}
	ends := make(map[string]int64, len(listed))
	for i, f := range listed {
		ends[f] = max(ends[f], end[i])
	}
	files, err := s.src.Files(playbook)
	if err != nil {
		return false
	}
	var asked map[string]bool
	if written != nil {
		asked = written.Of(files)
	}
	for _, f := range files {
		if written != nil && !asked[f] {
			continue
		}
		n, ok := sizes[f]
		if !ok {
			fi, err := os.Stat(s.v.Abs(f))
			if err != nil {
				continue
			}
			n = fi.Size()
		}
		if n > ends[f] && numberedAfter(s.v.Abs(f), ends[f]) {
			return true
		}
	}
	return false
}

// numberedAfter reports whether the whole lines of the file at abs after
// offset off include one that carries a seq.
func numberedAfter(abs string, off int64) bool {
	f, err := fsys.Open(abs)
	if err != nil {
		return false
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return false
	}
	br := bufio.NewReader(f)
	for {
		raw, err := br.ReadBytes('\n')
		if err != nil {
			return false
		}
		if ln, err := event.Parse(raw[:len(raw)-1]); err == nil && ln.Seq != 0 {
			return true
		}
	}
}

// gitCommit is vault.Commit keeping the histories' git stamp: it checks
// the histories first (four stats while git is as quire left it), so the
// stamp it writes after the commit is true. The caller holds the lock.
func (s *Store) gitCommit(paths []string, sig vault.Signature, msg string) (string, error) {
	if err := s.FollowGit(); err != nil {
		return "", err
	}
	id, err := s.v.Commit(paths, sig, msg)
	if err == nil {
		s.v.AfterCommits(s.restamp) // git's stat as the commit's group leaves it
	}
	return id, err
}
