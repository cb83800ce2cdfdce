package ledger

// Comments (addresses.md, "What the runtime checks"): make_comment,
// list_comments and resolve_comment, of a playbook or of the organization.
//
// A comment is one file, playbooks/<playbook>/comments/<id>.md or
// org/comments/<id>.md: YAML front matter (id, address, author, created,
// resolved, how, and resolved_at and resolved_by once resolved) and the
// text as the body, exactly as given. It is listed in the index (type
// comment, playbook "" for the organization's own) and committed when made
// and when resolved, with the author, then the resolver, as the commit's
// author. A playbook's comment also records comment_made and
// comment_resolved in the playbook's history, whose subject is the address
// the comment is about and whose data names the comment's id and path.
//
// Decisions where the spec is silent:
//
//   - how is one of acted, declined, answered and obsolete (the thing is
//     gone or no longer applies); anything else is refused at /how.
//     resolve_comment takes the resolver as actor (quire when left out).
//   - list_comments lists in the order the comments were made, the oldest
//     first, so a reply follows what it answers. address filters on the
//     address a comment is about, exactly (a UUID in it compared without
//     regard to case); under holds what address.Contains holds.
//   - The playbook of a playbook's comment must exist (not_found); the
//     thing a comment is about need not.
//   - A comment made on a page saved as a definition of its own is read on
//     its subject, without a version. No definition type names a page yet
//     (address.Types has no page), so no address can name one; readOn is
//     the one place that reading will go when the type comes.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"quire/internal/front"
	"quire/vault"
	"quire/words/address"
	"quire/words/event"
	"quire/words/refusal"
)

// MaxCommentText is the most characters a comment's text holds.
const MaxCommentText = 10000

// CommentHows are the ways resolve_comment ends the work on a comment.
var CommentHows = []string{"acted", "declined", "answered", "obsolete"}

type MakeCommentArgs struct {
	Playbook  string `json:"playbook,omitempty" jsonschema:"the playbook whose comment it is; left out, the organization's own"`
	Address   string `json:"address" jsonschema:"the address of what the comment is about, such as finance/runs/<run_id>/result/2 or org/settings/billing"`
	Text      string `json:"text" jsonschema:"the comment, 1 to 10,000 characters"`
	Author    string `json:"author" jsonschema:"who makes it"`
	RequestID string `json:"request_id,omitempty" jsonschema:"makes a retry safe: a call repeating an id answers the first call's answer and writes nothing (HTTP: the Idempotency-Key header)"`
}

type ListCommentsArgs struct {
	Playbook string `json:"playbook,omitempty" jsonschema:"the playbook whose comments to list; left out, the organization's own"`
	Under    string `json:"under,omitempty" jsonschema:"only comments on this address, its parts and what it holds (a run its events and blocks; a definition its steps; <playbook>/definitions/<type>/<name> every version)"`
	Address  string `json:"address,omitempty" jsonschema:"only comments on exactly this address"`
	Resolved *bool  `json:"resolved,omitempty" jsonschema:"true for the resolved only, false for the open only"`
}

type ResolveCommentArgs struct {
	Playbook  string `json:"playbook,omitempty" jsonschema:"the playbook whose comment it is; left out, the organization's own"`
	ID        string `json:"id" jsonschema:"the comment's id"`
	How       string `json:"how" enum:"@comment_hows" jsonschema:"acted, declined, answered or obsolete"`
	Actor     string `json:"actor,omitempty" jsonschema:"who resolves it; quire when left out"`
	RequestID string `json:"request_id,omitempty" jsonschema:"makes a retry safe: a call repeating an id answers the first call's answer and writes nothing (HTTP: the Idempotency-Key header)"`
}

// Comment is a comment as the comment operations answer it.
type Comment struct {
	ID         string `json:"id"`
	Playbook   string `json:"playbook,omitempty"`
	Address    string `json:"address"`
	Author     string `json:"author"`
	Created    string `json:"created"`
	Resolved   bool   `json:"resolved"`
	How        string `json:"how,omitempty"`
	ResolvedAt string `json:"resolved_at,omitempty"`
	ResolvedBy string `json:"resolved_by,omitempty"`
	Text       string `json:"text"`
	// Self is the comment's own address, as the activity names it.
	Self string `json:"self"`
	Path string `json:"path"`
	// Committed is false on a write's answer when the comment is recorded
	// but its commit is left to the next writer (see Run.Committed).
	Committed *bool `json:"committed,omitempty"`
}

// commentFront is a comment file's front matter.
type commentFront struct {
	ID         string `yaml:"id"`
	Address    string `yaml:"address"`
	Author     string `yaml:"author"`
	Created    string `yaml:"created"`
	Resolved   bool   `yaml:"resolved"`
	How        string `yaml:"how"`
	ResolvedAt string `yaml:"resolved_at,omitempty"`
	ResolvedBy string `yaml:"resolved_by,omitempty"`
}

func commentPath(playbook, id string) string {
	if playbook == "" {
		return path.Join("org", "comments", id+".md")
	}
	return path.Join(playbookDir(playbook), "comments", id+".md")
}

func commentSelf(playbook, id string) string {
	if playbook == "" {
		return "org/comments/" + id
	}
	return playbook + "/comments/" + id
}

func encodeComment(f commentFront, text string) []byte {
	fm, _ := yaml.Marshal(f)
	return []byte("---\n" + string(fm) + "---\n" + text)
}

// decodeComment splits a comment file into its front matter and its body.
func decodeComment(rel string, data []byte) (commentFront, string, error) {
	var f commentFront
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

func (l *Ledger) readComment(e vault.Entry) (*Comment, error) {
	data, err := os.ReadFile(l.v.Abs(e.Path))
	if err != nil {
		return nil, err
	}
	f, text, err := decodeComment(e.Path, data)
	if err != nil {
		return nil, err
	}
	return &Comment{ID: f.ID, Playbook: e.Playbook, Address: f.Address, Author: f.Author, Created: f.Created,
		Resolved: f.Resolved, How: f.How, ResolvedAt: f.ResolvedAt, ResolvedBy: f.ResolvedBy, Text: text,
		Self: commentSelf(e.Playbook, f.ID), Path: e.Path}, nil
}

// comments reads the comments of a playbook (or the organization's, with
// playbook ""), in the order they were made.
func (l *Ledger) comments(playbook string) ([]*Comment, error) {
	es, err := l.v.FindType("comment", func(e *vault.Entry) bool { return e.Playbook == playbook })
	if err != nil {
		return nil, err
	}
	out := make([]*Comment, 0, len(es))
	for _, e := range es {
		c, err := l.readComment(e)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// readOn is the address a comment made on a is read on. A comment on a page
// saved as a definition of its own is read on the page's subject, without a
// version; no definition type names a page yet, so every address is read as
// it is.
func readOn(a address.Address) address.Address { return a }

// commentOwner checks the playbook argument: "" is the organization, any
// other must be an existing playbook.
func (l *Ledger) commentOwner(playbook string) error {
	if playbook == "" {
		return nil
	}
	_, err := l.readPlaybook(playbook)
	return err
}

// atPath moves a refusal of the address package (at /address) to the
// argument it came from.
func atPath(err error, p string) error {
	r, ok := refusal.As(err)
	if !ok {
		return err
	}
	out := *r
	out.Issues = nil
	for _, is := range r.Issues {
		if is.Path == "/address" {
			is.Path = p
		}
		out.Issues = append(out.Issues, is)
	}
	if rest, ok := strings.CutPrefix(out.Message, "/address: "); ok {
		out.Message = p + ": " + rest
	}
	return &out
}

func checkCommentText(text string) error {
	if !utf8.ValidString(text) {
		return refusal.Invalid("/text", "a comment's text is UTF-8")
	}
	if strings.TrimSpace(text) == "" {
		return refusal.Invalid("/text", "a comment's text is empty")
	}
	if n := utf8.RuneCountInString(text); n > MaxCommentText {
		return refusal.Invalid("/text", "a comment's text holds at most 10,000 characters, not %d", n)
	}
	return nil
}

func checkPrincipal(field, who string) error {
	if !event.IsPrincipal(who) {
		return refusal.Invalid(field, "a principal is 1 to 200 characters on one line")
	}
	return nil
}

func ownerName(playbook string) string {
	if playbook == "" {
		return "org"
	}
	return playbook
}

func (l *Ledger) makeComment(_ context.Context, a *MakeCommentArgs) (*Comment, error) {
	if a.Playbook != "" {
		if err := checkPlaybookID(a.Playbook); err != nil {
			return nil, err
		}
	}
	on, err := address.ForComment(a.Address, a.Playbook)
	if err != nil {
		return nil, err
	}
	if err := checkCommentText(a.Text); err != nil {
		return nil, err
	}
	if err := checkPrincipal("/author", a.Author); err != nil {
		return nil, err
	}
	id := newID()
	rel := commentPath(a.Playbook, id)
	var c *Comment
	err = l.write(writeArgs{Keeps: playbookKeeps(a.Playbook)}, func(t *tx) error {
		if err := l.commentOwner(a.Playbook); err != nil {
			return err
		}
		now := l.Now()
		f := commentFront{ID: id, Address: on.String(), Author: a.Author, Created: event.FormatTime(now)}
		if err := writeNew(l.v, rel, encodeComment(f, a.Text)); err != nil {
			return err
		}
		paths := []string{rel, vault.IndexFile}
		if a.Playbook != "" {
			ln := &event.Line{Event: event.CommentMade, Timestamp: f.Created, Detail: "Comment on " + f.Address,
				Subject: f.Address, Actor: a.Author, Data: mustJSON(map[string]string{"id": id, "address": f.Address, "path": rel})}
			if err := t.recordPlaybookEvent(a.Playbook, ln); err != nil {
				os.Remove(l.v.Abs(rel)) // not made: the refusal is true
				return err
			}
			t.notify(a.Playbook, ln.Seq)
			paths = append(paths, path.Join(playbookDir(a.Playbook), "events.jsonl"))
		}
		if err := l.v.Register(vault.Entry{UID: id, Type: "comment", Path: rel, Playbook: a.Playbook, Created: f.Created}); err != nil {
			return err
		}
		// The comment is made: a commit that fails is finished by the next
		// writer, and the answer says committed: false.
		committed := t.commit(paths, vault.Signature{Name: a.Author, When: now}, vault.Message{
			Subject:  ownerName(a.Playbook) + ": comment on " + f.Address,
			Trailers: []vault.Trailer{{Key: "Comment-Id", Value: id}, {Key: "Address", Value: f.Address}, {Key: "Playbook", Value: a.Playbook}}})
		c = &Comment{ID: id, Playbook: a.Playbook, Address: f.Address, Author: f.Author, Created: f.Created,
			Text: a.Text, Self: commentSelf(a.Playbook, id), Path: rel, Committed: boolPtr(committed)}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (l *Ledger) listComments(_ context.Context, a *ListCommentsArgs) ([]*Comment, error) {
	if a.Playbook != "" {
		if err := checkPlaybookID(a.Playbook); err != nil {
			return nil, err
		}
	}
	var under, exact *address.Address
	if a.Under != "" {
		u, err := address.ForUnder(a.Under, a.Playbook)
		if err != nil {
			return nil, atPath(err, "/under")
		}
		under = &u
	}
	if a.Address != "" {
		x, err := address.ForComment(a.Address, a.Playbook)
		if err != nil {
			return nil, err
		}
		exact = &x
	}
	if err := l.commentOwner(a.Playbook); err != nil {
		return nil, err
	}
	all, err := l.comments(a.Playbook)
	if err != nil {
		return nil, err
	}
	out := []*Comment{}
	for _, c := range all {
		if a.Resolved != nil && c.Resolved != *a.Resolved {
			continue
		}
		if under != nil || exact != nil {
			on, err := address.Parse(c.Address)
			if err != nil {
				continue // a comment file edited by hand to an address no longer taken
			}
			on = readOn(on)
			if under != nil && !address.Contains(*under, on) {
				continue
			}
			if exact != nil && !(address.Contains(*exact, on) && address.Contains(on, *exact)) {
				continue
			}
		}
		out = append(out, c)
	}
	return out, nil
}

func validHow(how string) bool {
	for _, h := range CommentHows {
		if how == h {
			return true
		}
	}
	return false
}

func (l *Ledger) resolveComment(_ context.Context, a *ResolveCommentArgs) (*Comment, error) {
	if a.Playbook != "" {
		if err := checkPlaybookID(a.Playbook); err != nil {
			return nil, err
		}
	}
	if !address.ValidUUID(a.ID) {
		return nil, refusal.Invalid("/id", "%q is not a comment id: a UUID", a.ID)
	}
	if !validHow(a.How) {
		return nil, refusal.Invalid("/how", "%q is not a way to resolve a comment; the ways are %s", a.How, strings.Join(CommentHows, ", "))
	}
	actor := actorOr(a.Actor)
	if err := checkPrincipal("/actor", actor); err != nil {
		return nil, err
	}
	id := strings.ToLower(a.ID)
	var out *Comment
	err := l.write(writeArgs{Keeps: playbookKeeps(a.Playbook)}, func(t *tx) error {
		if err := l.commentOwner(a.Playbook); err != nil {
			return err
		}
		e, ok, err := l.v.Lookup(id)
		if err != nil {
			return err
		}
		if !ok || e.Type != "comment" || e.Playbook != a.Playbook {
			if a.Playbook == "" {
				return refusal.At(refusal.NotFound, "/id", "the organization has no comment %s of its own", a.ID)
			}
			return refusal.At(refusal.NotFound, "/id", "playbook %s has no comment %s", a.Playbook, a.ID)
		}
		data, err := os.ReadFile(l.v.Abs(e.Path))
		if err != nil {
			return err
		}
		f, text, err := decodeComment(e.Path, data)
		if err != nil {
			return err
		}
		if f.Resolved {
			return refusal.At(refusal.Conflict, "/id", "the comment %s was resolved (%s) by %s at %s", id, f.How, f.ResolvedBy, f.ResolvedAt)
		}
		now := l.Now()
		f.Resolved, f.How, f.ResolvedAt, f.ResolvedBy = true, a.How, event.FormatTime(now), actor
		abs, err := l.v.Join(e.Path)
		if err != nil {
			return err
		}
		if err := vault.WriteAtomic(abs, encodeComment(f, text)); err != nil {
			return err
		}
		paths := []string{e.Path}
		if a.Playbook != "" {
			ln := &event.Line{Event: event.CommentResolved, Timestamp: f.ResolvedAt, Detail: "Resolved: " + a.How,
				Subject: f.Address, Actor: actor, Data: mustJSON(map[string]string{"id": id, "address": f.Address, "how": a.How, "path": e.Path})}
			if err := t.recordPlaybookEvent(a.Playbook, ln); err != nil {
				return err
			}
			t.notify(a.Playbook, ln.Seq)
			paths = append(paths, path.Join(playbookDir(a.Playbook), "events.jsonl"))
		}
		committed := t.commit(paths, vault.Signature{Name: actor, When: now}, vault.Message{
			Subject:  fmt.Sprintf("%s: resolve a comment as %s on %s", ownerName(a.Playbook), a.How, f.Address),
			Trailers: []vault.Trailer{{Key: "Comment-Id", Value: id}, {Key: "Address", Value: f.Address}, {Key: "Playbook", Value: a.Playbook}, {Key: "Resolution", Value: a.How}}})
		out, err = l.readComment(e)
		if out != nil {
			out.Committed = boolPtr(committed)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
