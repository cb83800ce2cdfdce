package front

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// readCases are Read's hard cases; FuzzRead starts from them too.
var readCases = []struct {
	name, doc string
	// On success: the body, and the keys of the front matter with their
	// lines in the document ("a@2 b@3"). On refusal: the Error's line and
	// words, or ErrNone when none.
	body, keys string
	none       bool
	line       int
	words      string
	syntax     bool // the Error says the YAML does not parse
}{
	{name: "fences", doc: "---\ntitle: Close\nn: 2\n---\nThe body.\n", body: "The body.\n", keys: "title@2 n@3"},
	{name: "fences with trailing blanks", doc: "--- \t\na: 1\n---  \nbody", body: "body", keys: "a@2"},
	{name: "closing fence at the end", doc: "---\na: 1\n---", body: "", keys: "a@2"},
	{name: "no front matter", doc: "a: 1\n---\nb: 2\n", none: true},
	{name: "a blank line before the fence", doc: "\n---\na: 1\n---\n", none: true},
	{name: "an indented first fence", doc: " ---\na: 1\n---\n", none: true},
	{name: "empty document", doc: "", none: true},
	{name: "empty front matter", doc: "---\n---\nbody\n", body: "body\n", keys: ""},
	{name: "front matter of blank lines", doc: "---\n\n\n---\nbody", body: "body", keys: ""},
	{name: "duplicate key", doc: "---\na: 1\nb: 2\na: 3\n---\n", line: 4, words: `The key "a" is written twice in one mapping (first at line 2).`},
	{name: "duplicate key in a nested mapping", doc: "---\nx:\n  - k: 1\n    j: 2\n    k: 3\n---\n", line: 5, words: `The key "k" is written twice in one mapping (first at line 3).`},
	{name: "indented --- in a block scalar", doc: "---\ntemplate: |\n  one\n  ---\n  two\nafter: 1\n---\nbody\n", body: "body\n", keys: "template@2 after@6"},
	{name: "--- indented by a tab does not close", doc: "---\na: 1\n\t---\n", line: 1, words: NotClosed},
	{name: "CRLF", doc: "---\r\ntitle: Close\r\nn: 2\r\n---\r\nThe body.\r\n", body: "The body.\r\n", keys: "title@2 n@3"},
	{name: "CRLF block scalar with an indented ---", doc: "---\r\nt: |\r\n  a\r\n  ---\r\n---\r\nb\r\n", body: "b\r\n", keys: "t@2"},
	{name: "not closed", doc: "---\na: 1\n", line: 1, words: NotClosed},
	{name: "closed only by an indented ---", doc: "---\na: |\n  ---\n", line: 1, words: NotClosed},
	{name: "the end marker does not close", doc: "---\na: 1\n...\n", line: 1, words: NotClosed},
	{name: "syntax error at its line", doc: "---\na: 1\n b: 2\n---\n", line: 3, words: "mapping values are not allowed in this context", syntax: true},
	{name: "the body may hold ---", doc: "---\na: 1\n---\nx\n---\ny\n", body: "x\n---\ny\n", keys: "a@2"},
}

func keysOf(n *yaml.Node) string {
	if n == nil || n.Kind == 0 || len(n.Content) == 0 {
		return ""
	}
	var parts []string
	m := n.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		parts = append(parts, m.Content[i].Value+"@"+strconv.Itoa(m.Content[i].Line))
	}
	return strings.Join(parts, " ")
}

func TestRead(t *testing.T) {
	for _, c := range readCases {
		m, err := Read([]byte(c.doc))
		switch {
		case c.none:
			if !errors.Is(err, ErrNone) {
				t.Errorf("%s: want ErrNone, got %v", c.name, err)
			}
		case c.words != "":
			var fe *Error
			if !errors.As(err, &fe) || fe.Line != c.line || !strings.Contains(fe.Message, c.words) || fe.Syntax != c.syntax {
				t.Errorf("%s: want an Error at line %d saying %q, got %#v", c.name, c.line, c.words, err)
			}
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
		default:
			if string(m.Body) != c.body {
				t.Errorf("%s: body %q, want %q", c.name, m.Body, c.body)
			}
			if got := keysOf(m.Node); got != c.keys {
				t.Errorf("%s: keys %q, want %q", c.name, got, c.keys)
			}
		}
	}
}

// Decode reads into a Go value; its errors name the document's lines.
func TestDecode(t *testing.T) {
	var v struct {
		Template string `yaml:"template"`
		N        int    `yaml:"n"`
	}
	m, err := Read([]byte("---\r\ntemplate: |\r\n  a\r\n  ---\r\n  b\r\nn: 2\r\n---\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Decode(&v, true); err != nil || v.Template != "a\n---\nb\n" || v.N != 2 {
		t.Errorf("decoded %+v, %v", v, err)
	}
	for _, c := range []struct {
		doc   string
		known bool
		line  int
		words string
	}{
		{"---\ntemplate: x\nn: two\n---\n", false, 3, "cannot unmarshal !!str `two` into int"},
		{"---\ntemplate: x\nother: 1\n---\n", true, 3, "field other not found"},
	} {
		m, err := Read([]byte(c.doc))
		if err != nil {
			t.Fatal(err)
		}
		var fe *Error
		if err := m.Decode(&v, c.known); !errors.As(err, &fe) || fe.Line != c.line || !strings.Contains(fe.Message, c.words) || fe.Syntax {
			t.Errorf("%q: want a type Error at line %d saying %q, got %#v", c.doc, c.line, c.words, err)
		}
	}
	// Empty front matter decodes to nothing, without an error.
	m, _ = Read([]byte("---\n---\n"))
	var empty struct{ A int }
	if err := m.Decode(&empty, true); err != nil || empty.A != 0 {
		t.Errorf("empty front matter: %+v, %v", empty, err)
	}
}

// FuzzRead: Read never panics; it answers ErrNone exactly when the
// document does not begin with a line of ---; otherwise an *Error with a
// line of the document, or a body that follows an unindented line of ---
// and a node whose lines are the document's, which Decode can read.
func FuzzRead(f *testing.F) {
	for _, c := range readCases {
		f.Add(c.doc)
	}
	f.Fuzz(func(t *testing.T, s string) {
		doc := []byte(s)
		m, err := Read(doc)
		// YAML breaks lines at a lone \r too.
		lines := bytes.Count(doc, []byte("\n")) + bytes.Count(doc, []byte("\r")) - bytes.Count(doc, []byte("\r\n")) + 1
		if errors.Is(err, ErrNone) != !Begins(doc) {
			t.Fatalf("Read(%q): %v, though Begins says %v", s, err, Begins(doc))
		}
		if err != nil {
			var fe *Error
			if !errors.Is(err, ErrNone) && (!errors.As(err, &fe) || fe.Line < 0 || fe.Line > lines) {
				t.Fatalf("Read(%q): %#v is not an Error at a line of the document", s, err)
			}
			return
		}
		if !bytes.HasSuffix(doc, m.Body) {
			t.Fatalf("Read(%q): body %q is not the document's end", s, m.Body)
		}
		head := bytes.TrimSuffix(doc[:len(doc)-len(m.Body)], []byte("\n"))
		if i := bytes.LastIndexByte(head, '\n'); i < 0 || string(bytes.TrimRight(head[i+1:], " \t\r")) != "---" {
			t.Fatalf("Read(%q): body %q does not follow a line of ---", s, m.Body)
		}
		var walk func(n *yaml.Node)
		walk = func(n *yaml.Node) {
			if n.Kind != 0 && n.Kind != yaml.DocumentNode && (n.Line < 2 || n.Line > lines) {
				t.Fatalf("Read(%q): a node at line %d", s, n.Line)
			}
			for _, c := range n.Content {
				walk(c)
			}
		}
		walk(m.Node)
		var v any
		if err := m.Decode(&v, false); err != nil {
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("Read(%q).Decode: %#v", s, err)
			}
		}
	})
}
