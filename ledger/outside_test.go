package ledger

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"quire/words/refusal"
)

// plant writes a file outside the vault and answers its path.
func plant(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// An output.schema is compiled with no loader: a $ref or $schema naming a
// file (or any URL) is refused at save at its pointer, and nothing quotes
// the file.
func TestOutputSchemaReadsNoFileOutside(t *testing.T) {
	f := newFixture(t)
	secret := plant(t, "secret.json", `{"type":"string","title":"PLANTED-SECRET-9","enum":["PLANTED-SECRET-9"]}`)
	for _, c := range []struct{ schema, at string }{
		{"type: object\n    properties:\n      a:\n        $ref: file://" + secret, "/output/schema/properties/a/$ref"},
		{"$ref: file://" + secret, "/output/schema/$ref"},
		{"$ref: " + filepath.Base(secret), "/output/schema/$ref"},
		{"$schema: file://" + secret + "\n    type: object", "/output/schema/$schema"},
		{"items:\n      - $dynamicRef: https://example.com/x.json", "/output/schema/items/0/$dynamicRef"},
	} {
		src := "document:\n  name: x\noutput:\n  schema:\n    " + c.schema + "\n"
		r := f.refuse("create_definition", saveArgs("workflow", "leaky", src), refusal.InvalidInput, "/source", c.at+": ")
		if r.Issues[0].Line != 4 || strings.Contains(fmt.Sprint(r), "PLANTED-SECRET") {
			t.Fatalf("%s: %+v", c.schema, r)
		}
	}
	// A reference inside the document is kept.
	f.call("create_definition", saveArgs("workflow", "local-ref", "document:\n  name: x\noutput:\n  schema:\n    $defs:\n      month:\n        type: string\n    type: object\n    properties:\n      m:\n        $ref: '#/$defs/month'\n    const: {$ref: 'file:///is/data'}\n"))
	// A schema that reaches the compiler some other way (a definition
	// written by hand) loads nothing either.
	for _, s := range []any{
		map[string]any{"$ref": "file://" + secret},
		map[string]any{"properties": map[string]any{"a": map[string]any{"$ref": filepath.Base(secret)}}},
		map[string]any{"$schema": "file://" + secret},
	} {
		_, err := compileSchema(s)
		if err == nil || strings.Contains(err.Error(), "PLANTED-SECRET") || !strings.Contains(err.Error(), "loads no schema from elsewhere") {
			t.Fatalf("%v: %v", s, err)
		}
	}
}

// Front matter and YAML have no tags that load files: a tag is text.
func TestYAMLReadsNoFileOutside(t *testing.T) {
	f := newFixture(t)
	secret := plant(t, "secret.yaml", "PLANTED-SECRET-5\n")
	for i, src := range []string{
		"document:\n  name: x\n  summary: !include " + secret + "\n",
		"document:\n  name: x\n  summary: !!binary " + secret + "\n",
		"document:\n  name: x\noutput:\n  schema:\n    title: !include " + secret + "\n",
	} {
		name := fmt.Sprintf("tagged-%d", i)
		res, err := f.l.Call(t.Context(), "create_definition", []byte(saveArgs("workflow", name, src)))
		if strings.Contains(fmt.Sprint(res, err), "PLANTED-SECRET") {
			t.Fatalf("%q: %v %v", src, res, err)
		}
		if err == nil {
			got := f.call("get_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":%q}`, name))
			if strings.Contains(fmt.Sprintf("%+v", got), "PLANTED-SECRET") {
				t.Fatalf("%q: %+v", src, got)
			}
		}
	}
}
