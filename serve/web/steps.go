package web

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// A run's events name their steps by reference, the JSON Pointer of the
// step in the workflow's document (/do/1/review, written do/1/review
// too). The run page draws the document at the run's version line by
// line, each line an anchor (#L12), and links each step to the line the
// step begins at, so a reviewer reads what the run was told at that step.

// sourceLine is one line of a definition's source as the page draws it.
type sourceLine struct {
	N    int
	Text string
}

func sourceLines(source string) []sourceLine {
	if source == "" {
		return nil
	}
	var out []sourceLine
	for i, l := range strings.Split(strings.TrimSuffix(source, "\n"), "\n") {
		out = append(out, sourceLine{N: i + 1, Text: l})
	}
	return out
}

// stepLine is the line of source (YAML, or JSON, which YAML reads) that
// the step reference names: the line of its last mapping key, or of the
// list item it indexes; 0 where the document holds no such step.
func stepLine(doc *yaml.Node, ref string) int {
	if doc == nil || ref == "" {
		return 0
	}
	n := doc
	line := 0
	for _, tok := range strings.Split(strings.TrimPrefix(ref, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		for n.Kind == yaml.DocumentNode || n.Kind == yaml.AliasNode {
			if n.Kind == yaml.AliasNode {
				n = n.Alias
			} else if len(n.Content) == 1 {
				n = n.Content[0]
			} else {
				return 0
			}
		}
		switch n.Kind {
		case yaml.MappingNode:
			found := false
			for k := 0; k+1 < len(n.Content); k += 2 {
				if n.Content[k].Value == tok {
					line, n, found = n.Content[k].Line, n.Content[k+1], true
					break
				}
			}
			if !found {
				return 0
			}
		case yaml.SequenceNode:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n.Content) || strconv.Itoa(i) != tok {
				return 0
			}
			n = n.Content[i]
			line = n.Line
		default:
			return 0
		}
	}
	return line
}

// parseSource parses a definition's source for stepLine: a workflow's
// YAML or JSON document (nil for one that is neither, such as a
// function's Markdown, whose events name no step in it).
func parseSource(source string) *yaml.Node {
	var doc yaml.Node
	if yaml.Unmarshal([]byte(source), &doc) != nil {
		return nil
	}
	return &doc
}
