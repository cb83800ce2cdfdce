package agentrun

import (
	"strings"
	"testing"
)

// JSON meant as an AgentRun document is refused unless its v is 2; other
// JSON and YAML are left to the YAML reader.
func TestMisread(t *testing.T) {
	for _, c := range []struct{ src, path, words string }{
		{`{"name": "x", "root": {}}`, "/source/v", "this one has root and no v."},
		{`{"v": 3, "schemas": {}}`, "/source/v", "; not 3."},
		{`{"v": "2", "schemas": {}}`, "/source/v", `, a number; not "2", a string.`},
		{"{\n  \"v\": 2,\n  \"name\": \"x\"\n  \"root\": {}\n}", "/source", "at line 4, column 3, invalid character"},
		{"{\n  \"v\": 2,", "/source", "at line 2, column 10, the text ends before its JSON does."},
		{`{"document": {"name": "x"}, "do": []}`, "", ""},
		{"document:\n  name: x\ndo: []\n", "", ""},
		{`{"v": 2, "name": "x"}`, "", ""},
	} {
		is := Misread(c.src)
		switch {
		case c.path == "" && is != nil:
			t.Errorf("%q: refused: %+v", c.src, is)
		case c.path != "" && (is == nil || is.Path != c.path || !strings.Contains(is.Message, c.words)):
			t.Errorf("%q: %+v, want %s: …%s", c.src, is, c.path, c.words)
		}
	}
}
