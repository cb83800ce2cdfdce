package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"quire/ledger"
	"quire/serve/web"
	"quire/words/refusal"
)

// DefaultAddr is where Run listens unless told otherwise.
const DefaultAddr = "127.0.0.1:8080"

// Options configure Handler and Run. The zero value is a loopback server
// with the default timeouts.
type Options struct {
	// Addr is the address Run listens on (host:port); DefaultAddr if empty.
	Addr string
	// Open lets requests without a token through while the vault has no
	// tokens (Handler only; Run sets it when Addr is a loopback address).
	Open bool
	// OnStart, when set, is called once Run is listening, with a context
	// that ends when Run returns: the place to start background work such
	// as keeping pages' views. It should start its goroutines and return.
	OnStart func(ctx context.Context)
	// Ready, when set, is called with the address Run listens on (useful
	// with port 0).
	Ready func(addr net.Addr)
	// Logger logs faults (panics, answers of 500); nil logs nothing.
	Logger *slog.Logger

	// Timeouts of the HTTP server; zero takes the defaults in brackets.
	ReadHeaderTimeout time.Duration // [5s]
	ReadTimeout       time.Duration // [30s] the whole request, body included
	WriteTimeout      time.Duration // [60s] from the end of the request's header to the end of the answer
	IdleTimeout       time.Duration // [120s] between requests on a kept-alive connection
	// ShutdownGrace is how long Run waits for calls under way when ctx ends [10s].
	ShutdownGrace time.Duration
}

func (o *Options) defaults() {
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	set(&o.ReadHeaderTimeout, 5*time.Second)
	set(&o.ReadTimeout, 30*time.Second)
	set(&o.WriteTimeout, 60*time.Second)
	set(&o.IdleTimeout, 120*time.Second)
	set(&o.ShutdownGrace, 10*time.Second)
}

// Handler is quire's HTTP interface over l:
//
//	/v1/orgs/{org}/…     one route per operation of the table (op.Method, op.Path)
//	GET /v1/openapi.json the OpenAPI 3.1 document of those routes
//	/mcp                 MCP over streamable HTTP, one tool per operation
//	POST /v1/orgs/{org}/sync  a replica's fetch, now (a forge's push webhook; sync.go)
//
// Every request but GET /v1/openapi.json and POST .../sync needs a bearer
// token of quire.yaml, except while the vault has none and opts.Open is set.
// Panics answer 500 and the handler goes on.
func Handler(l *ledger.Ledger, opts Options) http.Handler {
	return newServer(l, opts.Open, opts.Logger).handler()
}

// pages are the browser's pages (package web) over the server: a
// request is who its token (the login cookie's, or a bearer header) says,
// and every call the pages make takes the one path of call.go.
func (s *server) pages() *web.Web {
	auth := func(r *http.Request, token string) (*principal, error) {
		h := ""
		if token != "" {
			h = "Bearer " + token
		}
		p, err := s.authenticate(h)
		if err != nil {
			return nil, err
		}
		if p.open && !loopbackHost(r.Host) {
			return nil, refusal.New(refusal.Forbidden, "this server has no tokens, so it answers only requests addressed to localhost, not to %q; make a token with quire token create", r.Host)
		}
		return p, nil
	}
	return web.New(s.l, web.Options{
		Logger: s.log,
		Authenticate: func(r *http.Request, token string) (string, bool, error) {
			p, err := auth(r, token)
			if err != nil {
				return "", false, err
			}
			return p.Name, p.open, nil
		},
		Stream: func(ctx context.Context, r *http.Request, token string) (context.Context, func()) {
			h := ""
			if token != "" {
				h = "Bearer " + token
			}
			return s.hold(ctx, h)
		},
		Call: func(ctx context.Context, r *http.Request, token, name string, args any) (any, error) {
			p, err := auth(r, token)
			if err != nil {
				return nil, err
			}
			op, ok := ledger.Lookup(name)
			if !ok {
				return nil, fmt.Errorf("serve: no operation %s", name)
			}
			raw, err := json.Marshal(args)
			if err != nil {
				return nil, err
			}
			return s.call(ctx, p, op, raw)
		},
	})
}

func (s *server) handler() http.Handler {
	routes := routesOf(ledger.Ops())
	mux := http.NewServeMux()
	mux.Handle("/v1/orgs/", s.api(routes))
	mcpH := s.mcpHTTP()
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > MaxBody+64<<10 {
			writeError(w, tooLarge(r.ContentLength))
			return
		}
		if r.Method == http.MethodGet {
			// The stream of server messages lives as long as the session,
			// or until its token is no longer taken.
			http.NewResponseController(w).SetWriteDeadline(time.Time{})
			ctx, done := s.hold(r.Context(), r.Header.Get("Authorization"))
			defer done()
			r = r.WithContext(ctx)
		}
		mcpH.ServeHTTP(w, r)
	}))
	mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, refusal.New(refusal.NotFound, "no route %s %s: quire serves /v1/orgs/{org}/…, /v1/openapi.json and /mcp, and its pages at /", r.Method, r.URL.Path))
	})
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, refusal.New(refusal.Forbidden, "a cross-origin %s from a browser is refused", r.Method))
	}))
	// The OpenAPI document is read without a token: it says how to get
	// one, and holds nothing of the vault.
	top := http.NewServeMux()
	top.Handle("/v1/", s.authed(cop.Handler(mux)))
	top.Handle("/mcp", s.authed(cop.Handler(mux)))
	// The pages find who a request is themselves: a browser carries its
	// token in a cookie, not a header.
	s.web = s.pages()
	top.Handle("/", cop.Handler(s.web))
	// A forge's push webhook takes no token (sync.go).
	top.Handle("POST /v1/orgs/{org}/sync", cop.Handler(http.HandlerFunc(s.sync)))
	top.HandleFunc("/v1/openapi.json", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET")
			writeStatus(w, http.StatusMethodNotAllowed, refusal.New(refusal.InvalidInput, "/v1/openapi.json takes GET"))
			return
		}
		b, err := answerJSON(OpenAPI())
		if err != nil {
			writeError(w, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(append(b, '\n'))
	})
	return s.recovered(top)
}

// Run serves HTTP (the API, the OpenAPI document and MCP) on opts.Addr
// until ctx ends, then shuts down gracefully. Without any token in
// quire.yaml it serves only on a loopback address, and refuses to start on
// another one, saying why.
func Run(ctx context.Context, l *ledger.Ledger, opts Options) error {
	opts.defaults()
	host, _, err := net.SplitHostPort(opts.Addr)
	if err != nil {
		return fmt.Errorf("serve: %q is not host:port: %v", opts.Addr, err)
	}
	loopback := loopbackAddr(host)
	if !loopback {
		toks, err := ListTokens(l)
		if err != nil {
			return err
		}
		if len(toks) == 0 {
			return fmt.Errorf("serve: refusing to listen on %s: the vault has no tokens, so anyone who reaches that address could read and write it; make one with quire token create, or listen on 127.0.0.1", opts.Addr)
		}
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return refusal.Invalid("--addr", "quire cannot listen on %s: %v; give another HOST:PORT with --addr or QUIRE_ADDR (port 0 takes a free one)", opts.Addr, errors.Unwrap(err))
	}
	s := newServer(l, loopback, opts.Logger)
	srv := &http.Server{
		Handler:           s.handler(),
		ReadHeaderTimeout: opts.ReadHeaderTimeout,
		ReadTimeout:       opts.ReadTimeout,
		WriteTimeout:      opts.WriteTimeout,
		IdleTimeout:       opts.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	// The pages' live streams end when the server shuts down, so that
	// Shutdown does not wait for them.
	srv.RegisterOnShutdown(func() {
		if s.web != nil {
			s.web.Close()
		}
	})
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if opts.Ready != nil {
		opts.Ready(ln.Addr())
	}
	if opts.OnStart != nil {
		opts.OnStart(runCtx)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, scancel := context.WithTimeout(context.Background(), opts.ShutdownGrace)
	defer scancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// loopbackAddr says whether a listening host is only reachable from this
// machine: localhost or a loopback IP; "" and 0.0.0.0 are every address.
func loopbackAddr(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
