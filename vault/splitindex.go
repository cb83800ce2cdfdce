package vault

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/config"

	"quire/internal/crashpoint"
	"quire/internal/fsys"
	"quire/vault/git/index"
	"quire/vault/git/object"
)

// git's split index (core.splitIndex; gitformat-index(5), "Split index";
// the format is vault/git/index's, the files and when to write them are
// here): .git/index
// holds only the entries that differ from a shared index,
// .git/sharedindex.<id> (id: the shared file's own checksum), named in its
// `link` extension with two bitmaps: the shared entries it replaces (its
// first entries, written without names, take their places in order) and
// the ones it deletes; its other entries are added. A boundary then writes
// a few entries instead of the whole index (17 MB at 20,000 runs), and git
// reads it natively.
//
// When quire writes it: core.splitIndex true, always; false, never; unset
// (git's default), when the index on disk is already split (git keeps the
// form too) or holds at least splitMinEntries entries. The shared index is
// written anew, as git does, when the entries the split index holds exceed
// splitIndex.maxPercentChange (20 % by default) of all; shared indexes no
// longer used are removed once older than splitIndex.sharedIndexExpire
// ("never" and "now" understood), and the one in use is touched at each
// write so that git's own clean-up keeps it.
//
// Where .git/config leaves these unset, quire's writes keep defaults of
// their own, because quire writes the index at every boundary, where git
// writes it when a person runs a command: a new shared index also once
// the split index's own file would hold more than splitHeadMost entries,
// and shared indexes unused for ten minutes removed (ownSharedExpire).
// By git's 20 % alone the split file of a vault of 100,000 runs grows to
// some 120,000 entries (8 MB) over its life, and every boundary hashes,
// writes and renames it: with 1.3 MB of it a boundary's p50 was 13.5-14.5
// ms, with a few KB 10.1-11.6 ms. A new shared index there is 46 MB written
// whole, once every four thousand boundaries or so, and git's two weeks'
// expiry would keep every one of them. git's own writes keep git's
// defaults.
// docs/boundary-speed.md has the figures; libgit2 and JGit cannot read a
// split index, so a vault opened with tools built on them sets
// core.splitIndex to false.

// splitMinEntries is the size from which quire splits an index of its own
// accord: below it the whole index is a write of under 1.5 MB.
var splitMinEntries = 10000

// splitHeadMost is the most entries quire's writes leave in a split
// index's own file when splitIndex.maxPercentChange is not set (some 0.7
// MB: a boundary adds two or three).
var splitHeadMost = 10000

// ownSharedExpire is how long a shared index no longer used is kept when
// splitIndex.sharedIndexExpire is not set: a reader that read the split
// index naming it reads it within moments, and at 50 boundaries a second
// a vault of 100,000 runs makes a new one every 80 s or so.
const ownSharedExpire = 10 * time.Minute

const defaultSharedExpire = 14 * 24 * time.Hour

type splitConfig struct {
	stat       fileStamp
	read       bool
	mode       int           // core.splitIndex: -1 unset, 0 false, 1 true
	maxPercent int           // splitIndex.maxPercentChange
	percentSet bool          // maxPercent is the config's, not git's default
	expire     time.Duration // splitIndex.sharedIndexExpire; -1 never
	// newV4: an index made anew is version 4 (index.version 4, or
	// feature.manyFiles without an index.version).
	newV4 bool
	// noUntracked: core.untrackedCache is false, and git's untracked
	// cache is not kept (gitindex.go, extensions).
	noUntracked bool
}

// config reads the split index's settings from .git/config (read again only
// when the file changed). Only the repository's own config is read; a
// setting in the user's ~/.gitconfig is not seen.
func (x *gitIndex) config() splitConfig {
	c := splitConfig{mode: -1, maxPercent: 20, expire: ownSharedExpire}
	p := filepath.Join(filepath.Dir(x.path), "config")
	fi, err := os.Stat(p)
	if err != nil {
		return c
	}
	if x.cfg.read && x.cfg.stat == stampOf(fi) {
		return x.cfg
	}
	c.stat, c.read = stampOf(fi), true
	data, err := fsys.ReadFile(p)
	var cfg config.Config
	if err == nil && config.NewDecoder(bytes.NewReader(data)).Decode(&cfg) == nil {
		if cfg.HasSection("core") && cfg.Section("core").Options.Has("splitIndex") {
			c.mode = 0
			if gitBool(cfg.Section("core").Options.Get("splitIndex")) {
				c.mode = 1
			}
		}
		if cfg.HasSection("core") && cfg.Section("core").Options.Has("untrackedCache") {
			// "keep" (git's default) and true keep it.
			v := strings.ToLower(strings.TrimSpace(cfg.Section("core").Options.Get("untrackedCache")))
			c.noUntracked = v != "keep" && !gitBool(v)
		}
		c.newV4 = cfg.HasSection("feature") && gitBool(cfg.Section("feature").Options.Get("manyFiles"))
		if cfg.HasSection("index") && cfg.Section("index").Options.Has("version") {
			c.newV4 = strings.TrimSpace(cfg.Section("index").Options.Get("version")) == "4"
		}
		if cfg.HasSection("splitIndex") {
			s := cfg.Section("splitIndex")
			if n, err := strconv.Atoi(strings.TrimSpace(s.Options.Get("maxPercentChange"))); err == nil && n >= 0 && n <= 100 {
				c.maxPercent, c.percentSet = n, true
			}
			if s.Options.Has("sharedIndexExpire") {
				c.expire = expireAfter(s.Options.Get("sharedIndexExpire"))
			}
		}
	}
	x.cfg = c
	return c
}

// gitBool reads a boolean as git does; a key written without a value is
// true.
func gitBool(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "true", "yes", "on", "1":
		return true
	}
	return false
}

// expireAfter reads splitIndex.sharedIndexExpire: "never", "now", or
// "<n>.<unit>.ago" (seconds to weeks); anything else is git's default.
func expireAfter(v string) time.Duration {
	v = strings.ToLower(strings.TrimSpace(v))
	switch v {
	case "never", "false":
		return -1
	case "now":
		return 0
	}
	parts := strings.Split(v, ".")
	if len(parts) == 3 && parts[2] == "ago" {
		n, err := strconv.Atoi(parts[0])
		units := map[string]time.Duration{"second": time.Second, "minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour, "week": 7 * 24 * time.Hour}
		if u, ok := units[strings.TrimSuffix(parts[1], "s")]; ok && err == nil && n >= 0 {
			return time.Duration(n) * u
		}
	}
	return defaultSharedExpire
}

// encode writes the index to come into x.buf: whole, or split against the
// shared index, writing a new shared index first when one is due. It
// keeps the version of the index it read, as git does: 4 stays 4, and an
// index made anew takes git's config (index.version, feature.manyFiles).
func (x *gitIndex) encode() error {
	cfg := x.config()
	x.v4 = x.version == 4 || x.version == 0 && cfg.newV4
	split := cfg.mode == 1 || cfg.mode == -1 && (!x.baseID.IsZero() || x.n >= splitMinEntries)
	ext, untrFrom := x.extensions(cfg, split)
	if !split {
		// The index written is then the table its entries are read from
		// in place: its room is not used again.
		var valid []bool
		if x.fsmn != nil {
			valid = x.validBits()
		}
		m, patched := x.patched(ext)
		if !patched {
			x.buf = index.EncodeSeq(nil, x.n, x.tab.Size()+128*len(x.onames)+1024, x.each, x.v4, ext...)
			var err error
			if m, err = index.ReadMain(x.buf, false); err != nil || m.Whole == nil {
				return fmt.Errorf("vault: the index written does not read back: %v", err)
			}
		}
		x.bufTab = true
		x.rebase(m.Whole, ZeroHash)
		x.tabOwn = true
		x.fsm = valid
		x.tail, x.untrFrom = nil, 0
		if m.Untracked != nil {
			x.untr, x.untrIn = m.Untracked, nil // the bytes written, once
		}
		return nil
	}
	d := x.split()
	// git's rule (read-cache.c, too_many_not_shared_entries): a new shared
	// index when the entries not in it pass maxPercentChange of all.
	notShared := d.NotShared()
	if x.baseID.IsZero() || cfg.sharedDue(notShared, x.n) {
		if err := x.writeShared(cfg); err != nil {
			return err
		}
		d = index.Split{}
	} else {
		// As git does at each write of a split index: the shared index in
		// use looks fresh to any clean-up of old ones.
		now := time.Now()
		os.Chtimes(x.sharedPath(x.baseID.String()), now, now)
	}
	if x.bufTab {
		x.buf, x.bufTab = nil, false
	}
	// Written in pieces (writePieces): the head, the extensions as they
	// are held or lie in the index file, and the checksum.
	x.buf = index.EncodeSplitHead(x.buf[:0], d, x.baseID, x.v4)
	x.tail = append(make([][]byte, 0, len(ext)), ext...)
	x.untrFrom = untrFrom
	return nil
}

// sharedDue reports whether a split index holding notShared of n entries
// is due a new shared index: git's rule (read-cache.c,
// too_many_not_shared_entries), past maxPercentChange of all, and quire's
// cap on the split file where .git/config sets no rule.
func (c splitConfig) sharedDue(notShared, n int) bool {
	return c.maxPercent == 0 || c.maxPercent < 100 && notShared*100 > c.maxPercent*n ||
		!c.percentSet && notShared > splitHeadMost
}

// resplit reads a whole index that git wrote where quire's was split as
// the changes it makes to the shared index that one was split from (the
// one read last, else the newest on disk), when the index is to be
// written split and those changes are within sharedDue; it answers
// false, having changed nothing, otherwise.
//
// git writes a split index whole whenever its file system monitor marks
// an entry unchanged (fsmonitor.h, mark_fsmonitor_valid, counts it as a
// change a split index cannot hold): at every git status after a
// boundary in a vault a monitor watches (README). The next boundary then
// wrote a new shared index, 46 MB at 100,000 runs, and a warm process
// compared every entry of the old index with the new one to learn what
// git wrote (IndexMark), 0.6 s of that boundary in all. The changes are
// found from the two files' bytes (index.Table.Changes); at most
// splitHeadMost of them (maxPercentChange of the entries where that is
// set, deletions counted too) are looked for, so a shared index that is
// not the one (a newer file of another writer) costs a short walk.
func (x *gitIndex) resplit(whole *index.Table, verify bool) bool {
	cfg := x.config()
	n := whole.Len()
	if cfg.mode == 0 || cfg.mode == -1 && n < splitMinEntries || whole.Staged() {
		return false
	}
	id := x.baseID
	if !id.IsZero() {
		if _, err := os.Stat(x.sharedPath(id.String())); err != nil {
			id = ZeroHash // removed since: the table held is no file's
		}
	}
	if id.IsZero() {
		if id = x.newestShared(); id.IsZero() {
			return false
		}
	}
	tab, mapped, err := x.sharedTable(id, verify)
	if err != nil {
		return false
	}
	most := splitHeadMost
	if cfg.percentSet {
		most = cfg.maxPercent * n / 100
	}
	changes, ok := tab.Changes(whole, most)
	if !ok {
		return false
	}
	notShared := 0
	for _, c := range changes {
		if c.Entry != nil {
			notShared++
		}
	}
	if cfg.sharedDue(notShared, n) {
		return false
	}
	x.rebase(tab, id)
	x.tabMap = mapped
	for _, c := range changes {
		x.put(c.Name, c.Entry, c.Pos)
	}
	return true
}

// newestShared names the shared index last written or used (git and
// quire touch the one in use at each write of its split index), zero
// when there is none.
func (x *gitIndex) newestShared() Hash {
	names, _ := filepath.Glob(filepath.Join(filepath.Dir(x.path), "sharedindex.*"))
	var newest Hash
	var at time.Time
	for _, p := range names {
		id, err := object.ParseHash(strings.TrimPrefix(filepath.Base(p), "sharedindex."))
		fi, serr := os.Lstat(p)
		if err != nil || serr != nil || !fi.Mode().IsRegular() || !newest.IsZero() && !fi.ModTime().After(at) {
			continue
		}
		newest, at = id, fi.ModTime()
	}
	return newest
}

// patched writes the whole index into x.buf as the last one written with
// the entries that changed since patched in place (index.Table.Patched),
// when that is all that changed: the table is quire's own last write, in
// the version to be written, and every change replaces an entry of the
// same name in the same room. A boundary at 1,000 runs spent a third of
// its CPU encoding 6,000 entries to change two and reading them back.
// ok false: nothing was written, the caller encodes the index whole.
func (x *gitIndex) patched(ext [][]byte) (index.Main, bool) {
	if !x.tabOwn || x.tab == nil || x.n != x.tab.Len() || (x.tab.Version() == 4) != x.v4 {
		return index.Main{}, false
	}
	patches := make([]index.Patch, 0, len(x.onames))
	for _, c := range x.ochanges {
		if c.pos < 0 || c.e == nil {
			return index.Main{}, false
		}
		patches = append(patches, index.Patch{Pos: c.pos, Entry: c.e})
	}
	buf, m, ok := x.tab.Patched(patches, ext...)
	if ok {
		x.buf = buf
		x.patchedWrites++
	}
	return m, ok
}

// split is how the index differs from its shared index, from over: the
// entries replaced and deleted in the table's order, the ones added in
// theirs (the table and onames are both in name order).
func (x *gitIndex) split() index.Split {
	// In the room of the last one: the encoding reads it and keeps none.
	r := x.splitRoom
	d := index.Split{Delete: r.Delete[:0], Replace: r.Replace[:0], Replaced: r.Replaced[:0], Added: r.Added[:0]}
	for _, c := range x.ochanges {
		switch {
		case c.pos >= 0 && c.e == nil:
			d.Delete = append(d.Delete, c.pos)
		case c.pos >= 0:
			d.Replace = append(d.Replace, c.pos)
			d.Replaced = append(d.Replaced, c.e)
		default:
			d.Added = append(d.Added, c.e)
		}
	}
	x.splitRoom = d
	return d
}

// writeShared writes the whole index as a new shared index, named by its
// checksum as git names it, in its version and without extensions (git
// writes a split index's extensions in its own file), and makes it the
// table, read in place from the bytes written. It then removes the shared
// indexes no longer used that are past their expiry, and temporary files
// of a shared index a crash left.
func (x *gitIndex) writeShared(cfg splitConfig) error {
	var valid []bool
	if x.fsmn != nil {
		valid = x.validBits()
	}
	data := index.EncodeSeq(nil, x.n, x.tab.Size()+128*len(x.onames)+1024, x.each, x.v4)
	var id Hash
	copy(id[:], data[len(data)-20:])
	dir := filepath.Dir(x.path)
	crashpoint.Hit()
	f, err := os.CreateTemp(dir, "sharedindex_")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		crashpoint.Hit()
		err = os.Rename(tmp, x.sharedPath(id.String()))
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	// Mapped from the file written, as a shared index read is
	// (sharedTable); the bytes encoded are dropped.
	x.tab = nil
	tab, mapped, err := x.sharedTable(id, false)
	if err != nil {
		if tab, err = index.ReadShared(id, data, false); err != nil {
			return fmt.Errorf("vault: the shared index written does not read back: %w", err)
		}
	}
	x.rebase(tab, id)
	x.tabMap = mapped
	x.fsm = valid
	x.removeOldShared(cfg, id)
	return nil
}

// removeOldShared removes the shared indexes other than keep whose last
// use is older than the expiry, as git does when it writes a shared index
// (a reader that just read the split index naming one still finds it), and
// temporary shared indexes left for over an hour.
func (x *gitIndex) removeOldShared(cfg splitConfig, keep Hash) {
	dir := filepath.Dir(x.path)
	names, _ := filepath.Glob(filepath.Join(dir, "sharedindex[._]*"))
	now := time.Now()
	for _, p := range names {
		base := filepath.Base(p)
		if base == "sharedindex."+keep.String() {
			continue
		}
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		age := now.Sub(fi.ModTime())
		if strings.HasPrefix(base, "sharedindex_") && age > time.Hour ||
			strings.HasPrefix(base, "sharedindex.") && cfg.expire >= 0 && age >= cfg.expire {
			os.Remove(p)
		}
	}
}
