package main

import "github.com/urfave/cli/v2"

// commands are all of quire's commands, in this one list: `quire help`
// and the usage show them in its order, which is the order a newcomer
// meets them in, as the README's walkthrough does:
//
//   - init makes a vault, the first thing anyone runs, and clone makes one
//     from a remote a vault was pushed to;
//   - project, playbook and definition make what a run needs before it
//     starts: the project it belongs to, the playbook it is filed under,
//     the definition it runs;
//   - run and runs are the work itself, one run and the list of them;
//   - page reads what the runs add up to, a definition's views;
//   - comment and activity are the people around the work;
//   - address and shape explain the words the other commands take;
//   - check, janitor and reindex keep the vault sound, once there is
//     something in it to keep;
//   - serve, mcp and token open the vault to other programs, remote and
//     status take it past this machine (git remotes it is pushed to), and call
//     runs any operation by name, as those doors do: reached for once the
//     verbs above are known;
//   - tools, completion, version and help are about quire itself;
//   - resident, hidden, is started by the quire front, never by a person.
//
// A new command goes into this list at the place its reader would look
// for it; no file adds one by itself. root is quire as a command of
// these commands, for the help command.
func commands(e *env, root func() *cli.Command) []*cli.Command {
	return []*cli.Command{
		initCommand(e),
		cloneCommand(e),

		projectCommand(e),
		playbookCommand(e),
		definitionCommand(e),

		runCommand(e),
		runsCommand(e),

		pageCommand(e),

		commentCommand(e),
		activityCommand(e),

		addressCommand(e),
		shapeCommand(e),

		checkCommand(e),
		janitorCommand(e),
		reindexCommand(e),

		serveCommand(e),
		mcpCommand(e),
		tokenCommand(e),
		remoteCommand(e),
		nodeCommand(e),
		statusCommand(e),
		callCommand(e),

		toolsCommand(e),
		completionCommand(e),
		versionCommand(e),
		helpCommand(e, root),

		residentCommand(e),
	}
}
