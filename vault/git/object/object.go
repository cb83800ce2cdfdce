package object

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"strconv"
)

// Hash is a git object id: the SHA-1 of the object's header and content.
type Hash [20]byte

// ZeroHash is no object: the parent of a first commit, a missing entry.
var ZeroHash Hash

// String is the id in lower-case hex, as git writes it.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// IsZero reports whether h is ZeroHash.
func (h Hash) IsZero() bool { return h == ZeroHash }

var errNotHash = errors.New("not an object id of 40 hex digits")

// ParseHash reads an id of 40 hex digits (either case).
func ParseHash(s string) (Hash, error) {
	var h Hash
	if len(s) != 40 {
		return h, errNotHash
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return Hash{}, errNotHash
	}
	return h, nil
}

// IsHash reports whether s is an id of 40 hex digits.
func IsHash(s string) bool {
	_, err := ParseHash(s)
	return err == nil
}

// Type is an object's type, numbered as a pack numbers it.
type Type byte

const (
	Commit Type = 1
	Tree   Type = 2
	Blob   Type = 3
	Tag    Type = 4
)

var typeNames = [...]string{Commit: "commit", Tree: "tree", Blob: "blob", Tag: "tag"}

// String is the type's name in an object's header.
func (t Type) String() string {
	if t >= Commit && t <= Tag {
		return typeNames[t]
	}
	return "type " + strconv.Itoa(int(t))
}

// ParseType reads a type's name.
func ParseType(s string) (Type, bool) {
	switch s {
	case "commit":
		return Commit, true
	case "tree":
		return Tree, true
	case "blob":
		return Blob, true
	case "tag":
		return Tag, true
	}
	return 0, false
}

// Mode is a tree entry's mode.
type Mode uint32

// The modes git writes in trees.
const (
	Dir        Mode = 0o040000
	Regular    Mode = 0o100644
	Deprecated Mode = 0o100664 // a regular file, as very old git wrote it
	Executable Mode = 0o100755
	Symlink    Mode = 0o120000
	Submodule  Mode = 0o160000
)

// AppendHeader appends an object's header, "<type> <size>\0".
func AppendHeader(buf []byte, t Type, size int) []byte {
	buf = append(buf, t.String()...)
	buf = append(buf, ' ')
	buf = strconv.AppendInt(buf, int64(size), 10)
	return append(buf, 0)
}

// Sum is the id of an object of type t holding content.
func Sum(t Type, content []byte) Hash {
	h := sha1.New()
	var hdr [32]byte
	h.Write(AppendHeader(hdr[:0], t, len(content)))
	h.Write(content)
	var out Hash
	h.Sum(out[:0])
	return out
}
