// Package comments is the room of comments (addresses.md, "What the
// runtime checks"): a comment's file, where it lives, the ways to resolve
// it, and reading and filtering a playbook's comments or the
// organization's own. The operations make_comment, list_comments and
// resolve_comment stay methods of the ledger, which checks their
// arguments and writes through its one transaction: this package prepares
// what is written and reads what was. It imports nothing of the ledger;
// the vault it reads is the Store it defines.
//
// # The file
//
// A comment is one file, playbooks/<playbook>/comments/<id>.md or
// org/comments/<id>.md (Path): YAML front matter (id, address, author,
// created, resolved, how, and resolved_at and resolved_by once resolved;
// Front) and the text as the body, exactly as given:
//
//	---
//	id: 019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3e
//	address: finance/runs/019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3e/result/2
//	author: grace
//	created: "2026-11-01T09:30:00.000Z"
//	resolved: true
//	how: acted
//	resolved_at: "2026-11-01T10:02:11.000Z"
//	resolved_by: agent-7
//	---
//	This total looks off.
//
// Encode writes it, Decode reads it (a key written twice is refused at
// its line, a field it does not know is passed over). The ledger lists it
// in the vault's index (type IndexType, playbook "" for the
// organization's own) and commits it when made and when resolved, with
// the author, then the resolver, as the commit's author; a playbook's
// comment also records comment_made and comment_resolved in the
// playbook's history, whose subject is the address the comment is about
// and whose data names the comment's id and path.
//
// # API
//
//	Front, Encode(f, text), Decode(rel, data)  the file's format
//	Path(playbook, id), Self(playbook, id)     where a comment lives; its own address, as the activity names it
//	IndexType                                  its type in the vault's index
//	CheckText(text), MaxText                   what a comment's text is
//	Hows, CheckHow(how), (Front).CheckOpen, (*Front).Resolve
//	                                           the ways to resolve a comment, once
//	Comment, (Front).Comment                   a comment as the operations answer it
//	Store, Read(s, playbook, rel), List(s, playbook)
//	                                           reading comments from the vault
//	Filter, (Filter).Keep, Select              list_comments' under, address and resolved
//	ReadOn(a)                                  the address a comment is read on
//
// # Decisions where the spec is silent
//
//   - how is one of acted, declined, answered and obsolete (the thing is
//     gone or no longer applies); anything else is refused at /how.
//     resolve_comment takes the resolver as actor (quire when left out).
//     A comment is resolved once: resolving it again is refused, conflict.
//   - list_comments lists in the order the comments were made, the oldest
//     first, so a reply follows what it answers. address filters on the
//     address a comment is about, exactly (a UUID in it compared without
//     regard to case); under holds what address.Contains holds. A comment
//     file edited by hand to an address no longer taken is left out of
//     what either keeps, and kept when neither is given.
//   - The playbook of a playbook's comment must exist (not_found, the
//     ledger's to say); the thing a comment is about need not.
//   - A comment's text is 1 to 10,000 characters of UTF-8, not all white
//     space, kept exactly as given.
//   - A comment made on a page saved as a definition of its own is read on
//     its subject, without a version. No definition type names a page yet
//     (address.Types has no page), so no address can name one; ReadOn is
//     the one place that reading will go when the type comes.
package comments
