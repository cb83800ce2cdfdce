package vault

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"quire/internal/crashpoint"
	"quire/internal/fsys"
)

// A write that may be undone: a writer that has not yet made its effect
// known (a call with a request id whose answer is not yet kept) marks its
// write undoable, says of each file it is about to change how to put it
// back (Touch), and settles once the effect and its answer stand
// (Settle). Should it die before it settles, the next writer puts every
// file it touched back as it was, so the call's retry finds nothing of it
// and makes it once. After Settle the write stands, and what it left is
// finished forward as any other writer's.
//
// The journal holds it, one line each:
//
//	undoable <rel>           the write from here on may be undone, unless
//	                         the file rel (its answer) is there
//	undo size <n> <rel>      truncate rel to n bytes (an append-only file)
//	undo absent <rel>        remove rel (a file the write makes)
//	undo copy <k> <rel>      put .quire/undo/<k> back at rel (a file it replaces)
//	settled                  the write stands
//	undone                   a later writer put the files back: what is above is done
//
// Settle comes before the write's commit, so a write undone was never
// committed: what it put back is what HEAD and the earlier writes left.
const undoDir = QuireDir + "/undo"

// Undoable marks the rest of this write undoable until Settle, or until
// the file answer (relative to the vault) is there: a writer that made its
// answer and stopped before Settle is answered, and what it left is
// finished forward. The caller holds the lock.
func (v *Vault) Undoable(answer string) error {
	if !v.locked {
		return errors.New("vault: Undoable called without the lock")
	}
	if strings.ContainsAny(answer, " \n") || answer == "" {
		return fmt.Errorf("vault: %q cannot name a write's answer", answer)
	}
	v.undo = &undoState{touched: map[string]bool{}}
	return v.note("undoable %s", answer)
}

type undoState struct {
	touched map[string]bool
	copies  int
	settled bool
}

// Touch says, before an undoable write first changes rel, how to put it
// back: an append-only file is cut back to its size, a file it makes is
// removed, and a file it replaces is copied aside. Outside an undoable
// write, or once settled, it does nothing.
func (v *Vault) Touch(rel string, appendOnly bool) error {
	u := v.undo
	if u == nil || u.settled || u.touched[rel] {
		return nil
	}
	abs, err := v.Join(rel)
	if err != nil {
		return err
	}
	fi, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		err = v.note("undo absent %s", rel)
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return fmt.Errorf("vault: %s is not a regular file", rel)
	case appendOnly:
		err = v.note("undo size %d %s", fi.Size(), rel)
	default:
		data, rerr := fsys.ReadFile(abs)
		if rerr != nil {
			return rerr
		}
		u.copies++
		k := strconv.Itoa(u.copies)
		dir := v.Abs(undoDir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		// Not synced, as the journal is not: it guards against the death
		// of a process, whose writes the kernel keeps.
		crashpoint.Hit()
		if err := os.WriteFile(filepath.Join(dir, k), data, 0o644); err != nil {
			return err
		}
		err = v.note("undo copy %s %s", k, rel)
	}
	if err == nil {
		u.touched[rel] = true
	}
	return err
}

// Settle says the undoable write stands: its effect and its answer are
// written, and from here on what it leaves is finished, not undone.
func (v *Vault) Settle() error {
	if v.undo == nil || v.undo.settled {
		return nil
	}
	if err := v.note("settled"); err != nil {
		return err
	}
	v.undo.settled = true
	return nil
}

// Settled reports whether this write is undoable and not yet settled
// (false), or anything else (true).
func (v *Vault) Settled() bool { return v.undo == nil || v.undo.settled }

// undoLeft puts back what the unsettled undoable writes of a journal left
// by writers that stopped touched, newest change first, and notes that it
// did. It answers what it did, one sentence each.
func (v *Vault) undoLeft(old []byte) ([]string, error) {
	lines := strings.Split(string(old), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i] == "undone" {
			lines = lines[i+1:]
			break
		}
	}
	// Each writer's part begins at its pid line.
	var undo []string
	var part []string
	open := false
	flush := func() {
		if open {
			undo = append(undo, part...)
		}
		part, open = nil, false
	}
	for _, line := range lines {
		switch {
		case strings.HasPrefix(line, "pid "):
			flush()
		case strings.HasPrefix(line, "undoable "):
			// A write whose answer is there stands.
			_, err := os.Stat(v.Abs(strings.TrimPrefix(line, "undoable ")))
			part, open = nil, errors.Is(err, fs.ErrNotExist)
		case line == "settled":
			part, open = nil, false
		case strings.HasPrefix(line, "undo ") && open:
			part = append(part, line)
		}
	}
	flush()
	if len(undo) == 0 {
		return nil, nil
	}
	var done []string
	for i := len(undo) - 1; i >= 0; i-- {
		f := strings.SplitN(undo[i], " ", 4)
		var rel string
		var err error
		switch {
		case len(f) == 4 && f[1] == "size":
			rel = f[3]
			n, perr := strconv.ParseInt(f[2], 10, 64)
			if perr != nil {
				return done, fmt.Errorf("vault: the journal's line %q: %v", undo[i], perr)
			}
			err = v.cutBack(rel, n)
		case len(f) >= 3 && f[1] == "absent":
			rel = strings.Join(f[2:], " ")
			err = v.removeMade(rel)
		case len(f) == 4 && f[1] == "copy":
			rel = f[3]
			err = v.putBack(f[2], rel)
		default:
			return done, fmt.Errorf("vault: the journal's line %q is not an undo", undo[i])
		}
		if err != nil {
			return done, err
		}
		done = append(done, "put back "+rel+" as it was before a write that stopped before it was answered")
	}
	if err := v.note("undone"); err != nil {
		return done, err
	}
	return done, nil
}

func (v *Vault) cutBack(rel string, n int64) error {
	abs, err := v.Join(rel)
	if err != nil {
		return err
	}
	fi, err := os.Lstat(abs)
	if errors.Is(err, fs.ErrNotExist) || err == nil && (!fi.Mode().IsRegular() || fi.Size() <= n) {
		return nil
	}
	if err != nil {
		return err
	}
	crashpoint.Hit()
	return os.Truncate(abs, n)
}

func (v *Vault) removeMade(rel string) error {
	abs, err := v.Join(rel)
	if err != nil {
		return err
	}
	crashpoint.Hit()
	if err := os.Remove(abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// The folders it made for it, now empty, go too (a folder that holds
	// anything stays).
	for dir := filepath.Dir(abs); len(dir) > len(v.root) && strings.HasPrefix(dir, v.root+string(filepath.Separator)); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			break
		}
	}
	return nil
}

func (v *Vault) putBack(k, rel string) error {
	abs, err := v.Join(rel)
	if err != nil {
		return err
	}
	src := filepath.Join(v.Abs(undoDir), k)
	if _, err := os.Stat(src); errors.Is(err, fs.ErrNotExist) {
		return nil // put back already, by a writer that stopped after it
	}
	crashpoint.Hit()
	return os.Rename(src, abs)
}
