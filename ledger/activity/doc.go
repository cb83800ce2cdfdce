// Package activity is the organization's activity feed (addresses.md):
// the rows list_activity names each by its address, newest first, and the
// seen marks mark_activity_seen keeps of what a member has seen. The
// operations stay methods of the ledger, which checks their arguments and
// writes a mark through its one transaction; this package gathers the
// rows, says what is new for a member, and owns the seen marks' file. It
// imports nothing of the ledger: what it reads of the vault is the Source
// it defines.
//
// The rows and where they come from:
//
//	kind               address                                        from
//	run_started        <playbook>/runs/<run_id>                       the index and run.state.json's started
//	run_ended          <playbook>/runs/<run_id>                       run.state.json's ended
//	definition_saved   <playbook>/definitions/<type>/<name>/<version> definition_saved in events.jsonl
//	definition_broken  <playbook>/<type>/<name>                       definition_broken in events.jsonl
//	playbook_created   playbooks/<playbook>/<at ms>                   playbook_created in events.jsonl
//	playbook_updated   playbooks/<playbook>/<at ms>                   playbook_updated, playbook_page_saved
//	comment_made       <playbook>/comments/<id>, org/comments/<id>    the comment's file: created, author
//	comment_resolved   the same                                       the comment's file: resolved_at, resolved_by
//
// # The seen marks
//
// A member's marks are org/members/<member>/seen.jsonl (SeenPath), one
// line a mark, appended in one write and committed as the member:
//
//	{"at":"2026-11-01T09:30:00.000Z","items":["finance/runs/019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3e"]}
//
// Line encodes a mark, ReadMarks reads them back: a line that does not
// decode (a torn last line, which the next mark repairs) or whose at does
// not parse is passed over.
//
// # API
//
//	Query, List(src, q)            list_activity: the rows, their order, since, limit and seen
//	Source, Run                    what the feed reads of the vault
//	Item, Page, SeenMarks          the operations' answers
//	SeenPath(member), Line(at, items), ReadMarks(r), Marks.Seen
//	                               the seen marks' file and what it says
//	CheckMember(member)            a member's id, refused at /member
//	DefinitionBroken               the event a later check is to record
//
// # Decisions where the spec is silent
//
//   - The actor of run_started is the run's authorized_by (the actor of its
//     run_created); of run_ended, its executor, since run.state.json does
//     not say who ended it and reading every run's log for one actor is not
//     cheap.
//   - A definition is broken when its saved document no longer parses or
//     checks. Nothing records that yet: a later check (of a page against a
//     changed module, say) is to append definition_broken with the
//     definition's type/name as its subject, and the activity reads it.
//     Re-checking every document on every list would not be cheap.
//   - A definition retired is not a row: the activity's forms name none.
//   - A time written by hand that does not parse names no row, and a line
//     of the history that does not parse is passed over.
//   - since keeps the rows strictly after it, so the at of the newest row
//     seen passes back as since for what is new. limit is 1 to 1,000, 50
//     when left out. Rows at the same millisecond keep the order they
//     happened in, reversed.
//   - Without playbook the rows are every playbook's and the organization's
//     own comments; with playbook, that playbook's alone.
//   - A row is seen when a mark of its address is at or after the row's at:
//     a run seen when it started is not seen once it ends, nor a comment
//     once resolved. Addresses compare without regard to case, as the ids
//     of comments may be written either way.
package activity
