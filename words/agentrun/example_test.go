package agentrun_test

import (
	"fmt"

	"quire/words/agentrun"
)

// Inspecting a document runs none of it: each node's state keys, the final
// selection's verdict, and each problem at its JSON pointer and line.
func ExampleInspect() {
	doc := `{
  "v": 2,
  "name": "count-notes",
  "schemas": {
    "Input": {"type": "object", "properties": {"notes": {"type": "array", "items": {"type": "string"}}}, "additionalProperties": false},
    "Count": {"type": "object", "properties": {"n": {"type": "integer"}}}
  },
  "input": {"schemaId": "Input"},
  "output": {"schemaId": "Count", "path": "count"},
  "root": {"node": "chain", "label": "count", "steps": [
    {"node": "extract", "label": "tally", "instructions": "Count the notes.", "requires": ["notes"], "out": "Count", "as": "count"},
    {"node": "code", "label": "stamp", "code": "(s) => ({ at: Date.now() })", "as": "at"}
  ]}
}`
	r := agentrun.Inspect(doc)
	for _, n := range r.Nodes {
		fmt.Println(n.Step, n.Kind, n.Produces)
	}
	fmt.Println("output:", r.Output.Path, r.Output.Verdict)
	for _, is := range r.Issues {
		fmt.Printf("%s line %d: %s\n", is.Path, is.Line, is.Message)
	}
	fmt.Println("ok:", r.OK)
	// Output:
	// count chain []
	// count/tally extract [{count Count}]
	// count/stamp code [{at unknown (dynamic code)}]
	// output: count matches
	// /source/root/steps/1/code line 12: line 1, column 15 of the code: Date is unavailable to a code node (the executor shadows Date, Promise, timers, Function, eval and host or network globals); use synchronous data operations such as Math, JSON, Array, Object, Map and Set.
	// ok: false
}

// A code node's code is one synchronous function expression.
func ExampleCheckCode() {
	fmt.Println(agentrun.CheckCode("(s) => ({ count: s.items.length })"))
	fmt.Println(agentrun.CheckCode("async (s) => s"))
	// Output:
	// []
	// [line 1, column 1 of the code: code is a synchronous function; an async function returns a Promise.]
}
