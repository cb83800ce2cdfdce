package serve

import (
	"context"
	"sync"
	"time"
)

// Streams. A stream (the pages' GET /live, MCP's standalone GET /mcp)
// lives as long as its client holds it, far past the request that
// authenticated it. So the server keeps the streams opened with a token,
// and ends each one within streamLook of its token no longer being taken:
// revoked (by this server or by any other process, such as quire token
// revoke from the CLI, since quire.yaml is what the look reads), expired,
// or, for a stream opened without a token on a server that had none,
// the vault's first token made. The client that opens it again is
// refused as any request is.

// streamLook is how often the open streams' tokens are looked at again.
const streamLook = 250 * time.Millisecond

type streams struct {
	mu   sync.Mutex
	open map[*heldStream]struct{}
	// looking says the goroutine that looks is running; it leaves when
	// no stream is open.
	looking bool
}

type heldStream struct {
	header string // the Authorization header it was opened with
	cancel context.CancelFunc
}

// hold ties a stream to the Authorization header that opened it (""
// for none): the context answered ends when the header's token is no
// longer taken, or when ctx ends. done forgets the stream.
func (s *server) hold(ctx context.Context, header string) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	h := &heldStream{header: header, cancel: cancel}
	st := &s.streams
	st.mu.Lock()
	if st.open == nil {
		st.open = map[*heldStream]struct{}{}
	}
	st.open[h] = struct{}{}
	if !st.looking {
		st.looking = true
		go s.lookAtStreams()
	}
	st.mu.Unlock()
	return ctx, func() {
		st.mu.Lock()
		delete(st.open, h)
		st.mu.Unlock()
		cancel()
	}
}

// lookAtStreams ends, every streamLook, the streams whose token is no
// longer taken, until none is open.
func (s *server) lookAtStreams() {
	t := time.NewTicker(streamLook)
	defer t.Stop()
	for range t.C {
		st := &s.streams
		st.mu.Lock()
		if len(st.open) == 0 {
			st.looking = false
			st.mu.Unlock()
			return
		}
		held := make([]*heldStream, 0, len(st.open))
		for h := range st.open {
			held = append(held, h)
		}
		st.mu.Unlock()
		for _, h := range held {
			if _, err := s.identify(h.header, false); err != nil && refused(err) {
				h.cancel()
			}
		}
	}
}
