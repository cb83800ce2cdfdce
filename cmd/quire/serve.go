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

	"github.com/urfave/cli/v2"

	"quire/ledger"
	"quire/serve"
)

func init() {
	extraCommands = append(extraCommands,
		func(e *env) *cli.Command {
			return &cli.Command{
				Name: "serve", Usage: "serve every operation over HTTP (/v1/orgs/{org}/…) and MCP (streamable HTTP at /mcp)",
				Flags: []cli.Flag{&cli.StringFlag{Name: "addr", Value: serve.DefaultAddr, Usage: "HOST:PORT to listen on; without tokens, only a loopback address"}},
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
					defer stop()
					log := slog.New(slog.NewTextHandler(e.err, nil))
					// What the vault repairs on its own goes to the server's log.
					l.V.SetLogger(log)
					return serve.Run(ctx, l, serve.Options{
						Addr:    c.String("addr"),
						OnStart: func(ctx context.Context) { go l.Keep(ctx) },
						Logger:  log,
						Ready: func(a net.Addr) {
							fmt.Fprintf(e.out, "quire serves %s on http://%s/v1/ (OpenAPI at /v1/openapi.json, MCP at /mcp)\n", l.V.Root(), a)
						},
					})
				}),
			}
		},
		func(e *env) *cli.Command {
			return &cli.Command{
				Name: "mcp", Usage: "serve every operation as MCP tools over standard input and output",
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
					defer stop()
					return serve.ServeStdio(ctx, l)
				}),
			}
		},
		func(e *env) *cli.Command {
			return &cli.Command{
				Name: "token", Usage: "bearer tokens of quire serve",
				Subcommands: []*cli.Command{{
					Name: "create", Usage: "make a token (shown once; stored hashed in quire.yaml)",
					Flags: []cli.Flag{
						&cli.StringFlag{Name: "principal", Required: true, Usage: "who the token acts as"},
						&cli.StringSliceFlag{Name: "scope", Required: true, Usage: "playbook:read, playbook:write or admin, optionally :<playbook> (repeat)"},
					},
					Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
						tok, err := serve.CreateToken(l, c.String("principal"), c.StringSlice("scope"))
						if err != nil {
							return err
						}
						fmt.Fprintf(e.out, "%s\n", tok)
						fmt.Fprintf(e.err, "Token for %s with %s; it is shown only now.\n", c.String("principal"), strings.Join(c.StringSlice("scope"), ", "))
						return nil
					}),
				}},
			}
		},
	)
}
