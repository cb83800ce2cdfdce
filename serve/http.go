package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"quire/ledger"
	"quire/words/refusal"
)

// route is one operation's HTTP route, split into segments; a segment in
// braces takes the argument of that name.
type route struct {
	op   *ledger.Op
	segs []string
}

func (r route) literals() int {
	n := 0
	for _, s := range r.segs {
		if !isParam(s) {
			n++
		}
	}
	return n
}

func isParam(seg string) bool { return strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") }

// paramName is the argument a segment in braces takes, and whether it
// takes the rest of the path ({name...}).
func paramName(seg string) (name string, rest bool) {
	name = seg[1 : len(seg)-1]
	name, rest = strings.CutSuffix(name, "...")
	return name, rest
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func routesOf(ops []*ledger.Op) []route {
	var out []route
	for _, op := range ops {
		if op.Method == "" || op.Path == "" {
			continue
		}
		out = append(out, route{op: op, segs: splitPath(op.Path)})
	}
	return out
}

// match finds the route of a method and the segments after /v1/orgs/{org}:
// of the routes that fit, the one with the most literal segments. It also
// says which methods the path takes, for 405.
func match(routes []route, method string, segs []string) (*route, map[string]string, []string) {
	var best *route
	var params map[string]string
	var allow []string
	for i := range routes {
		r := &routes[i]
		n := len(r.segs)
		rest := false
		if n > 0 && isParam(r.segs[n-1]) {
			_, rest = paramName(r.segs[n-1])
		}
		if len(segs) != n && !(rest && len(segs) > n) {
			continue
		}
		ps, ok := map[string]string{}, true
		for j, s := range r.segs {
			if isParam(s) {
				name, tail := paramName(s)
				v := segs[j]
				if tail {
					v = strings.Join(segs[j:], "/")
				}
				if v == "" {
					ok = false
					break
				}
				ps[name] = v
			} else if s != segs[j] {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		if !slices.Contains(allow, r.op.Method) {
			allow = append(allow, r.op.Method)
		}
		if r.op.Method == method && (best == nil || r.literals() > best.literals()) {
			best, params = r, ps
		}
	}
	return best, params, allow
}

// api serves /v1/orgs/{org}/… from the table.
func (s *server) api(routes []route) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		raw := strings.Split(strings.Trim(r.URL.EscapedPath(), "/"), "/")
		// raw: v1 orgs {org} …
		if len(raw) < 3 {
			writeError(w, refusal.New(refusal.NotFound, "no route %s %s: the API is under /v1/orgs/{org}/", r.Method, r.URL.Path))
			return
		}
		segs := make([]string, 0, len(raw)-2)
		for _, e := range raw[2:] {
			u, err := url.PathUnescape(e)
			if err != nil {
				writeError(w, refusal.Invalid("", "the path segment %q does not unescape: %v", e, err))
				return
			}
			segs = append(segs, u)
		}
		org, _, err := s.keys.load()
		if err != nil {
			writeError(w, err)
			return
		}
		if segs[0] != org {
			writeError(w, refusal.New(refusal.NotFound, "no organization %q here; this vault is %q, under /v1/orgs/%s/", segs[0], org, org))
			return
		}
		rt, params, allow := match(routes, r.Method, segs[1:])
		if rt == nil && len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeStatus(w, http.StatusMethodNotAllowed, refusal.New(refusal.InvalidInput, "%s takes %s, not %s", r.URL.Path, strings.Join(allow, " or "), r.Method))
			return
		}
		if rt == nil {
			writeError(w, refusal.New(refusal.NotFound, "no route %s %s; GET /v1/openapi.json lists them", r.Method, r.URL.Path))
			return
		}
		args, err := s.httpArgs(w, r, rt.op, params)
		if err != nil {
			writeError(w, err)
			return
		}
		answer, err := s.call(r.Context(), principalFrom(r), rt.op, args)
		if err != nil {
			writeError(w, err)
			return
		}
		b, err := answerJSON(answer)
		if err != nil {
			writeError(w, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(append(b, '\n'))
	}
}

// httpArgs gathers a call's arguments: the JSON body (a POST or PUT), the
// query parameters and the path's segments, coerced to the types of the
// operation's arguments. A body over MaxBody is refused (413) as soon as it
// passes the limit, never read whole.
func (s *server) httpArgs(w http.ResponseWriter, r *http.Request, op *ledger.Op, params map[string]string) (json.RawMessage, error) {
	fields := map[string]json.RawMessage{}
	if r.Body != nil && r.Body != http.NoBody {
		if r.ContentLength > MaxBody {
			return nil, tooLarge(r.ContentLength)
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge(-1)
		}
		if err != nil {
			return nil, refusal.Invalid("", "the request body could not be read: %v", err)
		}
		if t := bytes.TrimSpace(body); len(t) > 0 {
			if t[0] != '{' {
				return nil, refusal.Invalid("", "the request body is a JSON object of %s's arguments", op.Name)
			}
			if err := json.Unmarshal(t, &fields); err != nil {
				return nil, refusal.Invalid("", "the request body is not a JSON object: %v", err)
			}
		}
	}
	for name, vals := range r.URL.Query() {
		if _, dup := fields[name]; dup {
			return nil, refusal.Invalid("/"+name, "%s is given twice, in the body and in the query", name)
		}
		v, err := coerce(op, name, vals)
		if err != nil {
			return nil, err
		}
		fields[name] = v
	}
	for name, val := range params {
		v, err := coerce(op, name, []string{val})
		if err != nil {
			return nil, err
		}
		if old, dup := fields[name]; dup && !jsonEqual(old, v) {
			return nil, refusal.Invalid("/"+name, "the path names %s %s, the arguments %s", name, v, old)
		}
		fields[name] = v
	}
	// The Idempotency-Key header is the request_id of a writing
	// operation (reads are safe to repeat, and ignore it).
	if key := r.Header.Get("Idempotency-Key"); key != "" {
		if _, ok := findArg(op, "request_id"); ok {
			v, _ := json.Marshal(key)
			if old, dup := fields["request_id"]; dup && !jsonEqual(old, v) {
				return nil, refusal.Invalid("/request_id", "the Idempotency-Key header says %s, the arguments' request_id %s", v, old)
			}
			fields["request_id"] = v
		}
	}
	return json.Marshal(fields)
}

func tooLarge(n int64) error {
	msg := "the request body is over 1 MiB (1,048,576 bytes), the most a call takes; nothing was read past that"
	if n > 0 {
		msg = fmt.Sprintf("the request body takes %d bytes; a call takes at most 1 MiB (1,048,576 bytes)", n)
	}
	return withStatus(http.StatusRequestEntityTooLarge, refusal.New(refusal.InvalidInput, "%s", msg))
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// coerce turns the text of a query parameter or a path segment into the
// JSON its argument's type takes: a number, a boolean, a list of repeated
// parameters, JSON for an object, or a string. An unknown name stays a
// string, for Decode to refuse at its path.
func coerce(op *ledger.Op, name string, vals []string) (json.RawMessage, error) {
	f, ok := findArg(op, name)
	if !ok {
		return json.Marshal(vals[len(vals)-1])
	}
	t := f.Type
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8 {
		if len(vals) == 1 && strings.HasPrefix(strings.TrimSpace(vals[0]), "[") {
			return json.RawMessage(vals[0]), nil
		}
		items := make([]json.RawMessage, 0, len(vals))
		for _, v := range vals {
			item, err := coerceOne(t.Elem(), name, v)
			if err != nil {
				return nil, err
			}
			items = append(items, item)
		}
		return json.Marshal(items)
	}
	if len(vals) > 1 {
		return nil, refusal.Invalid("/"+name, "%s takes one value, not %d", name, len(vals))
	}
	return coerceOne(t, name, vals[0])
}

func coerceOne(t reflect.Type, name, v string) (json.RawMessage, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	bad := func(what string) error { return refusal.Invalid("/"+name, "expected %s, not %q", what, v) }
	switch t.Kind() {
	case reflect.String:
		return json.Marshal(v)
	case reflect.Bool:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, bad("true or false")
		}
		return json.Marshal(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(v, 10, t.Bits())
		if err != nil {
			return nil, bad("an integer")
		}
		return json.Marshal(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(v, 10, t.Bits())
		if err != nil {
			return nil, bad("a whole number")
		}
		return json.Marshal(n)
	case reflect.Float32, reflect.Float64:
		n, err := strconv.ParseFloat(v, t.Bits())
		if err != nil {
			return nil, bad("a number")
		}
		return json.Marshal(n)
	}
	if json.Valid([]byte(v)) {
		return json.RawMessage(v), nil
	}
	return json.Marshal(v)
}

// writeError answers a refusal with its status.
func writeError(w http.ResponseWriter, err error) {
	status, r := statusOf(err)
	writeStatus(w, status, r)
}

func writeStatus(w http.ResponseWriter, status int, r *refusal.Error) {
	b, _ := answerJSON(r.Object())
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	if status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Bearer realm="quire"`)
	}
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// ---- middleware ---------------------------------------------------------

type principalKey struct{}

func principalFrom(r *http.Request) *principal {
	if p, ok := r.Context().Value(principalKey{}).(*principal); ok {
		return p
	}
	return &principal{} // no scopes: refused
}

// authed finds the request's principal (401 without a good token) and
// keeps a server without tokens to loopback host names, against DNS
// rebinding.
func (s *server) authed(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.authenticate(r.Header.Get("Authorization"))
		if err != nil {
			writeError(w, err)
			return
		}
		if p.open && !loopbackHost(r.Host) {
			writeError(w, refusal.New(refusal.Forbidden, "this server has no tokens, so it answers only requests addressed to localhost, not to %q; make a token with quire token create", r.Host))
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	})
}

func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// recovered answers a panic anywhere below with 500 and the refusal
// object, and keeps serving.
func (s *server) recovered(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("a request panicked", "method", r.Method, "path", r.URL.Path, "panic", v)
				_, re := statusOf(panicked(r.Method+" "+r.URL.Path, v))
				writeStatus(w, http.StatusInternalServerError, re)
			}
		}()
		next.ServeHTTP(w, r)
	})
}
