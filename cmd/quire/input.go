package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"quire/words/refusal"
)

// Every flag that takes JSON or text also takes a file, as curl does:
// @FILE reads the flag's value from FILE, @- from standard input, and @@
// begins a value that is an @ and what follows. A JSON flag also reads
// standard input from a lone -. So no one has to escape YAML into JSON on
// a command line: `--output @out.json`, `quire definition save close.yaml`.

const fileHint = "; @FILE reads a file, @- standard input"

// readAt reads what a flag's value names: the value as it is, or the file
// (or standard input) after @. from says where it came from, for messages:
// "" for the value itself.
func (e *env) readAt(flag, v string, dash bool) (text, from string, err error) {
	switch {
	case strings.HasPrefix(v, "@@"):
		return v[1:], "", nil
	case v == "@-" || (dash && v == "-"):
		data, err := io.ReadAll(e.in)
		if err != nil {
			return "", "", err
		}
		return string(data), "standard input", nil
	case strings.HasPrefix(v, "@"):
		data, err := os.ReadFile(v[1:])
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return "", "", refusal.Invalid(flag, "%s cannot read %s: %v", flag, v[1:], err)
		}
		return string(data), v[1:], nil
	}
	return v, "", nil
}

// text is a text flag's value, with @FILE read.
func (e *env) text(c *cli.Context, name string) (string, error) {
	s, _, err := e.readAt("--"+name, c.String(name), false)
	return s, err
}

// jsonValue is a JSON flag's value, checked: malformed JSON is refused
// naming the flag and where in it (line and column), not passed on to
// fail somewhere else. Left out, it is "" (which callAndShow drops).
func (e *env) jsonValue(c *cli.Context, name string) (any, error) {
	if !c.IsSet(name) && c.String(name) == "" {
		return "", nil
	}
	raw, err := e.jsonBytes("--"+name, c.String(name))
	if err != nil {
		return nil, err
	}
	return json.RawMessage(raw), nil
}

// jsonBytes reads and checks one JSON value of a flag.
func (e *env) jsonBytes(flag, v string) ([]byte, error) {
	s, from, err := e.readAt(flag, v, true)
	if err != nil {
		return nil, err
	}
	if err := checkJSONValue(flag, from, []byte(s)); err != nil {
		return nil, err
	}
	return []byte(s), nil
}

// checkJSON refuses text that is not one JSON value, saying where.
func checkJSONValue(flag, from string, data []byte) error {
	in := "the JSON of " + flag
	if from != "" {
		in += " (from " + from + ")"
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return refusal.At(refusal.InvalidInput, flag, "%s is empty", in)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var v json.RawMessage
	err := dec.Decode(&v)
	if err == nil {
		if _, more := dec.Token(); more != io.EOF {
			off := dec.InputOffset()
			for off < int64(len(data)) && strings.ContainsRune(" \t\r\n", rune(data[off])) {
				off++
			}
			line, col := lineCol(data, off)
			return refusal.At(refusal.InvalidInput, flag, "%s is malformed at line %d, column %d (byte %d): more than one JSON value", in, line, col, off+1)
		}
		return nil
	}
	var se *json.SyntaxError
	// off is the index of the byte at fault: the one the decoder stopped
	// at, or the end for a value cut short.
	off := int64(len(data))
	msg := err.Error()
	if errors.As(err, &se) {
		off = max(se.Offset-1, 0)
	} else if errors.Is(err, io.ErrUnexpectedEOF) {
		msg = "it ends before the value does"
	}
	line, col := lineCol(data, off)
	return refusal.At(refusal.InvalidInput, flag, "%s is malformed at line %d, column %d (byte %d): %s", in, line, col, off+1, msg)
}

// lineCol is the line and column (from 1) of the byte at off.
func lineCol(data []byte, off int64) (int, int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - bytes.LastIndexByte(before, '\n')
	if col < 1 {
		col = 1
	}
	return line, col
}

// textArgs is a command's TEXT argument: its words joined, - (or @-) for
// standard input, @FILE for a file.
func (e *env) textArgs(c *cli.Context) (string, error) {
	s := strings.Join(c.Args().Slice(), " ")
	t, _, err := e.readAt("TEXT", s, true)
	return t, err
}

// jsonUsage is the help of a JSON flag.
func jsonUsage(what string) string {
	return what + " as JSON" + fileHint + " (or -)"
}

// textUsage is the help of a text flag.
func textUsage(what string) string {
	return what + fileHint
}
