package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"quire/words/agentrun"
	"quire/words/refusal"
)

// quire definition inspect FILE: the inspection a save of an AgentRun
// workflow runs, on a file, without a vault.
func definitionInspectCommand(e *env) *cli.Command {
	return &cli.Command{
		Name: "inspect", Usage: "inspect an AgentRun workflow document without running it: its issues at their JSON pointers, each node's state keys, the final selection", ArgsUsage: "FILE",
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			file := c.Args().Get(0)
			if file == "" || c.NArg() > 1 {
				return refusal.Invalid("FILE", "quire definition inspect takes one file, the AgentRun document")
			}
			data, err := os.ReadFile(file)
			if err != nil {
				return refusal.Invalid("FILE", "%v", err)
			}
			if !agentrun.Is(string(data)) {
				if is := agentrun.Misread(string(data)); is != nil {
					return refusal.Invalid("FILE", "%s:%d: %s", file, is.Line, is.Message)
				}
				return refusal.Invalid("FILE", "%s is not an AgentRun document: a JSON object with \"v\": 2", file)
			}
			rep := agentrun.Inspect(string(data))
			if c.Bool("json") {
				if err := e.printJSON(rep); err != nil {
					return err
				}
			} else {
				printReport(e, file, rep)
			}
			if !rep.OK {
				return &refusal.Error{Code: refusal.InvalidInput, Message: fmt.Sprintf("%s: %d issues", file, len(rep.Issues)), Issues: rep.Issues}
			}
			return nil
		},
	}
}

func printReport(e *env, file string, rep *agentrun.Report) {
	for _, is := range rep.Issues {
		fmt.Fprintf(e.out, "%s:%d: %s: %s\n", file, is.Line, strings.TrimPrefix(is.Path, "/source"), is.Message)
	}
	for _, n := range rep.Nodes {
		var keys []string
		for _, p := range n.Produces {
			keys = append(keys, p.Key+": "+p.Value)
		}
		line := fmt.Sprintf("%s (%s)", n.Step, n.Kind)
		if len(keys) > 0 {
			line += " -> " + strings.Join(keys, "; ")
		}
		fmt.Fprintln(e.out, line)
	}
	if o := rep.Output; o != nil {
		fmt.Fprintf(e.out, "output %s: %s against %s: %s\n", o.Path, o.Value, o.SchemaID, o.Verdict)
	}
	for _, u := range rep.Unknown {
		fmt.Fprintln(e.out, "unknown:", u)
	}
	if rep.OK {
		fmt.Fprintf(e.out, "%s inspects clean.\n", file)
	}
}
