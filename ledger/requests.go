package ledger

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"sync"

	"quire/ledger/history"
	"quire/vault"
	"quire/words/event"
	"quire/words/refusal"
)

// Request ids make a retry safe: every writing operation takes an optional
// request_id (HTTP: the Idempotency-Key header), and a call that repeats
// an id answers what the first call answered and writes nothing.
//
//   - Scope: a request id is one playbook's (the operations without a
//     playbook share the organization's scope). The same id with another
//     operation or other arguments is refused (conflict at /request_id).
//   - Window: as long as the vault keeps them. The answers are kept in
//     .quire/requests/ (one small file per id, named by the SHA-256 of scope
//     and id: a lookup is one open, never a scan). The id also goes into
//     the event line of every operation that writes one (run_definition,
//     record_event, end_run, transition_run), so should .quire/ be lost, or
//     the process die between the line and its answer's file, the answer is
//     made again from the line: the history is read from the last seq filed
//     (.quire/requests/<playbook>.filed), once, before the next lookup.
//   - Only successes are kept: a refused call wrote nothing, and its retry
//     is judged anew.
//   - The operations that write no event line of the run (append_thread,
//     make_comment, resolve_comment, the saves of definitions, projects and
//     playbooks, mark_activity_seen) keep their answer in .quire/requests/
//     inside their write transaction, before its commit, and the write is
//     undone by the next writer should it stop before that (tx.go's
//     settle, vault.Undoable): the answer and the effect are there
//     together or not at all, at every point a writer can stop. A deleted
//     .quire/ forgets their ids. put_artifact, retire_definition and
//     repair_vault are idempotent: their retry does again what is done.
//   - Calls with one id at once wait for each other in one process; in two
//     processes, every write looks the id up again under the vault's lock,
//     so one of them writes.
const requestsDir = vault.QuireDir + "/requests"

// maxRequestID is the longest request id taken.
const maxRequestID = 200

// stored is one kept answer.
type stored struct {
	Op     string          `json:"op"`
	Digest string          `json:"digest,omitempty"` // of the arguments; "" when made again from a line
	Answer json.RawMessage `json:"answer"`
}

// requestLocks let calls with one request id wait for each other in one
// ledger: an id's lock lives while a call holds or waits for it, so the
// map holds the ids of the calls in flight, not every id ever seen.
type requestLocks struct {
	mu sync.Mutex
	m  map[string]*requestLock
}

type requestLock struct {
	sync.Mutex
	refs int
}

// lock takes the lock of key and answers its unlock.
func (r *requestLocks) lock(key string) (unlock func()) {
	r.mu.Lock()
	if r.m == nil {
		r.m = map[string]*requestLock{}
	}
	k := r.m[key]
	if k == nil {
		k = &requestLock{}
		r.m[key] = k
	}
	k.refs++
	r.mu.Unlock()
	k.Lock()
	return func() {
		k.Unlock()
		r.mu.Lock()
		if k.refs--; k.refs == 0 {
			delete(r.m, key)
		}
		r.mu.Unlock()
	}
}

// requestIDField is the index of the RequestID field of an operation's
// arguments, or -1.
func requestIDField(t reflect.Type) int {
	if f, ok := t.FieldByName("RequestID"); ok && f.Type.Kind() == reflect.String && len(f.Index) == 1 {
		return f.Index[0]
	}
	return -1
}

// withRequestID wraps a handler so a repeated request id answers the first
// answer.
func withRequestID[A any, R any](name string, h func(ctx context.Context, l *Ledger, a *A) (R, error)) func(ctx context.Context, l *Ledger, a *A) (R, error) {
	field := requestIDField(reflect.TypeFor[A]())
	if field < 0 {
		return h
	}
	return func(ctx context.Context, l *Ledger, a *A) (R, error) {
		var zero R
		v := reflect.ValueOf(a).Elem()
		id := v.Field(field).String()
		if id == "" {
			return h(ctx, l, a)
		}
		if len(id) > maxRequestID || strings.TrimSpace(id) != id || strings.IndexFunc(id, func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0 {
			return zero, refusal.Invalid("/request_id", "a request id is 1 to %d printable characters without spaces at its ends", maxRequestID)
		}
		scope := ""
		if f := v.FieldByName("Playbook"); f.IsValid() && f.Kind() == reflect.String {
			scope = f.String()
		}
		digest := argsDigest(name, v, field)
		req := &request{scope: scope, id: id, op: name, digest: digest}
		ctx = context.WithValue(ctx, requestKey{}, req)
		defer l.requests.lock(scope + "\x00" + id)()
		if scope != "" {
			l.fileRequests(scope, l.readHistory)
		}
		if s, ok := l.lookupRequest(scope, id); ok {
			if s.Op != name || (s.Digest != "" && s.Digest != digest) {
				what := "other arguments"
				if s.Op != name {
					what = "the operation " + s.Op
				}
				return zero, refusal.New(refusal.Conflict, "request_id %q was used before with %s; a retry repeats its call exactly, and a new call takes a new id", id, what)
			}
			var out R
			if err := json.Unmarshal(s.Answer, &out); err != nil {
				return zero, err
			}
			return out, nil
		}
		out, err := h(ctx, l, a)
		var rep *repeated
		if errors.As(err, &rep) {
			// Another process wrote this id's line, or kept its answer,
			// while this call waited for the lock.
			if rep.s.Op != name || (rep.s.Digest != "" && rep.s.Digest != digest) {
				what := "other arguments"
				if rep.s.Op != name {
					what = "the operation " + rep.s.Op
				}
				return zero, refusal.New(refusal.Conflict, "request_id %q was used before with %s; a retry repeats its call exactly, and a new call takes a new id", id, what)
			}
			var out R
			if err := json.Unmarshal(rep.s.Answer, &out); err != nil {
				return zero, err
			}
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if raw, err := json.Marshal(out); err == nil && !bytes.Equal(raw, req.kept) {
			// The write's own transaction may have kept an answer
			// already (settle): this one, made after its commit, tells
			// whether the commit was made.
			l.keepRequest(scope, id, stored{Op: name, Digest: digest, Answer: raw}, true)
		}
		return out, nil
	}
}

func argsDigest(name string, v reflect.Value, field int) string {
	c := reflect.New(v.Type()).Elem()
	c.Set(v)
	c.Field(field).SetString("")
	raw, _ := json.Marshal(c.Interface())
	sum := sha256.Sum256(append([]byte(name+"\x00"), raw...))
	return hex.EncodeToString(sum[:])
}

func (l *Ledger) requestPath(scope, id string) string { return l.v.Abs(l.requestRel(scope, id)) }

// requestRel is where the answer of a request id is kept, relative to the
// vault.
func (l *Ledger) requestRel(scope, id string) string {
	sum := sha256.Sum256([]byte(scope + "\x00" + id))
	h := hex.EncodeToString(sum[:])
	return path.Join(requestsDir, h[:2], h[2:]+".json")
}

func (l *Ledger) lookupRequest(scope, id string) (stored, bool) {
	var s stored
	data, err := os.ReadFile(l.requestPath(scope, id))
	if err != nil || json.Unmarshal(data, &s) != nil || s.Op == "" {
		return s, false
	}
	return s, true
}

// keepRequest files an answer. .quire/ is derived state: should this fail,
// the id of an event-writing call is still found in its line.
// With replace, an answer kept already is replaced (the same call's, made
// again after its commit); without, the first answer stays.
func (l *Ledger) keepRequest(scope, id string, s stored, replace bool) error {
	p := l.requestPath(scope, id)
	if _, err := os.Stat(p); err == nil && !replace {
		return nil // the first answer stays
	}
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return vault.WriteAtomic(p, data)
}

// request is a call with a request id, as its handler's context carries
// it (withRequestID) to its write transaction.
type request struct {
	scope, id, op, digest string
	kept                  []byte // the answer its transaction kept (settle)
}

type requestKey struct{}

// requestIn is the call's request, or nil when it has no request id.
func requestIn(ctx context.Context) *request {
	r, _ := ctx.Value(requestKey{}).(*request)
	return r
}

// fileRequests reads the playbook's history from the last seq filed and
// files the request ids its lines carry whose answers are not kept: a
// process that died between the line and its answer, or a .quire/ made
// anew. Each line is read once. historyOf is how the caller reads the
// history: l.readHistory, or tx.historyOf under the lock.
func (l *Ledger) fileRequests(playbook string, historyOf func(string) (*history.History, error)) {
	if checkPlaybookID(playbook) != nil {
		return
	}
	h, err := historyOf(playbook)
	if err != nil {
		return
	}
	mark := l.v.Abs(path.Join(requestsDir, playbook+".filed"))
	var from int64
	if data, err := os.ReadFile(mark); err == nil && len(data) == 8 {
		from = int64(binary.BigEndian.Uint64(data))
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return
	}
	count := h.Len()
	if from >= count {
		return
	}
	start := from
pages:
	for from < count {
		recs, err := h.Page(from, 1000)
		if err != nil || len(recs) == 0 {
			break
		}
		for i := range recs {
			ln := &recs[i].Line
			if ln.RequestID != "" {
				if _, ok := l.lookupRequest(playbook, ln.RequestID); !ok {
					s, ok := l.answerOfLine(playbook, ln)
					if !ok && event.IsRunType(ln.Event) && ln.Run != "" {
						// Its answer cannot be made yet (a run whose
						// writer stopped before its index line, which
						// the next writer adds): the mark stays before
						// it, so it is read again.
						break pages
					}
					if ok {
						l.keepRequest(playbook, ln.RequestID, s, false)
					}
				}
			}
			from = recs[i].Seq
		}
	}
	if from == start {
		return
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(from))
	if os.MkdirAll(filepath.Dir(mark), 0o755) == nil {
		_ = vault.WriteAtomic(mark, b[:])
	}
}

// answerOfLine makes again the answer of the call that wrote a line: the
// event for record_event, the run as it stood after the line for the
// others.
func (l *Ledger) answerOfLine(playbook string, ln *event.Line) (stored, bool) {
	op := "record_event"
	switch ln.Event {
	case event.RunCreated:
		op = "run_definition"
	case event.RunSucceeded, event.RunFailed, event.RunRejected:
		op = "end_run"
	case event.PauseStarted, event.PauseResumed, event.Archived:
		op = "transition_run"
	}
	if !event.IsRunType(ln.Event) || ln.Run == "" {
		return stored{}, false
	}
	var answer any
	if op == "record_event" {
		ev := eventOf(playbook, ln)
		answer = &ev
	} else {
		e, f, err := l.runFolder(playbook, ln.Run)
		if err != nil {
			return stored{}, false
		}
		st, err := f.Derive(ln.ID)
		if err != nil {
			return stored{}, false
		}
		answer = runOf(e, st)
	}
	raw, err := json.Marshal(answer)
	if err != nil {
		return stored{}, false
	}
	return stored{Op: op, Answer: raw}, true
}

// repeated is what a write answers, under the lock, when its request id's
// line is already in the history.
type repeated struct{ s stored }

func (r *repeated) Error() string { return "request " + r.s.Op + " already made" }

// WroteNothing tells the vault the write ends with nothing to finish.
func (r *repeated) WroteNothing() bool { return true }

// repeatUnderLock, for a write about to record a line with request id id,
// files what the history holds and answers *repeated when the id is known.
// The caller holds the lock, so two processes given one id write one line.
func (t *tx) repeatUnderLock(playbook, id string) error {
	l := t.l
	if id == "" {
		return nil
	}
	l.fileRequests(playbook, t.historyOf)
	if s, ok := l.lookupRequest(playbook, id); ok {
		return &repeated{s}
	}
	return nil
}
