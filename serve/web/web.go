package web

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"quire/ledger"
	"quire/serve/web/assets"
	"quire/words/refusal"
)

// Options are what the transport above (package serve) lends the pages:
// who a request is, and the one path every call takes there (scopes, the
// principal written into author, refusals).
type Options struct {
	// Authenticate says who a browser's request acts as, from the token it
	// carries ("" for none): the token's principal, or open (a server
	// without tokens, on loopback, to a request addressed to loopback). It
	// answers a refusal (unauthenticated, forbidden) otherwise.
	Authenticate func(r *http.Request, token string) (name string, open bool, err error)
	// Call runs an operation of the table with the token's rights.
	Call func(ctx context.Context, r *http.Request, token, op string, args any) (any, error)
	// Stream, when set, ties a live stream to the token it was opened
	// with: the context it answers (under ctx) ends when the token stops
	// being taken (revoked or expired, by whichever process), and the
	// stream with it; done is called when the stream ends.
	Stream func(ctx context.Context, r *http.Request, token string) (_ context.Context, done func())
	// Logger logs faults; nil logs nothing.
	Logger *slog.Logger
	// Secure marks the cookies Secure (a server behind a TLS proxy); a
	// request over TLS marks them so anyway.
	Secure bool
}

// Cookies the pages set. All are HttpOnly and SameSite=Strict.
const (
	cookieToken   = "quire_token"   // the bearer token a person logged in with
	cookieSession = "quire_session" // the browser's session: 32 random bytes, new at login and logout
	cookieName    = "quire_name"    // the name given in the page, on a server without tokens
)

// CSP is the Content-Security-Policy of every page: nothing but this
// server's own scripts, styles and images, no inline script or style, no
// frame, no form posted elsewhere.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; font-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Web is the browser pages over a ledger.
type Web struct {
	l    *ledger.Ledger
	opts Options
	log  *slog.Logger
	hub  *hub
	mux  *http.ServeMux
	// secret keys the CSRF values (csrfOf): 32 random bytes of this
	// process's own.
	secret []byte
}

// New makes the pages over l. Close stops their live updates.
func New(l *ledger.Ledger, opts Options) *Web {
	w := &Web{l: l, opts: opts, log: opts.Logger, secret: make([]byte, 32)}
	rand.Read(w.secret)
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	w.hub = newHub(l)
	mux := http.NewServeMux()
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", assets.Handler()))
	mux.HandleFunc("GET /favicon.ico", func(rw http.ResponseWriter, r *http.Request) {
		http.Redirect(rw, r, "/assets/favicon.svg", http.StatusMovedPermanently)
	})
	mux.HandleFunc("GET /{$}", w.page(w.home))
	mux.HandleFunc("GET /p/{playbook}", w.page(w.playbook))
	mux.HandleFunc("GET /p/{playbook}/runs/{run_id}", w.page(w.run))
	mux.HandleFunc("GET /p/{playbook}/runs/{run_id}/commits/{commit}", w.page(w.runCommit))
	mux.HandleFunc("GET /p/{playbook}/runs/{run_id}/artifacts/{name...}", w.artifact)
	mux.HandleFunc("GET /p/{playbook}/comments", w.page(w.commentsPage))
	mux.HandleFunc("GET /p/{playbook}/{type}/{name}", w.page(w.definition))
	mux.HandleFunc("POST /p/{playbook}/comments", w.post(w.makeComment))
	mux.HandleFunc("POST /p/{playbook}/comments/{id}/resolve", w.post(w.resolveComment))
	mux.HandleFunc("POST /p/{playbook}/runs/{run_id}/transition", w.post(w.moveRun))
	mux.HandleFunc("POST /p/{playbook}/{type}/{name}/try", w.postPage(w.tryPage))
	mux.HandleFunc("POST /p/{playbook}/runs/{run_id}/end", w.post(w.endRun))
	mux.HandleFunc("GET /login", w.page(w.loginPage))
	mux.HandleFunc("POST /login", w.post(w.login))
	mux.HandleFunc("POST /logout", w.post(w.logout))
	mux.HandleFunc("GET /live", w.live)
	mux.HandleFunc("/", w.page(func(r *http.Request, c *reqCtx) (*view, error) {
		return nil, refusal.New(refusal.NotFound, "there is no page at %s", r.URL.Path)
	}))
	w.mux = mux
	return w
}

// Close stops the live updates (their streams end).
func (w *Web) Close() { w.hub.close() }

// ServeHTTP serves the pages: every answer has the strict CSP and
// nosniff; pages are not cached.
func (w *Web) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	h := rw.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	w.mux.ServeHTTP(rw, r)
}

// Paths the pages answer at, for package serve to mount them.
var Paths = []string{"/{$}", "/p/", "/login", "/logout", "/live", "/assets/"}

// reqCtx is what a page knows of its request: who, the CSRF value, the
// name remembered.
type reqCtx struct {
	Token string
	Who   string
	Open  bool
	CSRF  string
	Name  string // the name given on a server without tokens
}

// tokenOf is the token a request carries: the login cookie's, or an
// Authorization header's (scripts, tests).
func tokenOf(r *http.Request) string {
	tok := ""
	if ck, err := r.Cookie(cookieToken); err == nil {
		tok = ck.Value
	}
	if a := r.Header.Get("Authorization"); a != "" {
		if scheme, t, ok := strings.Cut(a, " "); ok && strings.EqualFold(scheme, "bearer") {
			tok = strings.TrimSpace(t)
		}
	}
	return tok
}

// who finds who a request is, from the token it carries.
func (w *Web) who(rw http.ResponseWriter, r *http.Request) (*reqCtx, error) {
	c := &reqCtx{Token: tokenOf(r)}
	var err error
	c.Who, c.Open, err = w.opts.Authenticate(r, c.Token)
	if err != nil {
		return c, err
	}
	if ck, err := r.Cookie(cookieName); err == nil && c.Open {
		c.Name = ck.Value
	}
	c.CSRF = w.csrfValue(rw, r)
	return c, nil
}

// CSRF. Every form posts back the CSRF value of the session it was
// shown in: an HMAC-SHA256, under the server's secret, of the session's id
// (the cookie quire_session) and of the token the request carries. A
// value is so good only with the cookies it was made for: another
// session's value is refused, as is the session's id itself, and a
// session id planted in a browser (by a sibling domain's cookie, say) is
// of no use without the value of that browser's token, which only its own
// pages show. The secret is the process's own, so after a restart a page
// shown before is refused once and its form is sent again from a reload.

// csrfValue is the request's CSRF value, for its session: the session of
// its cookie, or a new one set.
func (w *Web) csrfValue(rw http.ResponseWriter, r *http.Request) string {
	id, ok := sessionOf(r)
	if !ok {
		id = w.newSession(rw, r)
	}
	return w.csrfOf(id, tokenOf(r))
}

// sessionOf is the request's session id, if it carries one.
func sessionOf(r *http.Request) (string, bool) {
	ck, err := r.Cookie(cookieSession)
	if err != nil || len(ck.Value) < 43 {
		return "", false
	}
	return ck.Value, true
}

// newSession sets a new session id (at the first page, at login and at
// logout) and answers it.
func (w *Web) newSession(rw http.ResponseWriter, r *http.Request) string {
	b := make([]byte, 32)
	rand.Read(b)
	id := base64.RawURLEncoding.EncodeToString(b)
	w.setCookie(rw, r, cookieSession, id, 0)
	return id
}

// csrfOf is the CSRF value of the session id with the token.
func (w *Web) csrfOf(session, token string) string {
	m := hmac.New(sha256.New, w.secret)
	m.Write([]byte("quire csrf\x00"))
	m.Write([]byte(session))
	m.Write([]byte{0})
	m.Write([]byte(token))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (w *Web) setCookie(rw http.ResponseWriter, r *http.Request, name, value string, maxAge time.Duration) {
	ck := &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: w.opts.Secure || r.TLS != nil}
	switch {
	case maxAge < 0:
		ck.MaxAge = -1
	case maxAge > 0:
		ck.MaxAge = int(maxAge.Seconds())
	}
	http.SetCookie(rw, ck)
}

// checkCSRF refuses a POST whose form does not carry the CSRF value of
// the request's session and token.
func (w *Web) checkCSRF(r *http.Request) error {
	id, ok := sessionOf(r)
	form := r.PostFormValue("csrf")
	if !ok || subtle.ConstantTimeCompare([]byte(w.csrfOf(id, tokenOf(r))), []byte(form)) != 1 {
		return refusal.At(refusal.Forbidden, "/csrf", "this form was not sent from one of this server's pages (its CSRF value is missing or stale); reload the page and send it again")
	}
	return nil
}

// call runs an operation as the request's principal.
func (w *Web) call(r *http.Request, c *reqCtx, op string, args any) (any, error) {
	return w.opts.Call(r.Context(), r, c.Token, op, args)
}

// callAs is call with the answer's type.
func callAs[T any](w *Web, r *http.Request, c *reqCtx, op string, args any) (T, error) {
	var zero T
	res, err := w.call(r, c, op, args)
	if err != nil {
		return zero, err
	}
	t, ok := res.(T)
	if !ok {
		return zero, errors.New("web: " + op + " answered another type")
	}
	return t, nil
}

// statusOf is the HTTP status of a refusal.
func statusOf(err error) int {
	if r, ok := refusal.As(err); ok {
		switch r.Code {
		case refusal.InvalidInput:
			return http.StatusBadRequest
		case refusal.NotFound:
			return http.StatusNotFound
		case refusal.Conflict:
			return http.StatusConflict
		case refusal.Forbidden:
			return http.StatusForbidden
		case refusal.Unauthenticated:
			return http.StatusUnauthorized
		}
	}
	return http.StatusServiceUnavailable
}
