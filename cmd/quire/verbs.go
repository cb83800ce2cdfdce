package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"
	"gopkg.in/yaml.v3"

	"quire/internal/front"
	"quire/ledger"
	"quire/words/address"
	"quire/words/agentrun"
	"quire/words/page"
	"quire/words/refusal"
)

// The verbs for what people write: `quire project create|list`,
// `quire playbook create|list|show` and `quire definition
// save|show|list|retire`, each a front over the operations of the table
// (create_project, create_playbook, create_definition and
// update_definition, ...), so that no one has to write JSON to make them.

func actorFlag() cli.Flag {
	return &cli.StringFlag{Name: "actor", EnvVars: []string{"QUIRE_ACTOR"}, Usage: "who does it (the commit's author); quire when left out"}
}

func projectCommand(e *env) *cli.Command {
	return &cli.Command{
		Name: "project", Usage: "make and list projects, the parents every run belongs to (member_of)",
		Subcommands: []*cli.Command{
			{
				Name: "create", Usage: "make a project and print its uid", ArgsUsage: "NAME",
				Flags:  []cli.Flag{actorFlag(), jsonFlag, requestIDFlag},
				Before: wantArgs(1, -1, "NAME, the project's name"),
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					return callAndShow(e, c, l, "create_project", map[string]any{"name": strings.Join(c.Args().Slice(), " "), "actor": c.String("actor")},
						func(res any) {
							p := res.(*ledger.Project)
							fmt.Fprintf(e.out, "Made the project %s: uid %s (%s)\n", p.Name, p.UID, p.Path)
						})
				}),
			},
			{
				Name: "list", Usage: "list the projects, in the order they were made", Flags: []cli.Flag{jsonFlag},
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					return callAndShow(e, c, l, "list_projects", map[string]any{}, func(res any) {
						tw := tabwriter.NewWriter(e.out, 2, 4, 2, ' ', 0)
						fmt.Fprintln(tw, "UID\tNAME\tPATH")
						for _, p := range res.([]ledger.Project) {
							fmt.Fprintf(tw, "%s\t%s\t%s\n", p.UID, p.Name, p.Path)
						}
						tw.Flush()
					})
				}),
			},
		},
	}
}

func playbookCommand(e *env) *cli.Command {
	show := func(res any) {
		p := res.(*ledger.Playbook)
		fmt.Fprintf(e.out, "%s  %s  %s, %s\n", p.Playbook, p.Name, plural(p.Definitions, "definition"), plural(p.Runs, "run"))
		if p.Description != "" {
			fmt.Fprintf(e.out, "  %s\n", p.Description)
		}
	}
	return &cli.Command{
		Name: "playbook", Usage: "make, list and show playbooks",
		Subcommands: []*cli.Command{
			{
				Name: "create", Usage: "make a playbook", ArgsUsage: "ID (3 to 48 lowercase letters, digits and hyphens, beginning with a letter)",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "name", Required: true, Usage: "its name as people read it"},
					&cli.StringFlag{Name: "description", Usage: textUsage("what it is for")},
					actorFlag(), jsonFlag, requestIDFlag,
				},
				Before: wantArgs(1, 1, "ID, the playbook's id"),
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					desc, err := e.text(c, "description")
					if err != nil {
						return err
					}
					return callAndShow(e, c, l, "create_playbook", map[string]any{"playbook": c.Args().First(), "name": c.String("name"),
						"description": desc, "actor": c.String("actor")}, show)
				}),
			},
			{
				Name: "move", Usage: "make a node the playbook's home, the one server that writes it (refused unless this vault holds every commit its remotes hold)",
				ArgsUsage: "ID", Flags: []cli.Flag{&cli.StringFlag{Name: "home", Required: true, Usage: "the node's name (quire node shows this vault's)"}, actorFlag()},
				Before: wantArgs(1, 1, "ID, the playbook's id"),
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					if err := l.MovePlaybook(c.Context, c.Args().First(), c.String("home"), c.String("actor")); err != nil {
						return err
					}
					fmt.Fprintf(e.out, "%s is written at %s from now on.\n", c.Args().First(), c.String("home"))
					return nil
				}),
			},
			{
				Name: "list", Usage: "list the playbooks, in the order they were made", Flags: []cli.Flag{jsonFlag},
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					return callAndShow(e, c, l, "list_playbooks", map[string]any{}, func(res any) {
						tw := tabwriter.NewWriter(e.out, 2, 4, 2, ' ', 0)
						fmt.Fprintln(tw, "PLAYBOOK\tNAME\tDEFINITIONS\tRUNS")
						for _, p := range res.([]*ledger.Playbook) {
							fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", p.Playbook, p.Name, p.Definitions, p.Runs)
						}
						tw.Flush()
					})
				}),
			},
			{
				Name: "show", Usage: "show a playbook: its name, description and how many definitions and runs it holds", ArgsUsage: "ID",
				Flags:  []cli.Flag{jsonFlag},
				Before: wantArgs(1, 1, "ID, the playbook's id"),
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					return callAndShow(e, c, l, "get_playbook", map[string]any{"playbook": c.Args().First()}, show)
				}),
			},
		},
	}
}

// defName reads a command's [TYPE/]NAME argument; the type is --type's
// when the argument names none.
func defName(c *cli.Context) (typ, name string, err error) {
	if err := needArgs(c, 1, 1, "[TYPE/]NAME, the definition's name"); err != nil {
		return "", "", err
	}
	typ, name = c.String("type"), c.Args().First()
	if t, n, ok := strings.Cut(name, "/"); ok {
		typ, name = t, n
	}
	return typ, name, nil
}

func definitionCommand(e *env) *cli.Command {
	defTypes := strings.Join(append(address.Types(), ledger.TypePage), ", ")
	typeOpt := func(what string) cli.Flag {
		return &cli.StringFlag{Name: "type", Value: "workflow", Usage: what + ": " + defTypes}
	}
	showSaved := func(verb string) func(res any) {
		return func(res any) {
			d := res.(*ledger.Definition)
			fmt.Fprintf(e.out, "%s %s/%s version %d (%s)\n", verb, d.Type, d.Name, d.Version, d.Path)
			for _, w := range d.Warnings {
				fmt.Fprintf(e.err, "quire: warning: %s line %d: %s\n", w.Path, w.Line, w.Message)
			}
		}
	}
	return &cli.Command{
		Name: "definition", Usage: "save, show, list and retire a playbook's definitions (workflows, functions, pages)",
		Subcommands: []*cli.Command{
			{
				Name: "save", ArgsUsage: "FILE (- reads standard input)",
				Usage: "make a definition from a file, or save its new version: the type from --type, else the file's extension and content " +
					"(NAME.yaml, .yml or .json: a workflow, or a page when it holds only a page's keys; NAME.TYPE.md: a function of that type), " +
					"the name from --name, else a workflow's document.name (an AgentRun document's name), else the file's name",
				Flags: []cli.Flag{
					playbookFlag(),
					&cli.StringFlag{Name: "type", Usage: "the definition's type, when the file does not say it: " + defTypes},
					&cli.StringFlag{Name: "name", Usage: "the definition's name, when the file does not say it"},
					actorFlag(), jsonFlag, requestIDFlag,
				},
				Before: wantArgs(1, 1, "FILE, the definition's document"),
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					file := c.Args().First()
					at := "@" + file
					if file == "-" {
						at = "-"
					}
					source, from, err := e.readAt("FILE", at, true)
					if err != nil {
						return err
					}
					e.files = map[string]string{"/source": from}
					typ, name, err := definitionOfFile(file, source, c.String("type"), c.String("name"))
					if err != nil {
						return err
					}
					args := map[string]any{"playbook": c.String("playbook"), "type": typ, "name": name}
					raw, _ := json.Marshal(args)
					cur, err := l.Call(c.Context, "get_definition", raw)
					op, verb := "update_definition", "Saved"
					if r, ok := refusal.As(err); ok && r.Code == refusal.NotFound && len(r.Issues) > 0 && r.Issues[0].Path == "/name" {
						op, verb = "create_definition", "Made"
					} else if err != nil {
						return err
					} else if cur.(*ledger.Definition).Source == source {
						// The same document again: nothing to save, as
						// kubectl apply says "unchanged".
						if c.Bool("json") {
							return e.printJSON(cur)
						}
						d := cur.(*ledger.Definition)
						fmt.Fprintf(e.out, "Unchanged %s/%s version %d (%s)\n", d.Type, d.Name, d.Version, d.Path)
						return nil
					}
					args["source"], args["actor"] = source, c.String("actor")
					return callAndShow(e, c, l, op, args, showSaved(verb))
				}),
			},
			{
				Name: "show", Usage: "show a definition: its version, whether it is retired, and its document", ArgsUsage: "[TYPE/]NAME", Before: wantArgs(1, 1, "[TYPE/]NAME, the definition's name"),
				Flags: []cli.Flag{playbookFlag(), typeOpt("the definition's type, when NAME does not say it"),
					&cli.IntFlag{Name: "version", Usage: "an earlier version to read back; the current one when left out"}, jsonFlag},
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					typ, name, err := defName(c)
					if err != nil {
						return err
					}
					args := map[string]any{"playbook": c.String("playbook"), "type": typ, "name": name}
					if c.IsSet("version") {
						args["version"] = c.Int("version")
					}
					return callAndShow(e, c, l, "get_definition", args, func(res any) {
						d := res.(*ledger.Definition)
						state := ""
						if d.Retired {
							state = ", retired"
						}
						fmt.Fprintf(e.out, "# %s/%s version %d of %d%s (%s, saved %s)\n\n%s", d.Type, d.Name, d.Version, d.Latest, state, d.Path, d.Saved, d.Source)
						if !strings.HasSuffix(d.Source, "\n") {
							fmt.Fprintln(e.out)
						}
					})
				}),
			},
			{
				Name: "list", Usage: "list a playbook's definitions with their current versions",
				Flags: []cli.Flag{playbookFlag(), jsonFlag},
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					return callAndShow(e, c, l, "list_definitions", map[string]any{"playbook": c.String("playbook")}, func(res any) {
						tw := tabwriter.NewWriter(e.out, 2, 4, 2, ' ', 0)
						fmt.Fprintln(tw, "TYPE\tNAME\tVERSION\tSHAPE\tSTATE\tSAVED")
						for _, d := range res.([]*ledger.Definition) {
							state, shape := "current", ""
							if d.Retired {
								state = "retired"
							}
							if d.Details != nil {
								shape = d.Details.Shape
							}
							fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", d.Type, d.Name, d.Version, shape, state, d.Saved)
						}
						tw.Flush()
					})
				}),
			},
			{
				Name: "retire", Usage: "retire a definition: it takes no new runs or versions; its runs and versions stay readable", ArgsUsage: "[TYPE/]NAME", Before: wantArgs(1, 1, "[TYPE/]NAME, the definition's name"),
				Flags: []cli.Flag{playbookFlag(), typeOpt("the definition's type, when NAME does not say it"), actorFlag(), jsonFlag, requestIDFlag},
				Action: withLedger(func(c *cli.Context, l *ledger.Ledger) error {
					typ, name, err := defName(c)
					if err != nil {
						return err
					}
					return callAndShow(e, c, l, "retire_definition", map[string]any{"playbook": c.String("playbook"), "type": typ, "name": name,
						"actor": c.String("actor")}, showSaved("Retired"))
				}),
			},
			definitionInspectCommand(e),
		},
	}
}

// definitionOfFile finds a definition's type and name from its file, for
// quire definition save: what the flags say first, then the file.
//   - The type: NAME.TYPE.md (close.computation.md) is a function of that
//     type; a .md file without one needs --type. A YAML or JSON file (or
//     standard input that does not begin with front matter) is a
//     workflow, or a page when its mapping holds only a page's keys.
//   - The name: a workflow's document.name (an AgentRun document's
//     top-level name), else the file's name without
//     its extensions. Standard input needs --name unless the document
//     names itself.
func definitionOfFile(file, source, typ, name string) (string, string, error) {
	base := filepath.Base(file)
	stem, ext := base, ""
	if i := strings.IndexByte(base, '.'); i > 0 {
		stem, ext = base[:i], base[i:]
	}
	function := front.Begins([]byte(source)) || strings.HasSuffix(ext, ".md")
	var doc map[string]any
	if !function {
		// A document that does not parse is the save's to refuse, at its line.
		_ = yaml.Unmarshal([]byte(source), &doc)
	}
	if typ == "" {
		switch {
		case function:
			parts := strings.Split(strings.TrimPrefix(ext, "."), ".")
			if len(parts) == 2 && parts[1] == "md" && address.ValidType(parts[0]) {
				typ = parts[0]
			} else {
				return "", "", refusal.Invalid("--type", "%s is a function's document (Markdown with front matter): say its type with --type (%s), or name the file NAME.TYPE.md", describe(file), strings.Join(address.Types(), ", "))
			}
		case len(doc) > 0 && onlyPageKeys(doc):
			typ = ledger.TypePage
		default:
			typ = "workflow"
		}
	}
	if name == "" && typ == "workflow" && agentrun.Is(source) {
		// An AgentRun document names itself at the top level.
		if n, ok := doc["name"].(string); ok && address.ValidName(n) {
			name = n
		}
	}
	if name == "" {
		if d, ok := doc["document"].(map[string]any); ok && typ == "workflow" {
			if n, ok := d["name"].(string); ok && address.ValidName(n) {
				name = n
			}
		}
	}
	if name == "" && file != "-" {
		name = stem
	}
	if name == "" {
		return "", "", refusal.Invalid("--name", "%s does not name its definition: say it with --name", describe(file))
	}
	return typ, name, nil
}

func onlyPageKeys(doc map[string]any) bool {
	for k := range doc {
		if !slices.Contains(page.Keys, k) {
			return false
		}
	}
	return true
}

func describe(file string) string {
	if file == "-" {
		return "standard input"
	}
	return file
}
