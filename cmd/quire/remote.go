package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"quire/ledger"
)

// quire remote add|list|remove: the vault's git remotes, kept in its git
// config as git keeps them; quire serve --push NAME pushes to one after
// every commit.
func remoteCommand(e *env) *cli.Command {
	return &cli.Command{
		Name: "remote", Usage: "the vault's git remotes, which quire serve --push NAME pushes every commit to",
		Subcommands: []*cli.Command{{
			Name: "add", Usage: "add a git remote (kept in .git/config, as git remote add keeps it)", ArgsUsage: "NAME URL",
			Before: wantArgs(2, 2, "NAME and URL, such as origin ssh://git@host/team/vault.git"),
			Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
				name, url := c.Args().Get(0), c.Args().Get(1)
				if err := l.AddRemote(name, url); err != nil {
					return err
				}
				fmt.Fprintf(e.out, "Added the remote %s (%s). quire serve --push %s pushes every commit to it.\n", name, url, name)
				return nil
			}),
		}, {
			Name: "list", Usage: "list the remotes: the last commit pushed to each, how many wait, the last push error", Flags: []cli.Flag{jsonFlag},
			Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
				return callAndShow(e, c, l, "list_remotes", map[string]any{}, func(res any) { printRemotes(e, res.([]ledger.Remote)) })
			}),
		}, {
			Name: "remove", Usage: "take a git remote away, and what quire knew of pushing to it", ArgsUsage: "NAME",
			Before: wantArgs(1, 1, "NAME, one remote (quire remote list shows them)"),
			Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
				if err := l.RemoveRemote(c.Args().First()); err != nil {
					return err
				}
				fmt.Fprintf(e.out, "Removed the remote %s.\n", c.Args().First())
				return nil
			}),
		}},
	}
}

// quire node [set NAME]: this vault's node name among the servers that
// meet at a remote (kept in .git/config; the host's name by default).
func nodeCommand(e *env) *cli.Command {
	return &cli.Command{
		Name: "node", Usage: "this vault's node name, which a playbook's home names (kept in .git/config; the host's name when not set)",
		Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
			fmt.Fprintln(e.out, l.Node())
			return nil
		}),
		Subcommands: []*cli.Command{{
			Name: "set", Usage: "set this vault's node name", ArgsUsage: "NAME",
			Before: wantArgs(1, 1, "NAME, the node's name"),
			Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
				if err := l.SetNode(c.Args().First()); err != nil {
					return err
				}
				fmt.Fprintf(e.out, "This vault is the node %s.\n", c.Args().First())
				return nil
			}),
		}},
	}
}

// quire status: where the vault stands against its remotes.
func statusCommand(e *env) *cli.Command {
	return &cli.Command{
		Name: "status", Usage: "the vault's remotes: what each took, what waits to be pushed, the last error", Flags: []cli.Flag{jsonFlag},
		Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
			return callAndShow(e, c, l, "list_remotes", map[string]any{}, func(res any) {
				rs := res.([]ledger.Remote)
				if len(rs) == 0 {
					fmt.Fprintf(e.out, "The vault has no remote: it lives on this machine alone (quire remote add NAME URL adds one).\n")
					return
				}
				printRemotes(e, rs)
			})
		}),
	}
}

func printRemotes(e *env, rs []ledger.Remote) {
	tw := tabwriter.NewWriter(e.out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REMOTE\tURL\tPUSHED\tWAITING\tLAST ERROR")
	for _, r := range rs {
		pushed := "never"
		if r.Pushed != "" {
			pushed = r.Pushed[:min(12, len(r.Pushed))]
			if r.PushedAt != "" {
				pushed += " at " + r.PushedAt
			}
		}
		last := "none"
		if r.LastError != "" {
			last = r.LastErrorAt + ": " + r.LastError
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", r.Remote, r.URL, pushed, r.Waiting, last)
	}
	tw.Flush()
	printFollowed(e, rs)
}
