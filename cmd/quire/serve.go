package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"quire/ledger"
	"quire/serve"
)

// quire serve: every operation over HTTP and MCP, to other programs and
// the browser.
func serveCommand(e *env) *cli.Command {
	return &cli.Command{
		Name: "serve", Usage: "serve every operation over HTTP (/v1/orgs/{org}/…) and MCP (streamable HTTP at /mcp)",
		Flags: []cli.Flag{&cli.StringFlag{Name: "addr", Value: serve.DefaultAddr, EnvVars: []string{"QUIRE_ADDR"}, Usage: "HOST:PORT to listen on (port 0: a free one, printed once listening); without tokens, only a loopback address"}, pushFlag, followFlag, followIntervalFlag},
		Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			setServeMemoryLimit(l.Root())
			if err := mirrorTo(ctx, c, l); err != nil {
				return err
			}
			if err := followRemote(ctx, c, l); err != nil {
				return err
			}
			// A signal abandons a compaction under way, so that the
			// server stops within seconds (calls under way finish).
			l.SetCompactContext(ctx)
			l.SetCompactBy(nil)
			log := slog.New(slog.NewTextHandler(e.err, nil))
			// What the vault repairs on its own goes to the server's log.
			l.SetLogger(log)
			return serve.Run(ctx, l, serve.Options{
				Addr:    c.String("addr"),
				OnStart: func(ctx context.Context) { go l.Keep(ctx) },
				Logger:  log,
				Ready: func(a net.Addr) {
					fmt.Fprintf(e.out, "quire serves %s on http://%s/v1/ (OpenAPI at /v1/openapi.json, MCP at /mcp)\n", l.Root(), a)
					fmt.Fprintf(e.out, "Open http://%s/ in a browser to read the vault's pages.\n", a)
					if name := c.String("follow"); name != "" {
						fmt.Fprintf(e.out, "It is a replica of %s: it serves reads of what it fetches, and refuses every write (POST /v1/orgs/{org}/sync fetches at once).\n", name)
					}
				},
			})
		}),
	}
}

// quire mcp: every operation as MCP tools on standard input and output,
// for an agent that starts quire itself.
func mcpCommand(e *env) *cli.Command {
	return &cli.Command{
		Name: "mcp", Usage: "serve every operation as MCP tools over standard input and output",
		Flags: []cli.Flag{pushFlag},
		Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if err := mirrorTo(ctx, c, l); err != nil {
				return err
			}
			l.SetCompactContext(ctx)
			l.SetCompactBy(nil)
			return serve.ServeStdio(ctx, l)
		}),
	}
}

// pushFlag names the remotes a server pushes every commit to.
var pushFlag = &cli.StringSliceFlag{Name: "push", Usage: "push the branch to this git remote after every commit, in the background (quire remote add NAME URL; repeat for more)"}

// mirrorTo starts the pushes --push names, until ctx ends.
func mirrorTo(ctx context.Context, c *cli.Context, l *ledger.Ledger) error {
	for _, name := range c.StringSlice("push") {
		if err := l.Mirror(ctx, name); err != nil {
			return fmt.Errorf("--push %s: %w", name, err)
		}
	}
	return nil
}

// quire token create|list|revoke: the bearer tokens quire serve takes.
func tokenCommand(e *env) *cli.Command {
	return &cli.Command{
		Name: "token", Usage: "bearer tokens of quire serve",
		Subcommands: []*cli.Command{{
			Name: "create", Usage: "make a token (printed once on stdout, its id on stderr; with --json both on stdout; stored hashed in quire.yaml)",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "principal", Required: true, Usage: "who the token acts as"},
				&cli.StringSliceFlag{Name: "scope", Required: true, Usage: "playbook:read, playbook:write, admin or playbook:delegate, optionally :<playbook> (repeat)"},
				&cli.StringFlag{Name: "expires", Usage: "how long it lasts, such as 90d, 12h or 30m; never when left out"},
				jsonFlag,
			},
			Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
				var ttl time.Duration
				if c.IsSet("expires") {
					var err error
					if ttl, err = serve.ParseExpiry(c.String("expires")); err != nil {
						return err
					}
				}
				tok, info, err := serve.NewToken(l, c.String("principal"), c.StringSlice("scope"), ttl)
				if err != nil {
					return err
				}
				if c.Bool("json") {
					return e.printJSON(map[string]any{"token": tok, "info": info})
				}
				fmt.Fprintf(e.out, "%s\n", tok)
				until := "never expires"
				if info.Expires != "" {
					until = "expires " + info.Expires
				}
				fmt.Fprintf(e.err, "Token %s for %s with %s; it %s. The token is shown only now.\n",
					info.ID, info.Principal, strings.Join(info.Scopes, ", "), until)
				return nil
			}),
		}, {
			Name: "list", Usage: "list the tokens: id, principal, scopes, created, expires, last used (never the token)",
			Flags: []cli.Flag{jsonFlag},
			Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
				toks, err := serve.ListTokens(l)
				if err != nil {
					return err
				}
				if c.Bool("json") {
					return e.printJSON(toks)
				}
				tw := tabwriter.NewWriter(e.out, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tPRINCIPAL\tSCOPES\tCREATED\tEXPIRES\tLAST USED")
				or := func(s, none string) string {
					if s == "" {
						return none
					}
					return s
				}
				for _, t := range toks {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Principal, strings.Join(t.Scopes, ","), t.Created,
						or(t.Expires, "never"), or(t.LastUsed, "never"))
				}
				return tw.Flush()
			}),
		}, {
			Name: "revoke", Usage: "revoke a token by its id: a running server refuses it from its next request", ArgsUsage: "ID",
			Before: wantArgs(1, 1, "ID, one token id (quire token list shows them)"),
			Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
				if err := serve.RevokeToken(l, c.Args().First()); err != nil {
					return err
				}
				if c.Bool("json") {
					return e.printJSON(map[string]string{"revoked": c.Args().First()})
				}
				fmt.Fprintf(e.out, "Revoked %s.\n", c.Args().First())
				return nil
			}),
		}},
	}
}
