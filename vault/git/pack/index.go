package pack

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"sort"

	"quire/vault/git/object"
)

// The pack index of version 2 (gitformat-pack(5), "Version 2 pack-*.idx
// files support packs larger than 4 GiB"): the magic and version, a
// fan-out table of 256 cumulative counts by an id's first byte, the ids
// sorted, a CRC-32 of each entry's bytes in the pack, each entry's offset
// (4 bytes, or with the high bit set the position of an 8-byte one in the
// table that follows), the pack's checksum and the index's own.
var idxMagic = []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}

const idxHeader = 8 + 256*4

// Index is a pack's index of version 2, read in place from its bytes (a
// mapped file, for the reader of packs).
type Index struct {
	data []byte
	n    int
}

// ParseIndex reads an index of version 2 from its bytes, which it keeps.
// An index of another version is refused: the caller reads its pack some
// other way.
func ParseIndex(data []byte) (*Index, error) {
	if len(data) < idxHeader || !bytes.Equal(data[:8], idxMagic) {
		return nil, errors.New("not a pack index of version 2")
	}
	prev := uint32(0)
	for i := 0; i < 256; i++ {
		c := binary.BigEndian.Uint32(data[8+i*4:])
		if c < prev {
			return nil, errors.New("a pack index whose fan-out table goes down")
		}
		prev = c
	}
	n := int(prev)
	if n > (len(data)-idxHeader-40)/28 {
		return nil, errors.New("a pack index cut short")
	}
	return &Index{data: data, n: n}, nil
}

// Len is the count of objects.
func (x *Index) Len() int { return x.n }

// Bytes is what the index was read from.
func (x *Index) Bytes() []byte { return x.data }

// Find is the offset of an object in the pack, -1 when it has none.
func (x *Index) Find(id object.Hash) int64 {
	fan := x.data[8:]
	lo := 0
	if id[0] > 0 {
		lo = int(binary.BigEndian.Uint32(fan[(int(id[0])-1)*4:]))
	}
	hi := int(binary.BigEndian.Uint32(fan[int(id[0])*4:]))
	names := x.data[idxHeader:]
	i := lo + sort.Search(hi-lo, func(k int) bool { return bytes.Compare(names[(lo+k)*20:(lo+k)*20+20], id[:]) >= 0 })
	if i >= hi || !bytes.Equal(names[i*20:i*20+20], id[:]) {
		return -1
	}
	return x.Offset(i)
}

// ID is the id of the ith object.
func (x *Index) ID(i int) object.Hash {
	var id object.Hash
	copy(id[:], x.data[idxHeader+i*20:])
	return id
}

// CRC is the CRC-32 of the ith object's bytes in the pack.
func (x *Index) CRC(i int) uint32 {
	return binary.BigEndian.Uint32(x.data[idxHeader+x.n*20+i*4:])
}

// Offset is where the ith object starts in the pack; -1 when the index
// points past its own table of large offsets.
func (x *Index) Offset(i int) int64 {
	off := binary.BigEndian.Uint32(x.data[idxHeader+x.n*24+i*4:])
	if off&(1<<31) == 0 {
		return int64(off)
	}
	at := idxHeader + x.n*28 + int(off&^(1<<31))*8
	if at+8 > len(x.data)-40 {
		return -1
	}
	if o := int64(binary.BigEndian.Uint64(x.data[at:])); o >= 0 {
		return o
	}
	return -1
}

// IndexEntry is one object for the index EncodeIndex writes.
type IndexEntry struct {
	ID     object.Hash
	Offset uint64
	CRC    uint32
}

// EncodeIndex writes the index of version 2 of a pack whose checksum is
// sum and whose objects are entries (sorted here by id; each id once).
func EncodeIndex(w io.Writer, entries []IndexEntry, sum object.Hash) error {
	slices.SortFunc(entries, func(a, b IndexEntry) int { return bytes.Compare(a.ID[:], b.ID[:]) })
	h := sha1.New()
	bw := bufio.NewWriter(io.MultiWriter(w, h))
	be := binary.BigEndian
	bw.Write(idxMagic)
	var b [8]byte
	k := 0
	for first := 0; first < 256; first++ {
		for k < len(entries) && int(entries[k].ID[0]) == first {
			k++
		}
		bw.Write(be.AppendUint32(b[:0], uint32(k)))
	}
	for _, e := range entries {
		bw.Write(e.ID[:])
	}
	for _, e := range entries {
		bw.Write(be.AppendUint32(b[:0], e.CRC))
	}
	var large []uint64
	for _, e := range entries {
		off := uint32(e.Offset)
		if e.Offset >= 1<<31 {
			off = 1<<31 | uint32(len(large))
			large = append(large, e.Offset)
		}
		bw.Write(be.AppendUint32(b[:0], off))
	}
	for _, o := range large {
		bw.Write(be.AppendUint64(b[:0], o))
	}
	bw.Write(sum[:])
	if err := bw.Flush(); err != nil {
		return err
	}
	_, err := w.Write(h.Sum(nil))
	return err
}
