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
