package agentrun

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

func readExample(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The document's own examples inspect clean, with the state keys the
// document says each node produces.
func TestExamplesInspectClean(t *testing.T) {
	for _, c := range []struct {
		file    string
		keys    map[string]string // step → "key=value; key=value"
		verdict string
	}{
		{"minimal-typed-answer", map[string]string{"extract-facts": "facts=Facts"}, "matches"},
		{"sift-node", map[string]string{
			"migration-notes/select-migration-notes": "selected={answers: array of unknown (raw answers), items: array of Note, values: array of MigrationQuestions}",
			"migration-notes/summarize-migration":    "report=Report"}, "matches"},
		{"route-fragment", map[string]string{
			"check-migration-detail":                         "routing={taken: one of needs_details, ready}",
			"check-migration-detail/summarize-ready-changes": "report=Report"}, "matches"},
		{"evidence-gate", map[string]string{
			"evidence-gate/check-support":    "check=Check; check$answers=unknown (raw answers)",
			"evidence-gate/gate-probability": "gate=unknown (dynamic code)",
			"evidence-gate/assemble-result":  "result=unknown (dynamic code)"}, "unknown"},
	} {
		r := Inspect(readExample(t, c.file))
		if !r.OK || len(r.Issues) != 0 {
			t.Errorf("%s: issues %+v", c.file, r.Issues)
			continue
		}
		got := map[string]string{}
		for _, n := range r.Nodes {
			var parts []string
			for _, p := range n.Produces {
				parts = append(parts, p.Key+"="+p.Value)
			}
			if len(parts) > 0 {
				got[n.Step] = strings.Join(parts, "; ")
			}
		}
		for step, want := range c.keys {
			if got[step] != want {
				t.Errorf("%s: %s produces %q, want %q", c.file, step, got[step], want)
			}
		}
		if len(got) != len(c.keys) {
			t.Errorf("%s: produces %v, want %v", c.file, got, c.keys)
		}
		if r.Output == nil || r.Output.Verdict != c.verdict {
			t.Errorf("%s: output %+v, want verdict %s", c.file, r.Output, c.verdict)
		}
		if c.verdict == "unknown" && len(r.Unknown) == 0 {
			t.Errorf("%s: says nothing of where shapes stay unknown", c.file)
		}
	}
}

// Well-formed code that a scanner reading it as text would misjudge
// inspects clean: a regex just inside a template's ${ (read as a division
// before the scanner was shared, its comma or semicolon was "more than one
// expression"), a / that divides after a template, braces in strings.
func TestCodeScannedAsCode(t *testing.T) {
	src := readExample(t, "evidence-gate")
	for _, code := range []string{
		"(s) => `${/,/.test(s.claim) ? 'list' : 'one'}`",
		"(s) => `${/;/.source}`",
		"(s) => `${s.claim}`.length / 2 > 1 ? '}' : '{'",
		"(s) => /[/,]}/.test(`a, ${s.x}`) // a comment, with a comma",
	} {
		r := Inspect(variant(t, src, "/root/steps/1/code", code))
		if !r.OK || len(r.Issues) != 0 {
			t.Errorf("%s: issues %+v", code, r.Issues)
		}
	}
}

// del marks a member to remove in a variant.
type del struct{}

// variant sets (or with del, removes) the member at ptr of a copy of the
// document.
func variant(t testing.TB, src, ptr string, val any) string {
	t.Helper()
	var doc any
	if err := json.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	segs := strings.Split(ptr, "/")[1:]
	cur := doc
	for i, s := range segs {
		s = strings.NewReplacer("~1", "/", "~0", "~").Replace(s)
		last := i == len(segs)-1
		switch x := cur.(type) {
		case map[string]any:
			if last {
				if _, isDel := val.(del); isDel {
					delete(x, s)
				} else {
					x[s] = val
				}
			}
			cur = x[s]
		case []any:
			var k int
			fmt.Sscan(s, &k)
			if last {
				x[k] = val
			}
			cur = x[k]
		default:
			t.Fatalf("no %s in the document", ptr)
		}
	}
	b, _ := json.MarshalIndent(doc, "", "  ")
	return string(b)
}

func raw(s string) any {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		panic(s + ": " + err.Error())
	}
	return v
}

// For every rule, a broken variant of an example is refused at its
// pointer, with words that say the rule.
func TestRulesRefusedAtPointer(t *testing.T) {
	const (
		min   = "minimal-typed-answer"
		sift  = "sift-node"
		route = "route-fragment"
		gate  = "evidence-gate"
	)
	code := "/root/steps/1/code"
	for _, c := range []struct {
		file, ptr string
		val       any
		at, words string
	}{
		// top-level fields
		{min, "/v", del{}, "", ""}, // no longer an AgentRun document: see below
		{min, "/name", "", "/name", "nonempty name"},
		{min, "/schemas", del{}, "/schemas", "catalog"},
		{min, "/input", raw(`{"schema":"Input"}`), "/input", "schemaId"},
		{min, "/input/schemaId", "Inputs", "/input/schemaId", `"Inputs" names no schema`},
		{min, "/output/schemaId", "Answer", "/output/schemaId", `"Answer" names no schema`},
		{min, "/output/path", del{}, "/output", "output is"},
		{min, "/root", del{}, "/root", "root"},
		{min, "/extra", 1, "/extra", "not one of them"},
		// schemas: $ref form, valid JSON Schema
		{sift, "/schemas/Input/properties/notes/items", raw(`{"$ref":"Note"}`), "/schemas/Input/properties/notes/items/$ref", `{"$ref":"#/definitions/Note"}`},
		{sift, "/schemas/Input/properties/notes/items", raw(`{"$ref":"#/definitions/Nope"}`), "/schemas/Input/properties/notes/items/$ref", "names no schema"},
		{min, "/schemas/Facts/properties/date/type", "text", "/schemas/Facts/properties/date/type", "Not a valid JSON Schema"},
		{min, "/schemas/Facts/required", "date", "/schemas/Facts/required", "Not a valid JSON Schema"},
		// node kinds
		{min, "/root/node", "summarize", "/root/node", "node is the node's kind"},
		{min, "/root/label", del{}, "/root/label", "Every node has a label"},
		{min, "/root/out", "Fact", "/root/out", `"Fact" names no schema`},
		{min, "/root/instructions", del{}, "/root", "needs instructions"},
		{min, "/root/requires", raw(`["{text}"]`), "/root/requires/0", "requires names a path"},
		{gate, code, "return { accepted: true }", code, "not a bare statement body"},
		{gate, code, "async (s) => ({ accepted: true })", code, "an async function"},
		{gate, code, "function* (s) { yield 1 }", code, "a generator"},
		{gate, code, "(s) => ({ at: Date.now() })", code, "line 1, column 15 of the code: Date is unavailable"},
		{gate, code, "(s) => {\n  return new Promise((r) => setTimeout(r, 1));\n}", code, "line 2, column 14 of the code: Promise is unavailable"},
		{gate, code, "(s) => {\n  return new Promise((r) => setTimeout(r, 1));\n}", code, "setTimeout is unavailable"},
		{gate, code, "(s) => Function('return 1')()", code, "Function is unavailable"},
		{gate, code, "(s) => eval('1')", code, "eval is unavailable"},
		{gate, code, "(s) => fetch('https://example.com')", code, "fetch is unavailable"},
		{gate, code, "(s) => globalThis.process", code, "globalThis is unavailable"},
		{gate, code, "(s) => {\n  return {x: 1\n}", code, "line 3, column 2 of the code"},
		{gate, code, "(s) => 1, 2", code, "a comma or a semicolon"},
		{gate, code, "(function (s) { return 1 })(1)", code, "nothing follows the function"},
		{gate, "/root/steps/1/state", raw(`{}`), "/root/steps/1/state", "code node permits only node, label, code and optional as"},
		{gate, "/root/steps/1/requires", raw(`["record"]`), "/root/steps/1/requires", "code node permits only"},
		{gate, "/root/steps/0/instructions", "Is it supported?", "/root/steps/0/instructions", "A judge has no instructions"},
		{gate, "/root/steps/0/state", raw(`{}`), "/root/steps/0/state", "nonempty state map"},
		{gate, "/root/steps/0/as", del{}, "/root/steps/0", "needs as"},
		{gate, "/schemas/Check/properties/supported", raw(`{"type":"string","description":"Why?"}`), "/schemas/Check/properties/supported", "flat"},
		{gate, "/schemas/Check/properties/supported", raw(`{"type":"integer","description":"How well?","criteria":["no"]}`), "/schemas/Check/properties/supported", "2 to 10 level descriptions"},
		{gate, "/schemas/Check/properties/supported/description", del{}, "/schemas/Check/properties/supported", "description"},
		{sift, "/root/steps/0/keep", del{}, "/root/steps/0", "needs keep"},
		{sift, "/root/steps/0/itemsPath", del{}, "/root/steps/0", "needs itemsPath"},
		{sift, "/root/steps/0/keep/path", "relevant", "/root/steps/0/keep/path", "no question of out"},
		{route, "/root/branches/ready", del{}, "/root/branches", "at least two named branches"},
		{route, "/root/branches/ready/body", del{}, "/root/branches/ready", "with body"},
		{route, "/root/unsure/branch", "maybe", "/root/unsure", "one of the route's branches"},
		{route, "/root/unsure", del{}, "/root", "needs unsure"},
		{route, "/root/state", raw(`{}`), "/root/state", "nonempty state map"},
		{route, "/root/branches/needs_details/body/when", del{}, "/root/branches/needs_details/body", "needs when"},
		{route, "/root/branches/needs_details/body/label", "summarize-ready-changes", "/root/branches/ready/body/label", "labels are unique"},
		{sift, "/root", raw(`{"node":"loop","label":"again","until":{"predicate":"empty","path":"notes"},"maxIters":21,"body":{"node":"code","label":"c","code":"(s) => ({})"}}`), "/root/maxIters", "1 through 20"},
		{sift, "/root", raw(`{"node":"loop","label":"again","maxIters":3,"body":{"node":"code","label":"c","code":"(s) => ({})"}}`), "/root", "needs until"},
		{sift, "/root", raw(`{"node":"map","label":"each","itemsPath":"notes","as":"rows","maxConcurrency":1000,"body":{"node":"extract","label":"row","instructions":"x","out":"Note","as":"row"}}`), "/root/maxConcurrency", "bounds maxConcurrency"},
		{sift, "/root", raw(`{"node":"map","label":"each","itemsPath":"notes","as":"rows","body":{"node":"extract","label":"row","instructions":"x","out":"Note","as":"row"}}`), "/root", "needs maxConcurrency"},
		{sift, "/root", raw(`{"node":"call","label":"read","tool":"read","args":{"path":"x"},"out":"Note","as":"read","deadline_s":0}`), "/root/deadline_s", "positive"},
		{sift, "/root", raw(`{"node":"call","label":"read","tool":"read","out":"Note","as":"read","deadline_s":5}`), "/root", "needs args"},
		{sift, "/root", raw(`{"node":"parallel","label":"both","branches":[{"node":"extract","label":"a","instructions":"x","out":"Note","as":"same"},{"node":"extract","label":"b","instructions":"y","out":"Note","as":"same"}]}`), "/root/branches/1", "different top-level keys"},
		// edges: paths a closed producer excludes
		{min, "/root/requires", raw(`["body"]`), "/root/requires/0", `"body" is not in workflow state`},
		{sift, "/root/steps/2/requires", raw(`["selected.notes"]`), "/root/steps/2/requires/0", `has no "notes"`},
		{sift, "/root/steps/1/when/path", "selected.items.title", "/root/steps/1/when/path", "an array is still an array"},
		{gate, "/root/steps/0/state/claim", "{record.text}", "/root/steps/0/state/claim", `has no "text"`},
		{min, "/output/path", "facts.when", "/output/path", `has no "when"`},
		{sift, "/root", raw(`{"node":"map","label":"each","itemsPath":"notes","as":"report","maxConcurrency":2,"body":{"node":"extract","label":"row","instructions":"x","out":"Report","as":"report"}}`), "/output/path", "an array is still an array"},
	} {
		src := variant(t, readExample(t, c.file), c.ptr, c.val)
		if c.at == "" {
			if Is(src) {
				t.Errorf("%s without v is still an AgentRun document", c.file)
			}
			continue
		}
		r := Inspect(src)
		found := false
		for _, is := range r.Issues {
			if is.Path == "/source"+c.at && strings.Contains(is.Message, c.words) {
				found = true
				if is.Line < 1 {
					t.Errorf("%s %s: issue without its line: %+v", c.file, c.ptr, is)
				}
			}
		}
		if !found || r.OK {
			t.Errorf("%s with %s = %v: want an issue at %s saying %q; got %+v", c.file, c.ptr, c.val, c.at, c.words, r.Issues)
		}
	}
	// A document nested deeper than 128 levels is refused before its
	// schemas are compiled (whose check would take minutes).
	deep := `{"v":2,"name":"d","schemas":{"Deep":` + strings.Repeat(`{"not":`, 200) + `{}` + strings.Repeat(`}`, 200) + `},"root":{"node":"code","label":"c","code":"(s) => 1"}}`
	if r := Inspect(deep); r.OK || r.Issues[0].Path != "/source" || !strings.Contains(r.Issues[0].Message, "nests 203 levels; a document nests at most 128") {
		t.Errorf("a deep document: %+v", r.Issues)
	}
}

// The problems of several schemas of the catalog come back in the order
// of their pointers, however the compiler meets them: an inspection
// answers the same twice.
func TestCatalogProblemsInOrder(t *testing.T) {
	src := "{\"A\":2,\n  \"schemas\": {\"8\": \"\", \"X8\": \"2\", \"B\": {\"type\": 3}, \"a\": []} }"
	var first string
	for i := 0; i < 50; i++ {
		var paths []string
		for _, is := range Inspect(src).Issues {
			if strings.HasPrefix(is.Path, "/source/schemas/") {
				paths = append(paths, is.Path)
			}
		}
		got := strings.Join(paths, " ")
		if i == 0 {
			first = got
			if got != "/source/schemas/8 /source/schemas/B/type /source/schemas/X8 /source/schemas/a" {
				t.Fatalf("schema problems at %s", got)
			}
		} else if got != first {
			t.Fatalf("inspection %d: %s, the first: %s", i, got, first)
		}
	}
}
