package ledger

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

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
	info.InputSchema = doc.InputSchema()
	return nil
}

// checkInput checks a run's input against an AgentRun document's
// input.schemaId when the run starts, as its output is checked when it
// ends: a run begun on an input its workflow cannot take would only fail
// later, in the executor. No input is null, which the schema refuses
// unless it takes null.
func checkInput(info *docInfo, input json.RawMessage) error {
	if info == nil || info.InputSchema == nil {
		return nil
	}
	sch, err := compileSchema(info.InputSchema)
	if err != nil {
		return nil // the save refused a catalog that does not compile
	}
	if len(input) == 0 {
		input = json.RawMessage("null")
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(input))
	if err != nil {
		return refusal.Invalid("/input", "not JSON")
	}
	if issues := schemaIssues(sch, v, "/input"); len(issues) > 0 {
		return refusal.WithIssues(refusal.InvalidInput, issues)
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
