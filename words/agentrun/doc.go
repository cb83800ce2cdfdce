// Package agentrun is the AgentRun document (spec/agentrun-workflow-format.md):
// a workflow definition whose source is JSON with "v": 2. quire never
// executes one: it saves it (definitions/workflow/<name>.json), inspects it
// without running anything (the document's "native inspection"), tries one
// code node in the fold's sandbox, and checks a run's input against
// input.schemaId's schema and its output against output.schemaId's. This package is the format: reading a
// document, its inspection, its node kinds and the check of a code node's
// code. The operations over saved documents (inspect_workflow, try_code)
// are the ledger's. It imports nothing above the words: the standard
// library, the JSON Schema compiler, esbuild's parser and the small
// JavaScript scanner quire shares with fold/module.
//
//	Is(source string) bool
//	Inspect(source string) *Report
//	Parse(source string) (*Doc, []refusal.Issue)
//	(*Doc).Value() map[string]any; (*Doc).Line(ptr string) int
//	(*Doc).Node(label string) (ptr string, node map[string]any)
//	(*Doc).OutputSchema() map[string]any; (*Doc).InputSchema() map[string]any
//	Misread(source string) *refusal.Issue
//	CheckCode(code string) []string; Shadowed() []string
//
// # Node kinds
//
// The node kinds are one table, kinds (kinds.go): each kind with the
// fields it requires, the others it permits, whether its state map must
// be nonempty, how it words a field it does not take, and its check, which
// reads the kind's own fields and answers the value the node stores. The
// fields several kinds share (label, as, out, state, requires) are checked
// alike for every kind before the kind's check. A new kind is one entry of
// the table and its check function.
//
// # Decisions where the document is silent
//
// docs/vault-format.md says them too:
//   - Every node has a label (a step's address is its label path) and the
//     labels are unique in the document.
//   - A document may carry quire's own top-level page and description
//     beside the AgentRun fields; nothing else.
//   - An issue is at "/source" followed by the JSON pointer of what it is
//     about in the document, with the document's line; a code issue also
//     names the line and column (both from 1) inside the code.
//   - A schema refers to a sibling only as {"$ref":"#/definitions/<Name>"};
//     no other reference is taken (nothing is loaded from anywhere).
//   - map's maxConcurrency is an integer from 1 to 64.
//   - The predicates are the two the document names: empty and
//     field_equals.
//   - A workflow source that begins with "{" is JSON; with AgentRun's own
//     top-level fields (v, schemas, root) it is meant as an AgentRun
//     document, and refused (Misread) unless its v is 2.
//   - A document nests at most MaxDepth levels and holds at most
//     MaxDocument bytes.
package agentrun
