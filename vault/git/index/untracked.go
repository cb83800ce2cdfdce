package index

import (
	"bytes"
	"errors"
	"strings"
)

// Untracked is git's untracked cache, the UNTR extension
// (core.untrackedCache; gitformat-index(5), "Untracked cache", and git's
// dir.c, write_untracked_extension and read_untracked_extension): for each
// folder git status read, the untracked names it found and the folder's
// stat then, so that git status reads again only the folders whose stat
// changed. At 100,000 runs (200,000 folders) it is 14 MB, and git status
// without it reads every folder of the work tree: 18 s on the bench's
// machine, against a stat of each folder with it.
//
// A folder's stat tells git when a file was made or removed in it, not
// when the index took or dropped one; so git, when it adds an entry to
// the index or removes one, forgets what it cached of the entry's folder
// (dir.c, untracked_cache_invalidate_path), and Invalidate does the same
// for the entries quire adds and removes. Everything else is kept as git
// wrote it, byte for byte.
type Untracked struct {
	head []byte // the ident, the exclude files' stat and hashes, dir_flags, the per-folder exclude name
	dirs []untrackedDir
	// stats and hashes hold each folder's stat data (36 bytes) and the
	// hash of its .gitignore (20), as git wrote them.
	stats, hashes [][]byte
}

// untrackedDir is one folder of the cache, in git's depth-first order.
type untrackedDir struct {
	name      string
	untracked []string // as git wrote them; a folder's name ends in "/"
	subs      []int32  // positions of its subfolders in dirs
	valid     bool     // its stat and untracked names can be trusted
	checkOnly bool
	stat      int32 // in stats, -1 when none
	hash      int32 // in hashes, -1 when none
}

// DecodeUntracked reads an UNTR extension's body. What it does not read
// as git writes it is an error; the caller then drops the extension, and
// git builds it again.
func DecodeUntracked(p []byte) (*Untracked, error) {
	if len(p) < 2 || p[len(p)-1] != 0 {
		return nil, errors.New("the untracked cache does not end in a NUL")
	}
	end := len(p) - 1
	off := 0
	n, k := varint(p)
	if k == 0 || uint64(end) < uint64(k)+n {
		return nil, errors.New("the untracked cache's ident is cut")
	}
	off = k + int(n)
	// Two stat data, dir_flags, two hashes, then the exclude name.
	off += 36*2 + 4 + 20*2
	if off > end {
		return nil, errors.New("the untracked cache's header is cut")
	}
	z := bytes.IndexByte(p[off:end], 0)
	if z < 0 {
		return nil, errors.New("the untracked cache's exclude name is cut")
	}
	off += z + 1
	u := &Untracked{head: p[:off]}
	if off == end {
		return u, nil // no folders: git ends it with the NUL alone
	}
	count, k := varint(p[off:end])
	if k == 0 || count > uint64(end-off)/3 {
		return nil, errors.New("the untracked cache's count of folders is wrong")
	}
	off += k
	if count == 0 {
		if off != end {
			return nil, errors.New("bytes follow an untracked cache of no folders")
		}
		return u, nil
	}
	text := string(p[:end]) // one copy; names are cut from it
	u.dirs = make([]untrackedDir, 0, count)
	var read func() (int32, error)
	read = func() (int32, error) {
		if len(u.dirs) >= int(count) {
			return 0, errors.New("the untracked cache holds more folders than it says")
		}
		nu, k := varint(p[off:end])
		if k == 0 {
			return 0, errShort
		}
		off += k
		ns, k := varint(p[off:end])
		if k == 0 || ns > count {
			return 0, errShort
		}
		off += k
		z := bytes.IndexByte(p[off:end], 0)
		if z < 0 {
			return 0, errShort
		}
		i := int32(len(u.dirs))
		u.dirs = append(u.dirs, untrackedDir{name: text[off : off+z], stat: -1, hash: -1})
		off += z + 1
		if nu > uint64(end-off) {
			return 0, errShort
		}
		var names []string
		for j := uint64(0); j < nu; j++ {
			z := bytes.IndexByte(p[off:end], 0)
			if z < 0 {
				return 0, errShort
			}
			names = append(names, text[off:off+z])
			off += z + 1
		}
		u.dirs[i].untracked = names
		subs := make([]int32, 0, ns)
		for j := uint64(0); j < ns; j++ {
			s, err := read()
			if err != nil {
				return 0, err
			}
			subs = append(subs, s)
		}
		u.dirs[i].subs = subs
		return i, nil
	}
	if _, err := read(); err != nil {
		return nil, err
	}
	if len(u.dirs) != int(count) {
		return nil, errors.New("the untracked cache holds fewer folders than it says")
	}
	var bits [3][]bool
	for b := range bits {
		set, k, err := decodeEWAH(p[off:end])
		if err != nil {
			return nil, err
		}
		if len(set) > len(u.dirs) {
			return nil, errors.New("an untracked cache's bitmap marks folders it lacks")
		}
		bits[b] = set
		off += k
	}
	valid, checkOnly, hashed := bits[0], bits[1], bits[2]
	for i := range checkOnly {
		u.dirs[i].checkOnly = checkOnly[i]
	}
	for i, ok := range valid {
		if !ok {
			continue
		}
		if off+36 > end {
			return nil, errShort
		}
		u.dirs[i].valid, u.dirs[i].stat = true, int32(len(u.stats))
		u.stats = append(u.stats, p[off:off+36])
		off += 36
	}
	for i, ok := range hashed {
		if !ok {
			continue
		}
		if off+20 > end {
			return nil, errShort
		}
		u.dirs[i].hash = int32(len(u.hashes))
		u.hashes = append(u.hashes, p[off:off+20])
		off += 20
	}
	if off != end {
		return nil, errors.New("bytes follow the untracked cache's hashes")
	}
	return u, nil
}

// Invalidate forgets what the cache holds of the folder dir ("" the work
// tree's root, else a slash-separated path without a trailing slash), as
// git's invalidate_one_directory does: its stat and its untracked names.
// A folder the cache does not hold has nothing to forget.
func (u *Untracked) Invalidate(dir string) {
	if len(u.dirs) == 0 {
		return
	}
	i := int32(0)
	if dir != "" {
		for _, part := range strings.Split(dir, "/") {
			next := int32(-1)
			for _, s := range u.dirs[i].subs {
				if u.dirs[s].name == part {
					next = s
					break
				}
			}
			if next < 0 {
				return
			}
			i = next
		}
	}
	d := &u.dirs[i]
	d.valid, d.untracked, d.checkOnly = false, nil, false
}

// Append appends the extension's body, as git's write_untracked_extension
// writes it.
func (u *Untracked) Append(buf []byte) []byte {
	buf = append(buf, u.head...)
	if len(u.dirs) == 0 {
		return append(buf, 0)
	}
	buf = appendVarint(buf, uint64(len(u.dirs)))
	var valid, checkOnly, hashed []int
	for i := range u.dirs {
		d := &u.dirs[i]
		if !d.valid {
			// As git's write_one_dir: a folder not valid has no names.
			d.untracked, d.checkOnly = nil, false
		}
		buf = appendVarint(buf, uint64(len(d.untracked)))
		buf = appendVarint(buf, uint64(len(d.subs)))
		buf = append(append(buf, d.name...), 0)
		for _, n := range d.untracked {
			buf = append(append(buf, n...), 0)
		}
		if d.valid {
			valid = append(valid, i)
		}
		if d.checkOnly {
			checkOnly = append(checkOnly, i)
		}
		if d.hash >= 0 {
			hashed = append(hashed, i)
		}
	}
	buf = appendEWAH(buf, valid)
	buf = appendEWAH(buf, checkOnly)
	buf = appendEWAH(buf, hashed)
	for _, i := range valid {
		buf = append(buf, u.stats[u.dirs[i].stat]...)
	}
	for _, i := range hashed {
		buf = append(buf, u.hashes[u.dirs[i].hash]...)
	}
	return append(buf, 0)
}
