// Package front is the one reader of YAML front matter in quire: a run's
// definition.md, a function's document NAME.TYPE.md, a playbook's
// playbook.md and a comment all go through Read.
//
// A document with front matter begins with a line of --- (trailing spaces
// and a carriage return allowed), and the front matter ends at the next
// line of ---. github.com/adrg/frontmatter finds the two lines; the YAML
// between them is decoded with gopkg.in/yaml.v3, strictly: a key written
// twice in one mapping is refused at the line of its second writing (yaml.v2,
// which adrg/frontmatter decodes with by default, kept the last silently).
// Blank lines before the opening ---, which adrg/frontmatter passes over,
// are not front matter here: the document must begin with it. The YAML
// end-of-document marker "..." does not close front matter.
//
// Every line Read and Decode report, and every line of the node Read
// answers, is a line of the whole document, not of the YAML alone (as
// YAML counts them: a lone carriage return breaks a line too).
package front

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/adrg/frontmatter"
	"gopkg.in/yaml.v3"
)

// ErrNone is Read's answer for a document that does not begin with a line
// of ---. Callers say it in their own words (a comment, a definition.md).
var ErrNone = errors.New("the document does not begin with YAML front matter (a line of ---)")

// Error is front matter refused at a line of its document (0 when the YAML
// parser names none).
type Error struct {
	Line    int
	Message string
	// Syntax: the YAML does not parse (rather than a key written twice, a
	// front matter never closed, or a value of the wrong type).
	Syntax bool
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Message)
	}
	return e.Message
}

// NotClosed is the message of a front matter no line of --- closes.
const NotClosed = "The front matter is not closed by a line of ---."

// Matter is a document's front matter, read.
type Matter struct {
	// Node is the YAML's document node (Kind 0 for empty front matter),
	// its lines the document's.
	Node *yaml.Node
	// Body is the document after the closing line of ---.
	Body []byte
	// yaml is the front matter's text after as many newlines as lines
	// come before it, so that the decoder's lines are the document's.
	yaml []byte
	// doc is the document read, start where its second line begins.
	doc   []byte
	start int
}

// Begins says whether doc begins with a line of --- (it may still fail
// to close it).
func Begins(doc []byte) bool {
	first, _, _ := bytes.Cut(doc, []byte("\n"))
	return string(bytes.TrimRight(first, " \t\r")) == "---"
}

// Read splits doc into its front matter and its body and parses the
// front matter: ErrNone without front matter, else an *Error for a front
// matter that is not closed, does not parse or writes a key twice.
func Read(doc []byte) (*Matter, error) {
	if !Begins(doc) {
		return nil, ErrNone
	}
	m := &Matter{doc: doc, start: bytes.IndexByte(doc, '\n') + 1}
	body, err := frontmatter.MustParse(bytes.NewReader(mask(doc)), m, format)
	if errors.Is(err, frontmatter.ErrNotFound) {
		return nil, &Error{Line: 1, Message: NotClosed}
	}
	if err != nil {
		return nil, err
	}
	m.Body = doc[len(doc)-len(body):]
	return m, nil
}

// mask answers doc with every indented line of --- made -x- (doc itself
// when there is none). adrg/frontmatter compares lines trimmed on both
// sides, so an indented --- in a block scalar (a row's cell separator in
// a page's template) would close the front matter; only a line of --- at
// the start of its line does. The masked copy has doc's length, so its
// offsets are doc's: unmarshal and Read take their bytes from doc.
func mask(doc []byte) []byte {
	var out []byte
	for off := 0; off < len(doc); {
		end := bytes.IndexByte(doc[off:], '\n') + 1
		if end == 0 {
			end = len(doc) - off
		}
		l := doc[off : off+end]
		if string(bytes.TrimSpace(l)) == "---" && string(bytes.TrimRight(l, " \t\r\n")) != "---" {
			if out == nil {
				out = bytes.Clone(doc)
			}
			out[off+bytes.Index(l, []byte("---"))+1] = 'x'
		}
		off += end
	}
	if out == nil {
		return doc
	}
	return out
}

// format is YAML between lines of ---, parsed by unmarshal.
var format = frontmatter.NewFormat("---", "---", unmarshal)

// unmarshal parses the front matter's text into the *Matter v. The
// opening --- is always the document's first line (Read checks it), so
// one newline before the text makes the parser's lines the document's.
func unmarshal(data []byte, v any) error {
	m := v.(*Matter)
	m.yaml = append([]byte("\n"), m.doc[m.start:m.start+len(data)]...)
	var node yaml.Node
	if err := yaml.Unmarshal(m.yaml, &node); err != nil {
		return yamlError(err)
	}
	if err := unique(&node); err != nil {
		return err
	}
	m.Node = &node
	return nil
}

// unique refuses a mapping that writes a key twice, at the second one.
// yaml.v3 refuses it only when decoding into a Go value, not into a node,
// and several readers walk the node.
func unique(n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		seen := make(map[string]int, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				continue
			}
			if first, ok := seen[k.Value]; ok {
				return &Error{Line: k.Line, Message: fmt.Sprintf("The key %q is written twice in one mapping (first at line %d).", k.Value, first)}
			}
			seen[k.Value] = k.Line
		}
	}
	for _, c := range n.Content {
		if err := unique(c); err != nil {
			return err
		}
	}
	return nil
}

// Decode decodes the front matter into v. With known, a field v does not
// have is refused, as yaml.v3's Decoder.KnownFields does.
func (m *Matter) Decode(v any, known bool) error {
	dec := yaml.NewDecoder(bytes.NewReader(m.yaml))
	dec.KnownFields(known)
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) /* empty front matter */ {
		return yamlError(err)
	}
	return nil
}

var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): `)

// yamlError makes yaml.v3's error an *Error with its line. A type error
// lists one line per problem; the first one's line is the Error's.
func yamlError(err error) error {
	msg := err.Error()
	var te *yaml.TypeError
	syntax := !errors.As(err, &te)
	if te != nil && len(te.Errors) > 0 {
		msg = te.Errors[0]
		if len(te.Errors) > 1 {
			msg += fmt.Sprintf(" (and %d more)", len(te.Errors)-1)
		}
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	line := 0
	if s := yamlLine.FindStringSubmatch(msg); s != nil {
		line, _ = strconv.Atoi(s[1])
		msg = msg[len(s[0]):]
	}
	return &Error{Line: line, Message: msg, Syntax: syntax}
}
