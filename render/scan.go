package render

import (
	"fmt"
	"regexp"
	"strings"
)

// The reading of a template into its text, outputs and tags, as Liquid
// reads it: an output runs from {{ to the first }}, a tag from {% to the
// first %}; raw and comment keep what they hold from being read; a liquid
// tag is read as one tag a line.

type tkind int

const (
	tText tkind = iota
	tOutput
	tTag
	tRaw     // what a raw block holds, written as it is
	tComment // what a comment block holds, never written
)

type ttok struct {
	kind         tkind
	start, end   int // bytes of the template
	line         int // the template's line where it starts, from 1
	trimL, trimR bool
	name, args   string
	argsLine     int    // the line where args start
	text         string // for tText, tRaw and tComment
	// liquid: the tags of a liquid tag, each written as a tag of its own
	sub []ttok
}

// problem is something wrong with a template, at a line of it.
type problem struct {
	line int
	msg  string
}

var (
	endRaw     = regexp.MustCompile(`\{%-?\s*endraw\s*-?%\}`)
	endComment = regexp.MustCompile(`\{%-?\s*endcomment\s*-?%\}`)
)

func lineAt(src string, off int) int { return 1 + strings.Count(src[:off], "\n") }

// scanTemplate reads src into tokens. A problem stops the reading.
func scanTemplate(src string) ([]ttok, *problem) {
	var toks []ttok
	i := 0
	for i < len(src) {
		o := strings.Index(src[i:], "{{")
		t := strings.Index(src[i:], "{%")
		next := -1
		switch {
		case o < 0:
			next = t
		case t < 0:
			next = o
		default:
			next = min(o, t)
		}
		if next < 0 {
			toks = append(toks, ttok{kind: tText, start: i, end: len(src), line: lineAt(src, i), text: src[i:]})
			break
		}
		at := i + next
		if at > i {
			toks = append(toks, ttok{kind: tText, start: i, end: at, line: lineAt(src, i), text: src[i:at]})
		}
		line := lineAt(src, at)
		if src[at+1] == '{' {
			closeAt := strings.Index(src[at+2:], "}}")
			if closeAt < 0 {
				return nil, &problem{line, "An output {{ is left open: it has no }}."}
			}
			end := at + 2 + closeAt + 2
			inner := src[at+2 : end-2]
			tok := ttok{kind: tOutput, start: at, end: end, line: line}
			tok.trimL = strings.HasPrefix(inner, "-")
			if tok.trimL {
				inner = inner[1:]
			}
			tok.trimR = strings.HasSuffix(inner, "-")
			if tok.trimR {
				inner = inner[:len(inner)-1]
			}
			tok.argsLine = line + strings.Count(inner[:len(inner)-len(strings.TrimLeft(inner, " \t\r\n"))], "\n")
			tok.args = strings.TrimSpace(inner)
			if tok.args == "" {
				return nil, &problem{line, "An output {{ }} is empty."}
			}
			toks = append(toks, tok)
			i = end
			continue
		}
		closeAt := strings.Index(src[at+2:], "%}")
		if closeAt < 0 {
			return nil, &problem{line, "A tag {% is left open: it has no %}."}
		}
		end := at + 2 + closeAt + 2
		tok, p := readTag(src[at+2:end-2], line)
		if p != nil {
			return nil, p
		}
		tok.start, tok.end = at, end
		switch tok.name {
		case "raw", "comment":
			re := endRaw
			if tok.name == "comment" {
				re = endComment
			}
			loc := re.FindStringIndex(src[end:])
			if loc == nil {
				return nil, &problem{line, fmt.Sprintf("The tag %s is never closed: it needs {%% end%s %%}.", tok.name, tok.name)}
			}
			toks = append(toks, tok)
			body := ttok{kind: tRaw, start: end, end: end + loc[0], line: lineAt(src, end), text: src[end : end+loc[0]]}
			if tok.name == "comment" {
				body.kind = tComment
			}
			toks = append(toks, body)
			closing, _ := readTag(strings.TrimSuffix(strings.TrimPrefix(src[end+loc[0]:end+loc[1]], "{%"), "%}"), lineAt(src, end+loc[0]))
			closing.start, closing.end = end+loc[0], end+loc[1]
			toks = append(toks, closing)
			i = end + loc[1]
			continue
		case "liquid":
			sub, p := readLiquid(tok.args, tok.argsLine)
			if p != nil {
				return nil, p
			}
			tok.sub = sub
		}
		toks = append(toks, tok)
		i = end
	}
	return toks, nil
}

// readTag reads what stands between {% and %}.
func readTag(inner string, line int) (ttok, *problem) {
	tok := ttok{kind: tTag, line: line}
	tok.trimL = strings.HasPrefix(inner, "-")
	if tok.trimL {
		inner = inner[1:]
	}
	tok.trimR = strings.HasSuffix(inner, "-")
	if tok.trimR {
		inner = inner[:len(inner)-1]
	}
	lead := len(inner) - len(strings.TrimLeft(inner, " \t\r\n"))
	line += strings.Count(inner[:lead], "\n")
	tok.line = line
	inner = inner[lead:]
	if strings.HasPrefix(inner, "#") {
		tok.name, tok.args = "#", inner[1:]
		return tok, nil
	}
	j := 0
	for j < len(inner) && (isAlpha(inner[j]) || isDigit(inner[j]) || inner[j] == '_') {
		j++
	}
	if j == 0 {
		return tok, &problem{line, "A tag {% %} has no name."}
	}
	tok.name = inner[:j]
	rest := inner[j:]
	if rest != "" && !strings.ContainsAny(rest[:1], " \t\r\n") {
		return tok, &problem{line, fmt.Sprintf("The tag %s%s is not a tag a page has.", tok.name, strings.Fields(rest)[0])}
	}
	tok.argsLine = line + strings.Count(rest[:len(rest)-len(strings.TrimLeft(rest, " \t\r\n"))], "\n")
	tok.args = strings.TrimSpace(rest)
	return tok, nil
}

// readLiquid reads the lines of a liquid tag, each a tag without {% %}.
func readLiquid(args string, firstLine int) ([]ttok, *problem) {
	var out []ttok
	inComment := false
	for n, raw := range strings.Split(args, "\n") {
		line := firstLine + n
		s := strings.TrimSpace(raw)
		if s == "" {
			continue
		}
		if inComment {
			if s == "endcomment" {
				inComment = false
			}
			continue
		}
		if strings.HasPrefix(s, "#") {
			continue
		}
		tok, p := readTag(s, line)
		if p != nil {
			return nil, p
		}
		switch tok.name {
		case "comment":
			inComment = true
			continue
		case "raw", "liquid":
			return nil, &problem{line, fmt.Sprintf("The tag %s cannot stand inside a liquid tag.", tok.name)}
		}
		if strings.Contains(s, "{{") || strings.Contains(s, "{%") {
			return nil, &problem{line, "A line of a liquid tag is a tag alone, without {{ }} or {% %}."}
		}
		out = append(out, tok)
	}
	if inComment {
		return nil, &problem{firstLine, "A comment inside a liquid tag is never closed: it needs endcomment."}
	}
	return out, nil
}
