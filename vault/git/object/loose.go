package object

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// WriteLoose writes a loose object's inflated stream, its header then its
// content, into zw: the caller's zlib writer, which it closes.
func WriteLoose(zw io.Writer, t Type, content []byte) error {
	var hdr [32]byte
	if _, err := zw.Write(AppendHeader(hdr[:0], t, len(content))); err != nil {
		return err
	}
	_, err := zw.Write(content)
	return err
}

// zlibRatio is the most zlib inflates one byte into (a stream of a single
// repeated byte): a header that says more than its stream can hold is
// refused before its buffer is made.
const zlibRatio = 1032

// ReadLoose decodes a loose object from its file's bytes as read from r
// (at most max of them; the content's size is checked against what so
// many can inflate to).
func ReadLoose(r io.Reader, max int64) (Type, []byte, error) {
	zr, err := zlib.NewReader(r)
	if err != nil {
		return 0, nil, err
	}
	defer zr.Close()
	br := bufio.NewReaderSize(zr, 64)
	hdr, err := br.ReadSlice(0)
	if err != nil {
		return 0, nil, errors.New("no header")
	}
	t, n, err := parseHeader(hdr[:len(hdr)-1])
	if err != nil {
		return 0, nil, err
	}
	if n > max*zlibRatio+64 {
		return 0, nil, fmt.Errorf("its header says %d bytes, more than its file can hold", n)
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(br, data); err != nil {
		return 0, nil, err
	}
	if k, _ := br.Read(make([]byte, 1)); k != 0 {
		return 0, nil, errors.New("longer than its header says")
	}
	return t, data, nil
}

// ReadLooseFile reads the loose object in file whole, into a buffer of the
// size its header gives.
func ReadLooseFile(file string) (Type, []byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, nil, err
	}
	return ReadLoose(bufio.NewReaderSize(f, 32<<10), fi.Size())
}

// ReadLooseFileToHash is ReadLooseFile for a caller that checks the
// object's id against what it reads (compaction): an object whose zlib
// stream is stored blocks (how quire writes a large tree) is copied out of
// them as they are, without zlib's Adler-32, which the id's SHA-1 checks
// more strongly. Inflating and summing a 7 MB tree (playbook-runs/ at
// 100,000 runs) was half of a compaction's time there. Any other stream is
// inflated, as ReadLooseFile does.
func ReadLooseFileToHash(file string) (Type, []byte, error) {
	// raw is read for this call alone: its stored blocks are read in place.
	raw, err := os.ReadFile(file)
	if err != nil {
		return 0, nil, err
	}
	return readLooseToHash(raw)
}

func readLooseToHash(raw []byte) (Type, []byte, error) {
	if t, data, ok := readStored(raw); ok {
		return t, data, nil
	}
	return ReadLoose(bytes.NewReader(raw), int64(len(raw)))
}

// readStored reads a loose object's zlib stream made of stored blocks
// alone, in place: the content it answers is raw's own bytes, moved, and
// raw is left as it was only when it answers not ok (the caller then
// inflates it).
func readStored(raw []byte) (Type, []byte, bool) {
	if len(raw) < 2+5+4 || raw[0]&0x0f != 8 || raw[0]>>4 > 7 || (uint(raw[0])<<8|uint(raw[1]))%31 != 0 || raw[1]&0x20 != 0 {
		return 0, nil, false // not deflate, a bad header check, or a preset dictionary
	}
	// The stream's length, block by block, before anything is copied.
	n := 0
	for p := 2; ; {
		if p+5 > len(raw) || raw[p]&0x06 != 0 { // a compressed block
			return 0, nil, false
		}
		k := int(raw[p+1]) | int(raw[p+2])<<8
		if raw[p+3] != ^raw[p+1] || raw[p+4] != ^raw[p+2] || p+5+k > len(raw) {
			return 0, nil, false
		}
		n += k
		final := raw[p]&1 != 0
		p += 5 + k
		if final {
			if p+4 != len(raw) {
				return 0, nil, false
			}
			break
		}
	}
	// The object's header lies in the first block (quire's blocks are 64
	// KB; a stream that splits it is inflated by the caller, raw as it
	// was): checked before raw is overwritten.
	k0 := int(raw[3]) | int(raw[4])<<8
	nul := bytes.IndexByte(raw[7:7+min(k0, 32)], 0)
	if nul < 0 {
		return 0, nil, false
	}
	t, size, err := parseHeader(raw[7 : 7+nul])
	if err != nil || size != int64(n-nul-1) {
		return 0, nil, false
	}
	// The blocks' content moved down over their heads, in raw itself: a
	// 7.8 MB tree copied out was as much again for the collector at each
	// compaction, whose cycles the slowest boundaries met.
	stream := raw[:0]
	for p := 2; ; {
		k := int(raw[p+1]) | int(raw[p+2])<<8
		final := raw[p]&1 != 0
		stream = append(stream, raw[p+5:p+5+k]...) // copy is memmove: the ranges may overlap
		p += 5 + k
		if final {
			break
		}
	}
	return t, stream[nul+1:], true
}

// LooseHeader reads the type and size of the loose object in file from the
// start of its stream.
func LooseHeader(file string) (Type, int64, error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	zr, err := zlib.NewReader(bufio.NewReaderSize(f, 512))
	if err != nil {
		return 0, 0, err
	}
	var hdr [32]byte
	n, _ := io.ReadFull(zr, hdr[:])
	nul := bytes.IndexByte(hdr[:n], 0)
	if nul < 0 {
		return 0, 0, errors.New("no header")
	}
	return parseHeader(hdr[:nul])
}

func parseHeader(hdr []byte) (Type, int64, error) {
	typ, size, _ := bytes.Cut(hdr, []byte{' '})
	t, ok := ParseType(string(typ))
	n, err := strconv.ParseInt(string(size), 10, 64)
	if !ok || err != nil || n < 0 {
		return 0, 0, fmt.Errorf("a header %q", hdr)
	}
	return t, n, nil
}
