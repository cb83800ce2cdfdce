package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"quire/ledger"
	"quire/words/refusal"
)

// MaxStdioMessage is the most one MCP message over stdio (one line) may
// hold: 2 MiB, room for a call's 1 MiB of arguments in its envelope.
const MaxStdioMessage = 2 * MaxBody

// JSON-RPC error codes the stdio guard answers with.
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
)

// ServeStdio serves MCP over standard input and output until the client
// goes or ctx ends. Whoever starts the process may do anything the vault
// allows, so it takes no token.
func ServeStdio(ctx context.Context, l *ledger.Ledger) error {
	return serveStdio(ctx, l, os.Stdin, os.Stdout)
}

// serveStdio serves MCP over in and out, one JSON-RPC message a line. The
// go-sdk's stdio transport ends the session at the first line it cannot
// take (one over its limit, or not JSON), so the lines pass through a
// guard first: a line over MaxStdioMessage is read to its end without
// being kept and answered with a JSON-RPC error (Invalid Request, with the
// request's id when the line has one at its top level, and the refusal
// object as its data), a line that is not JSON with a parse error; the
// server keeps serving the lines after.
//
// The end of the input ends the session only once every request read
// before it is answered (or cancelled by the client): the go-sdk would
// drop the answers still being worked out, so `printf … | quire mcp`, a
// script's way, would lose the last call's answer.
func serveStdio(ctx context.Context, l *ledger.Ledger, in io.ReadCloser, out io.Writer) error {
	w := &lockedWriter{w: out, pending: map[string]bool{}}
	w.answered = sync.NewCond(&w.mu)
	g := &lineGuard{r: bufio.NewReaderSize(in, 64<<10), c: in, w: w, max: MaxStdioMessage}
	stop := context.AfterFunc(ctx, func() { w.mu.Lock(); w.done = true; w.answered.Broadcast(); w.mu.Unlock() })
	defer stop()
	return NewMCPServer(l).Run(ctx, &mcp.IOTransport{Reader: g, Writer: w, MaxLineLength: -1})
}

// lockedWriter keeps the guard's answers and the server's from mixing:
// each is one Write of a whole line. It also keeps the ids of the requests
// passed to the server and not yet answered.
type lockedWriter struct {
	mu       sync.Mutex
	w        io.Writer
	pending  map[string]bool // the ids of requests passed on and not answered
	answered *sync.Cond      // signalled when one is answered, or done
	done     bool            // the session's context ended
}

// rpcMessage is what the guard reads of a message: a request has an id
// and a method, a response an id alone; a cancellation names the request.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var m rpcMessage
	if json.Unmarshal(p, &m) == nil && len(m.ID) > 0 && m.Method == "" && l.pending[string(m.ID)] {
		delete(l.pending, string(m.ID))
		l.answered.Broadcast()
	}
	return l.w.Write(p)
}

// passing notes a line the guard passes to the server.
func (l *lockedWriter) passing(line []byte) {
	var m rpcMessage
	if json.Unmarshal(line, &m) != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case len(m.ID) > 0 && m.Method != "":
		l.pending[string(bytes.TrimSpace(m.ID))] = true
	case m.Method == "notifications/cancelled" && len(m.Params.RequestID) > 0:
		delete(l.pending, string(bytes.TrimSpace(m.Params.RequestID)))
		l.answered.Broadcast()
	}
}

// drained waits until every request passed on is answered, or the
// session's context ends.
func (l *lockedWriter) drained() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.pending) > 0 && !l.done {
		l.answered.Wait()
	}
}

func (l *lockedWriter) Close() error { return nil }

// lineGuard passes the lines of r that the server can take and answers
// the others itself.
type lineGuard struct {
	r   *bufio.Reader
	c   io.Closer
	w   *lockedWriter
	max int
	buf []byte // what is left of the line being passed on
}

func (g *lineGuard) Close() error { return g.c.Close() }

func (g *lineGuard) Read(p []byte) (int, error) {
	for len(g.buf) == 0 {
		line, err := g.next()
		if len(line) == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				g.w.drained()
			}
			return 0, err
		}
		g.w.passing(line)
		g.buf = line
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

// next reads lines until one to pass on, answering those it will not.
func (g *lineGuard) next() ([]byte, error) {
	for {
		var line []byte
		var err error
		for {
			var chunk []byte
			chunk, err = g.r.ReadSlice('\n')
			line = append(line, chunk...)
			if len(line) > g.max {
				err = g.skip(line, err)
				line = nil
				break
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if line == nil {
			if err != nil {
				return nil, err
			}
			continue
		}
		t := bytes.TrimSpace(line)
		if len(t) > 0 && !json.Valid(t) {
			g.answer(nil, rpcParseError, refusal.New(refusal.InvalidInput, "the message is not JSON; quire mcp takes one JSON-RPC message a line"))
			if err != nil {
				return nil, err
			}
			continue
		}
		return line, err
	}
}

// skip reads an oversized line to its end, keeping only its top-level id,
// and answers it. err is the error of the read that ended head.
func (g *lineGuard) skip(head []byte, err error) error {
	var sc idScanner
	sc.feed(head)
	n := len(head)
	for errors.Is(err, bufio.ErrBufferFull) {
		var chunk []byte
		chunk, err = g.r.ReadSlice('\n')
		n += len(chunk)
		sc.feed(chunk)
	}
	g.answer(sc.id(), rpcInvalidRequest, refusal.New(refusal.InvalidInput,
		"the message takes more than %d bytes (2 MiB), the most quire mcp reads in one message; nothing of it was done, and a call's arguments hold at most 1 MiB", g.max))
	return err
}

func (g *lineGuard) answer(id json.RawMessage, code int, r *refusal.Error) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": code, "message": r.Message, "data": r.Object()}})
	if err != nil {
		return
	}
	g.w.Write(append(b, '\n'))
}

// idScanner finds the id of a JSON-RPC message as its bytes go by, keeping
// no more than the id: the value of the key "id" of the top-level object,
// a number or a string of at most 200 bytes.
type idScanner struct {
	depth      int
	inStr, esc bool
	// expectKey: the next string at depth 1 is a key; pendingKey: the
	// string being read is one.
	expectKey, pendingKey bool
	key                   []byte
	keyTooLong            bool
	lastKey               string
	// capturing: the bytes are the id's value, into val.
	capturing, found, valTooLarge bool
	val                           []byte
}

const maxIDBytes = 200

func (s *idScanner) feed(b []byte) {
	for _, c := range b {
		if s.capturing {
			if len(s.val) < maxIDBytes {
				s.val = append(s.val, c)
			} else {
				s.valTooLarge = true
			}
		}
		if s.inStr {
			switch {
			case s.esc:
				s.esc = false
			case c == '\\':
				s.esc = true
			case c == '"':
				s.inStr = false
				if s.pendingKey {
					s.pendingKey = false
					if !s.keyTooLong {
						s.lastKey = string(s.key)
					} else {
						s.lastKey = ""
					}
				}
				continue
			}
			if s.pendingKey {
				if len(s.key) < 16 {
					s.key = append(s.key, c)
				} else {
					s.keyTooLong = true
				}
			}
			continue
		}
		switch c {
		case '"':
			s.inStr = true
			if s.depth == 1 && s.expectKey {
				s.pendingKey, s.expectKey = true, false
				s.key, s.keyTooLong = s.key[:0], false
			}
		case '{', '[':
			s.depth++
			if s.depth == 1 && c == '{' {
				s.expectKey = true
			}
		case '}', ']':
			if s.depth == 1 {
				s.endValue()
			}
			s.depth--
		case ',':
			if s.depth == 1 {
				s.endValue()
				s.expectKey = true
			}
		case ':':
			if s.depth == 1 && s.lastKey == "id" && !s.found {
				s.capturing, s.val = true, s.val[:0]
			}
		}
	}
}

// endValue ends the value being captured at a ',' or the closing '}'.
func (s *idScanner) endValue() {
	if !s.capturing {
		return
	}
	s.capturing = false
	if n := len(s.val); n > 0 && !s.valTooLarge {
		s.val = s.val[:n-1] // the ',' or '}' that ended it
		s.found = true
	}
}

// id is the message's id as JSON, or nil when it has none this server can
// answer to.
func (s *idScanner) id() json.RawMessage {
	if !s.found {
		return nil
	}
	t := bytes.TrimSpace(s.val)
	var v any
	if json.Unmarshal(t, &v) != nil {
		return nil
	}
	switch v.(type) {
	case string, float64:
		return json.RawMessage(bytes.Clone(t))
	}
	return nil
}
