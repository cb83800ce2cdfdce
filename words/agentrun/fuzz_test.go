package agentrun

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// examples are the document's own examples, in testdata: the seeds of
// both fuzz tests.
var examples = []string{"minimal-typed-answer", "sift-node", "route-fragment", "evidence-gate"}

// FuzzInspect: whatever the text, the inspection answers (no
// panic), the same twice, OK exactly when it found no issue, and every
// issue is at /source and a pointer, with a line inside the document.
func FuzzInspect(f *testing.F) {
	for _, name := range examples {
		f.Add(readExample(f, name))
	}
	f.Add(`{"v":2,"name":"x","schemas":{"A":{"$ref":"A"}},"output":{"schemaId":"A","path":"a"},"root":{"node":"code","label":"c","code":"(s) => ({ a: s })","as":"a"}}`)
	f.Add(`{"v":2,"root":{"node":"parallel","label":"p","branches":[{"node":"map","label":"m","itemsPath":"x.y","as":"a","maxConcurrency":2,"body":{"node":"chain","label":"c","steps":[]}}]}}`)
	f.Fuzz(func(t *testing.T, src string) {
		r := Inspect(src)
		if r.OK != (len(r.Issues) == 0) {
			t.Fatalf("ok %v with %d issues", r.OK, len(r.Issues))
		}
		lines := strings.Count(src, "\n") + 1
		for _, is := range r.Issues {
			if !strings.HasPrefix(is.Path, "/source") || is.Line > lines || is.Line < 0 || is.Message == "" {
				t.Fatalf("issue %+v (the document has %d lines)", is, lines)
			}
		}
		again, _ := json.Marshal(Inspect(src))
		first, _ := json.Marshal(r)
		if string(again) != string(first) {
			t.Fatalf("two inspections differ:\n%s\n%s", first, again)
		}
	})
}

// FuzzParse: whatever the text, Parse answers a document or exactly one
// issue at /source with a line inside the text, never both; a document is
// valid JSON, each of its pointers has a line inside the text, and Node
// finds every labelled node at a pointer that leads to it.
func FuzzParse(f *testing.F) {
	for _, name := range examples {
		f.Add(readExample(f, name))
	}
	f.Add(`{"v":2,"v":2}`)
	f.Add("{\"v\":2}\n{}")
	f.Add(`[{"node":"code","label":"c"}]`)
	f.Add(`{"root":{"node":"chain","label":"a","steps":[{"node":"code","label":"a~/b"}]}}`)
	f.Fuzz(func(t *testing.T, src string) {
		doc, issues := Parse(src)
		lines := strings.Count(src, "\n") + 1
		if doc == nil {
			if len(issues) != 1 || issues[0].Path == "" || !strings.HasPrefix(issues[0].Path, "/source") || issues[0].Line < 1 || issues[0].Line > lines || issues[0].Message == "" {
				t.Fatalf("no document, and issues %+v (the text has %d lines)", issues, lines)
			}
			return
		}
		if issues != nil || doc.Value() == nil || !json.Valid([]byte(src)) {
			t.Fatalf("a document of text that is no JSON object, or with issues %+v", issues)
		}
		var walk func(ptr string, v any)
		walk = func(ptr string, v any) {
			if l := doc.Line(ptr); l < 1 || l > lines {
				t.Fatalf("%q at line %d of %d", ptr, l, lines)
			}
			switch x := v.(type) {
			case map[string]any:
				if label, ok := x["label"].(string); ok && x["node"] != nil && (ptr == "/root" || strings.HasPrefix(ptr, "/root/")) {
					p, n := doc.Node(label)
					if n == nil || n["label"] != label || at(doc.Value(), p) == nil {
						t.Fatalf("Node(%q) = %q, %v", label, p, n)
					}
				}
				for k, e := range x {
					walk(ptr+"/"+escapePointer(k), e)
				}
			case []any:
				for i, e := range x {
					walk(ptr+"/"+strconv.Itoa(i), e)
				}
			}
		}
		walk("", doc.Value())
	})
}

// at is the value a JSON pointer leads to in v, nil where it leads nowhere.
func at(v any, ptr string) any {
	if ptr == "" {
		return v
	}
	for _, seg := range strings.Split(ptr[1:], "/") {
		seg = strings.NewReplacer("~1", "/", "~0", "~").Replace(seg)
		switch x := v.(type) {
		case map[string]any:
			v = x[seg]
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}
