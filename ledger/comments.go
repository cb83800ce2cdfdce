package ledger

// The comment operations (addresses.md, "What the runtime checks"):
// make_comment, list_comments and resolve_comment, of a playbook or of the
// organization. The comment's file, where it lives, the ways to resolve it
// and list_comments' filter are package comments' (its doc says the
// decisions); here the handlers check their arguments, and write, record
// the event and commit through the ledger's one transaction.

import (
	"context"
	"fmt"
	"os"
	"path"
	"strings"

	"quire/ledger/comments"
	"quire/vault"
	"quire/words/address"
	"quire/words/event"
	"quire/words/refusal"
)

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
type Comment = comments.Comment

// commentStore is the vault as package comments reads it.
type commentStore struct{ v *vault.Vault }

func (s commentStore) Files(playbook string) ([]string, error) {
	es, err := s.v.FindType(comments.IndexType, func(e *vault.Entry) bool { return e.Playbook == playbook })
	if err != nil {
		return nil, err
	}
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Path
	}
	return out, nil
}

func (s commentStore) ReadFile(rel string) ([]byte, error) { return os.ReadFile(s.v.Abs(rel)) }

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

func (l *Ledger) makeComment(ctx context.Context, a *MakeCommentArgs) (*Comment, error) {
	if a.Playbook != "" {
		if err := checkPlaybookID(a.Playbook); err != nil {
			return nil, err
		}
	}
	on, err := address.ForComment(a.Address, a.Playbook)
	if err != nil {
		return nil, err
	}
	if err := comments.CheckText(a.Text); err != nil {
		return nil, err
	}
	if err := checkPrincipal("/author", a.Author); err != nil {
		return nil, err
	}
	id := newID()
	rel := comments.Path(a.Playbook, id)
	var c *Comment
	err = l.write(writeArgs{Keeps: playbookKeeps(a.Playbook), Request: requestIn(ctx)}, func(t *tx) error {
		if err := l.commentOwner(a.Playbook); err != nil {
			return err
		}
		now := l.Now()
		f := comments.Front{ID: id, Address: on.String(), Author: a.Author, Created: event.FormatTime(now)}
		c = f.Comment(a.Playbook, rel, a.Text)
		c.Committed = boolPtr(true) // kept before the commit, which makes it so (or the next writer does)
		t.answerWith(func() (any, error) { return c, nil })
		if err := t.writeNew(rel, comments.Encode(f, a.Text)); err != nil {
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
		if err := l.v.Register(vault.Entry{UID: id, Type: comments.IndexType, Path: rel, Playbook: a.Playbook, Created: f.Created}); err != nil {
			return err
		}
		// The comment is made: a commit that fails is finished by the next
		// writer, and the answer says committed: false.
		committed := t.commit(paths, vault.Signature{Name: a.Author, When: now}, vault.Message{
			Subject:  ownerName(a.Playbook) + ": comment on " + f.Address,
			Trailers: []vault.Trailer{{Key: "Comment-Id", Value: id}, {Key: "Address", Value: f.Address}, {Key: "Playbook", Value: a.Playbook}}})
		c.Committed = boolPtr(committed)
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
	keep := comments.Filter{Resolved: a.Resolved}
	if a.Under != "" {
		u, err := address.ForUnder(a.Under, a.Playbook)
		if err != nil {
			return nil, atPath(err, "/under")
		}
		keep.Under = &u
	}
	if a.Address != "" {
		x, err := address.ForComment(a.Address, a.Playbook)
		if err != nil {
			return nil, err
		}
		keep.Address = &x
	}
	if err := l.commentOwner(a.Playbook); err != nil {
		return nil, err
	}
	all, err := comments.List(commentStore{l.v}, a.Playbook)
	if err != nil {
		return nil, err
	}
	return comments.Select(all, keep), nil
}

func (l *Ledger) resolveComment(ctx context.Context, a *ResolveCommentArgs) (*Comment, error) {
	if a.Playbook != "" {
		if err := checkPlaybookID(a.Playbook); err != nil {
			return nil, err
		}
	}
	if !address.ValidUUID(a.ID) {
		return nil, refusal.Invalid("/id", "%q is not a comment id: a UUID", a.ID)
	}
	if err := comments.CheckHow(a.How); err != nil {
		return nil, err
	}
	actor := actorOr(a.Actor)
	if err := checkPrincipal("/actor", actor); err != nil {
		return nil, err
	}
	id := strings.ToLower(a.ID)
	var out *Comment
	err := l.write(writeArgs{Keeps: playbookKeeps(a.Playbook), Request: requestIn(ctx)}, func(t *tx) error {
		if err := l.commentOwner(a.Playbook); err != nil {
			return err
		}
		e, ok, err := l.v.Lookup(id)
		if err != nil {
			return err
		}
		if !ok || e.Type != comments.IndexType || e.Playbook != a.Playbook {
			if a.Playbook == "" {
				return refusal.At(refusal.NotFound, "/id", "the organization has no comment %s of its own", a.ID)
			}
			return refusal.At(refusal.NotFound, "/id", "playbook %s has no comment %s", a.Playbook, a.ID)
		}
		store := commentStore{l.v}
		data, err := store.ReadFile(e.Path)
		if err != nil {
			return err
		}
		f, text, err := comments.Decode(e.Path, data)
		if err != nil {
			return err
		}
		if err := f.CheckOpen(id); err != nil {
			return err
		}
		now := l.Now()
		f.Resolve(a.How, event.FormatTime(now), actor)
		abs, err := l.v.Join(e.Path)
		if err != nil {
			return err
		}
		if err := t.touch(e.Path, false); err != nil {
			return err
		}
		if err := vault.WriteAtomic(abs, comments.Encode(f, text)); err != nil {
			return err
		}
		t.answerWith(func() (any, error) {
			c, err := comments.Read(store, e.Playbook, e.Path)
			if c != nil {
				c.Committed = boolPtr(true) // kept before the commit, which makes it so (or the next writer does)
			}
			return c, err
		})
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
		out, err = comments.Read(store, e.Playbook, e.Path)
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
