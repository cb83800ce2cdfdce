package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"quire/ledger"
)

// Live updates: a page open in a browser holds a Server-Sent Events
// stream, GET /live?playbook=<id> (every playbook when left out), and is
// told "change" with {"playbook","what"} whenever the ledger records an
// event of that playbook (what: "event"), whenever the keeper's views of
// one of its pages move (what: "views"), and, for events another process
// recorded, when the playbook's history grew since the last look (a look
// a second while a page is open). live.js then fetches the page again and
// swaps its live parts.

// hub fans the ledger's wake-ups out to the open streams.
type hub struct {
	l      *ledger.Ledger
	mu     sync.Mutex
	subs   map[chan change]string // a stream's channel → its playbook ("" every one)
	seen   map[string]int64       // a playbook's history length at the last look
	stop   func()
	done   chan struct{}
	closed bool
}

type change struct {
	Playbook string `json:"playbook"`
	What     string `json:"what"`
}

func newHub(l *ledger.Ledger) *hub {
	h := &hub{l: l, subs: map[chan change]string{}, seen: map[string]int64{}, done: make(chan struct{})}
	h.stop = l.Watch(func(playbook, what string) { h.tell(change{playbook, what}) })
	go h.look()
	return h
}

func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.closed = true
		h.stop()
		close(h.done)
	}
}

// tell hands a change to every stream that follows its playbook; a stream
// that has not taken the last one yet misses nothing it needs, since the
// page fetches itself whole.
func (h *hub) tell(c change) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.subs) == 0 {
		return
	}
	if c.What == ledger.WatchEvent {
		if n, err := h.l.HistoryLen(c.Playbook); err == nil {
			h.seen[c.Playbook] = n
		}
	}
	for ch, pb := range h.subs {
		if pb == "" || pb == c.Playbook {
			select {
			case ch <- c:
			default:
			}
		}
	}
}

func (h *hub) subscribe(playbook string) (chan change, func()) {
	ch := make(chan change, 1)
	h.mu.Lock()
	h.subs[ch] = playbook
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs, ch)
		h.mu.Unlock()
	}
}

// look finds, once a second while a page is open, the playbooks whose
// history grew by another process's hand.
func (h *hub) look() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-h.done:
			return
		case <-t.C:
		}
		h.mu.Lock()
		want := map[string]bool{}
		for _, pb := range h.subs {
			want[pb] = true
		}
		h.mu.Unlock()
		if len(want) == 0 {
			continue
		}
		var pbs []string
		if want[""] {
			all, err := h.l.Call(context.Background(), "list_playbooks", nil)
			if err == nil {
				for _, p := range all.([]*ledger.Playbook) {
					pbs = append(pbs, p.Playbook)
				}
			}
		}
		for pb := range want {
			if pb != "" {
				pbs = append(pbs, pb)
			}
		}
		for _, pb := range pbs {
			n, err := h.l.HistoryLen(pb)
			if err != nil {
				continue
			}
			h.mu.Lock()
			old, known := h.seen[pb]
			h.seen[pb] = n
			h.mu.Unlock()
			if known && n > old {
				h.tell(change{pb, ledger.WatchEvent})
			}
		}
	}
}

// live serves the stream of changes.
func (w *Web) live(rw http.ResponseWriter, r *http.Request) {
	c, err := w.who(rw, r)
	if err != nil {
		http.Error(rw, err.Error(), statusOf(err))
		return
	}
	pb := r.URL.Query().Get("playbook")
	// The stream says only that something changed, but it is still the
	// playbook's: the token must read it.
	if pb != "" {
		_, err = w.call(r, c, "get_playbook", map[string]any{"playbook": pb})
	} else {
		_, err = w.call(r, c, "list_playbooks", map[string]any{})
	}
	if err != nil {
		http.Error(rw, err.Error(), statusOf(err))
		return
	}
	if n, err := w.l.HistoryLen(pb); err == nil && pb != "" {
		w.hub.mu.Lock()
		if _, known := w.hub.seen[pb]; !known {
			w.hub.seen[pb] = n
		}
		w.hub.mu.Unlock()
	}
	// The stream ends when its token stops being taken (Options.Stream).
	ctx := r.Context()
	if w.opts.Stream != nil {
		var done func()
		ctx, done = w.opts.Stream(ctx, r, c.Token)
		defer done()
	}
	rc := http.NewResponseController(rw)
	rc.SetWriteDeadline(time.Time{}) // the stream lives as long as the page
	h := rw.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	ch, unsubscribe := w.hub.subscribe(pb)
	defer unsubscribe()
	fmt.Fprint(rw, "retry: 1000\n\n")
	rc.Flush()
	ping := time.NewTicker(15 * time.Second)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.hub.done:
			return
		case <-ping.C:
			fmt.Fprint(rw, ": ping\n\n")
		case ch := <-ch:
			b, _ := json.Marshal(ch)
			fmt.Fprintf(rw, "event: change\ndata: %s\n\n", b)
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}
