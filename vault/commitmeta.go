package vault

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"quire/vault/git/object"
)

// CommitMeta is what a commit says of itself besides its tree: its
// parents, its author and the author's time, and its message. It is what
// the ledger keeps of a commit in its derived state (the commits of each
// run), read the same way for quire's own commits and for those another
// program made.
type CommitMeta struct {
	Parents []Hash
	Author  string    // the author's name, without the email
	When    time.Time // the author's time, in the zone the commit gives
	// Committed is the committer's time: when the commit was made, which
	// a page rendered as of the commit takes for its now.
	Committed time.Time
	Message   string
}

// ReadCommitOf reads a commit's parents, author and message from a walk
// of the history (see git-cat-file(1) and the commit object of
// gitformat-commit(5)).
func ReadCommitOf(h *History, id Hash) (CommitMeta, error) {
	data, err := h.CommitData(id)
	if err != nil {
		return CommitMeta{}, err
	}
	return parseCommitMeta(id, data)
}

// ReadCommit reads a commit of the vault, as History.ReadCommit does, for
// one commit alone: the one the caller just made, a loose object read
// straight from its file (a quarter of what go-git's storage takes to
// find it), or else wherever it is.
func (v *Vault) ReadCommit(id Hash) (CommitMeta, error) {
	hex := id.String()
	typ, data, err := object.ReadLooseFile(filepath.Join(v.gitDir, "objects", hex[:2], hex[2:]))
	if err != nil {
		data, typ, err = v.objs.readRaw(id)
	}
	if err != nil {
		return CommitMeta{}, fmt.Errorf("vault: reading commit %s: %w", id, err)
	}
	if typ != object.Commit {
		return CommitMeta{}, fmt.Errorf("vault: %s is not a commit", id)
	}
	return parseCommitMeta(id, data)
}

// parseCommitMeta reads a commit object's content: header lines ("tree",
// "parent", "author", "committer", and others git may add, such as
// "gpgsig", whose value continues on lines that start with a space), a
// blank line, then the message.
func parseCommitMeta(id Hash, data []byte) (CommitMeta, error) {
	var m CommitMeta
	sawAuthor := false
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return m, fmt.Errorf("vault: commit %s: its header does not end", id)
		}
		line := data[:i]
		data = data[i+1:]
		if len(line) == 0 {
			m.Message = string(data)
			break
		}
		k, val, _ := bytes.Cut(line, []byte{' '})
		switch string(k) {
		case "parent":
			p, err := object.ParseHash(string(val))
			if err != nil {
				return m, fmt.Errorf("vault: commit %s: parent %q is not a commit id", id, val)
			}
			m.Parents = append(m.Parents, p)
		case "author":
			var err error
			if m.Author, m.When, err = parseIdent(val); err != nil {
				return m, fmt.Errorf("vault: commit %s: author: %w", id, err)
			}
			sawAuthor = true
		case "committer":
			var err error
			if _, m.Committed, err = parseIdent(val); err != nil {
				return m, fmt.Errorf("vault: commit %s: committer: %w", id, err)
			}
		}
	}
	if !sawAuthor {
		return m, fmt.Errorf("vault: commit %s has no author", id)
	}
	if m.Committed.IsZero() {
		m.Committed = m.When
	}
	return m, nil
}

// parseIdent reads "Name <email> <unix seconds> <+hhmm>".
func parseIdent(b []byte) (string, time.Time, error) {
	lt := bytes.LastIndexByte(b, '<')
	gt := bytes.LastIndexByte(b, '>')
	if lt < 0 || gt < lt {
		return "", time.Time{}, errors.New("no <email>")
	}
	name := string(bytes.TrimSpace(b[:lt]))
	rest := bytes.Fields(b[gt+1:])
	if len(rest) != 2 {
		return name, time.Time{}, errors.New("no time and zone")
	}
	secs, err := strconv.ParseInt(string(rest[0]), 10, 64)
	if err != nil {
		return name, time.Time{}, fmt.Errorf("time %q", rest[0])
	}
	z := rest[1]
	if len(z) != 5 || (z[0] != '+' && z[0] != '-') {
		return name, time.Time{}, fmt.Errorf("zone %q", z)
	}
	hh, err1 := strconv.Atoi(string(z[1:3]))
	mm, err2 := strconv.Atoi(string(z[3:5]))
	if err1 != nil || err2 != nil {
		return name, time.Time{}, fmt.Errorf("zone %q", z)
	}
	off := hh*3600 + mm*60
	if z[0] == '-' {
		off = -off
	}
	return name, time.Unix(secs, 0).In(time.FixedZone("", off)), nil
}
