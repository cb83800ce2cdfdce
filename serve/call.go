package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"runtime/debug"
	"strings"

	"quire/ledger"
	"quire/serve/web"
	"quire/words/event"
	"quire/words/refusal"
)

// Limits of a call, on every transport.
const (
	// MaxBody is the most a request body (HTTP) or a tool call's arguments
	// (MCP) may hold: 1 MiB.
	MaxBody = 1 << 20
	// MaxSampleOutput is the most a sample_output argument may hold as
	// JSON: 256 KiB, nested at most 512 levels (page-format.md, Limits).
	MaxSampleOutput = 256 << 10
	maxSampleDepth  = event.MaxDepth
)

// server is what the transports share: the ledger, the keyring and the
// one path every call takes.
type server struct {
	l    *ledger.Ledger
	keys *keyring
	// open lets a request without a token act with every scope while the
	// vault has no tokens at all (a loopback server, or a test).
	open bool
	log  *slog.Logger
	// invoke runs a decoded call; tests replace it to make a handler panic
	// or fail as the ledger does not.
	invoke func(ctx context.Context, op *ledger.Op, args any) (any, error)
	// web is the browser's pages, once handler made them.
	web *web.Web
	// streams are the open streams, ended when their token is no longer
	// taken (streams.go).
	streams streams
}

func newServer(l *ledger.Ledger, open bool, log *slog.Logger) *server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &server{l: l, keys: &keyring{l: l, now: l.Now}, open: open, log: log, invoke: l.Invoke}
}

// statusError carries the HTTP status of a refusal whose code alone does
// not say it: 401, 413 and 500.
type statusError struct {
	status int
	r      *refusal.Error
}

func (e *statusError) Error() string                { return e.r.Message }
func (e *statusError) Unwrap() error                { return e.r }
func withStatus(status int, r *refusal.Error) error { return &statusError{status, r} }

// statusOf is the HTTP status of an error, with its refusal object.
func statusOf(err error) (int, *refusal.Error) {
	var se *statusError
	if errors.As(err, &se) {
		return se.status, se.r
	}
	r := refusal.Of(err)
	switch r.Code {
	case refusal.InvalidInput:
		return http.StatusBadRequest, r
	case refusal.NotFound:
		return http.StatusNotFound, r
	case refusal.Conflict:
		return http.StatusConflict, r
	case refusal.Forbidden:
		return http.StatusForbidden, r
	case refusal.Unauthenticated:
		return http.StatusUnauthorized, r
	}
	return http.StatusServiceUnavailable, r
}

// unauthenticated is the 401 refusal: no token, or one the vault does not
// know (revoked, expired or never made).
func unauthenticated(format string, args ...any) error {
	return withStatus(http.StatusUnauthorized, refusal.New(refusal.Unauthenticated, format, args...))
}

// authenticate finds who a request acts as from its Authorization header.
func (s *server) authenticate(header string) (*principal, error) {
	return s.identify(header, true)
}

// identify is authenticate; mark records the token's use (a stream's
// token looked at again is not a use).
func (s *server) identify(header string, mark bool) (*principal, error) {
	_, tokens, err := s.keys.load()
	if err != nil {
		return nil, err
	}
	scheme, tok, _ := strings.Cut(strings.TrimSpace(header), " ")
	tok = strings.TrimSpace(tok)
	if header == "" {
		if len(tokens) == 0 && s.open {
			return openPrincipal, nil
		}
		if len(tokens) == 0 {
			return nil, unauthenticated("this server takes only bearer tokens and the vault has none; make one with quire token create")
		}
		return nil, unauthenticated("this request needs a bearer token: Authorization: Bearer <token> (quire token create makes one)")
	}
	if !strings.EqualFold(scheme, "bearer") || tok == "" {
		return nil, unauthenticated("the Authorization header takes a bearer token: Authorization: Bearer <token>")
	}
	p, ok, err := s.keys.lookup(tok, mark)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, unauthenticated("the bearer token is not one of this vault's tokens (it may have been revoked or have expired)")
	}
	return p, nil
}

// refused says whether err is a refusal of who a request is (401, 403),
// not a fault in finding it out.
func refused(err error) bool {
	r, ok := refusal.As(err)
	return ok && (r.Code == refusal.Unauthenticated || r.Code == refusal.Forbidden)
}

// call runs one operation for a principal with its arguments as JSON:
// the size of sample_output, the token's scope, the actor, strict
// decoding, then the ledger. A panic below it is answered as a refusal
// (HTTP 500) and logged with its stack; the server goes on.
func (s *server) call(ctx context.Context, p *principal, op *ledger.Op, raw json.RawMessage) (res any, err error) {
	if len(raw) > MaxBody {
		return nil, withStatus(http.StatusRequestEntityTooLarge,
			refusal.New(refusal.InvalidInput, "the arguments of %s take %d bytes; a call holds at most 1 MiB (1,048,576 bytes)", op.Name, len(raw)))
	}
	fields := map[string]json.RawMessage{}
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '{' {
		if err := json.Unmarshal(t, &fields); err != nil {
			return nil, refusal.Invalid("", "the arguments of %s are not a JSON object: %v", op.Name, err)
		}
	} else if len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		return nil, refusal.Invalid("", "the arguments of %s are a JSON object, not %s", op.Name, kindOfJSON(t))
	}
	if so, ok := fields["sample_output"]; ok {
		if err := checkSample(so); err != nil {
			return nil, err
		}
	}
	var playbook string
	if pb, ok := fields["playbook"]; ok {
		json.Unmarshal(pb, &playbook)
	}
	if !p.may(op, playbook) {
		where, at := "", ""
		if playbook != "" {
			where, at = " on the playbook "+playbook, "/playbook"
		}
		return nil, refusal.At(refusal.Forbidden, at, "%s needs the scope %s%s; the token of %s has %s",
			op.Name, op.Scope, where, p.Name, strings.Join(p.Scopes, ", "))
	}
	if err := p.actAs(op, fields, playbook); err != nil {
		return nil, err
	}
	raw, err = json.Marshal(fields)
	if err != nil {
		return nil, err
	}
	args, err := op.Decode(raw)
	if err != nil {
		return nil, err
	}
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("a call panicked", "op", op.Name, "panic", v, "stack", string(debug.Stack()))
			res, err = nil, panicked(op.Name, v)
		}
	}()
	return s.invoke(ctx, op, args)
}

// identityArgs are the arguments that name a principal: who acts (actor,
// or author where an operation has no actor), whose marks (member), and
// who executes and who authorized a new run (executor, authorized_by).
var identityArgs = []string{"actor", "author", "member", "executor", "authorized_by"}

// delegable are the identity arguments a token with the scope
// playbook:delegate may set to another principal than its own.
var delegable = map[string]bool{"executor": true, "authorized_by": true}

// actAs makes a call act as its token's principal, the one place every
// transport goes through: an identity argument left out (or "") is the
// principal, when the operation needs it or it is actor or author; one
// naming anyone else is refused (forbidden, at its path), but for
// executor and authorized_by with the scope playbook:delegate. A caller
// without a token (stdio, a loopback server of a vault without tokens)
// names whom it likes: the ledger records what it is told.
func (p *principal) actAs(op *ledger.Op, fields map[string]json.RawMessage, playbook string) error {
	if p.open || p.Name == "" {
		return nil
	}
	for _, name := range identityArgs {
		f, ok := findArg(op, name)
		if !ok || f.Type.Kind() != reflect.String {
			continue
		}
		raw, given := fields[name]
		var v string
		if given && string(raw) != "null" && json.Unmarshal(raw, &v) != nil {
			continue // not a string: Decode refuses it at its path
		}
		if v == "" {
			if f.Required || name == "actor" || name == "author" {
				fields[name], _ = json.Marshal(p.Name)
			}
			continue
		}
		if v == p.Name {
			continue
		}
		if delegable[name] {
			if p.mayDelegate(playbook) {
				continue
			}
			return refusal.At(refusal.Forbidden, "/"+name, "%s names %q, but the token acts as %q: a run for another %s needs the scope %s (or %s:%s, or admin); leave %s out to name %s",
				name, v, p.Name, name, ScopeDelegate, ScopeDelegate, orPlaybook(playbook), name, p.Name)
		}
		return refusal.At(refusal.Forbidden, "/"+name, "%s names %q, but the token acts as %q, and a call acts as its token's principal; leave %s out or name %s",
			name, v, p.Name, name, p.Name)
	}
	return nil
}

func orPlaybook(p string) string {
	if p == "" {
		return "<playbook>"
	}
	return p
}

func panicked(where string, v any) error {
	return withStatus(http.StatusInternalServerError, refusal.New(refusal.Unavailable,
		"quire failed inside %s (%v); nothing was answered, the server goes on serving, and the fault is in its log", where, v))
}

func kindOfJSON(t []byte) string {
	switch t[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

// checkSample holds sample_output to its size and depth.
func checkSample(raw json.RawMessage) error {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return refusal.Invalid("/sample_output", "not JSON: %v", err)
	}
	if buf.Len() > MaxSampleOutput {
		return withStatus(http.StatusRequestEntityTooLarge, refusal.Invalid("/sample_output",
			"sample_output takes %d bytes as JSON; it may hold at most 256 KiB (262,144 bytes)", buf.Len()))
	}
	most := event.Depth(buf.Bytes())
	if most > maxSampleDepth {
		return refusal.Invalid("/sample_output", "sample_output is nested %d levels deep; it may nest at most %d", most, maxSampleDepth)
	}
	return nil
}

// answerJSON is an answer as JSON, without HTML escaping.
func answerJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("serve: the answer does not encode as JSON: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
