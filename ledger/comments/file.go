package comments

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"quire/internal/front"
	"quire/words/refusal"
)

// IndexType is a comment's type in the vault's index.
const IndexType = "comment"

// MaxText is the most characters a comment's text holds.
const MaxText = 10000

// Hows are the ways resolve_comment ends the work on a comment.
var Hows = []string{"acted", "declined", "answered", "obsolete"}

// Front is a comment file's front matter.
type Front struct {
	ID         string `yaml:"id"`
	Address    string `yaml:"address"`
	Author     string `yaml:"author"`
	Created    string `yaml:"created"`
	Resolved   bool   `yaml:"resolved"`
	How        string `yaml:"how"`
	ResolvedAt string `yaml:"resolved_at,omitempty"`
	ResolvedBy string `yaml:"resolved_by,omitempty"`
}

// Path is where the comment id of a playbook (the organization's own with
// playbook "") lives, from the vault's root.
func Path(playbook, id string) string {
	if playbook == "" {
		return path.Join("org", "comments", id+".md")
	}
	return path.Join("playbooks", playbook, "comments", id+".md")
}

// Self is the comment's own address, as the activity names it.
func Self(playbook, id string) string {
	if playbook == "" {
		return "org/comments/" + id
	}
	return playbook + "/comments/" + id
}

// Encode is the comment file of f and text: the front matter between
// lines of ---, then the text exactly as given.
func Encode(f Front, text string) []byte {
	fm, _ := yaml.Marshal(f) // a struct of strings and a bool always marshals
	return []byte("---\n" + string(fm) + "---\n" + text)
}

// Decode splits the comment file rel into its front matter and its body
// (the text). Its errors name rel and, for front matter that does not
// parse, the line.
func Decode(rel string, data []byte) (Front, string, error) {
	var f Front
	m, err := front.Read(data)
	if errors.Is(err, front.ErrNone) {
		return f, "", fmt.Errorf("%s: a comment begins with front matter between --- lines", rel)
	}
	if err == nil {
		err = m.Decode(&f, false)
	}
	if err != nil {
		return f, "", fmt.Errorf("%s: %v", rel, err)
	}
	return f, string(m.Body), nil
}

// CheckText refuses, at /text, a text that is not a comment's.
func CheckText(text string) error {
	if !utf8.ValidString(text) {
		return refusal.Invalid("/text", "a comment's text is UTF-8")
	}
	if strings.TrimSpace(text) == "" {
		return refusal.Invalid("/text", "a comment's text is empty")
	}
	if n := utf8.RuneCountInString(text); n > MaxText {
		return refusal.Invalid("/text", "a comment's text holds at most 10,000 characters, not %d", n)
	}
	return nil
}

// CheckHow refuses, at /how, what is not one of Hows.
func CheckHow(how string) error {
	for _, h := range Hows {
		if how == h {
			return nil
		}
	}
	return refusal.Invalid("/how", "%q is not a way to resolve a comment; the ways are %s", how, strings.Join(Hows, ", "))
}

// CheckOpen refuses a comment resolved already, conflict at /id, naming
// it id (as the call gave it) and how, by whom and when it was resolved:
// a comment is resolved once.
func (f Front) CheckOpen(id string) error {
	if f.Resolved {
		return refusal.At(refusal.Conflict, "/id", "the comment %s was resolved (%s) by %s at %s", id, f.How, f.ResolvedBy, f.ResolvedAt)
	}
	return nil
}

// Resolve marks the comment resolved, how, at (a time as the history
// writes it), by; CheckOpen first.
func (f *Front) Resolve(how, at, by string) {
	f.Resolved, f.How, f.ResolvedAt, f.ResolvedBy = true, how, at, by
}
