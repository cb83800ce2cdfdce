package ledger

import (
	"strings"

	"quire/words/agentrun"
	"quire/words/refusal"
)

// AgentRun documents are workflows whose source is JSON with "v": 2; the
// format (reading a document, its inspection, its node kinds and the code
// check) is quire/words/agentrun. The ledger saves them as workflows and
// serves inspect_workflow and try_code (agentrun_ops.go).

// agentRunInfo reads what ledger needs of an AgentRun document: the
// output schema a run's end_run is checked against (output.schemaId's
// schema, with the catalog beside it); with check, the inspection's
// issues.
func agentRunInfo(info *docInfo, source string, check bool) []refusal.Issue {
	if check {
		if r := agentrun.Inspect(source); !r.OK {
			return r.Issues
		}
	}
	doc, _ := agentrun.Parse(source)
	if doc == nil {
		return nil
	}
	if s := doc.OutputSchema(); s != nil {
		info.Schema = s
	}
	return nil
}

// formOf names a workflow's form by its file.
func formOf(p string) string {
	if strings.HasSuffix(p, ".json") {
		return "an AgentRun document"
	}
	return "a YAML workflow"
}
