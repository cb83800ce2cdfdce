// Package address owns the address grammar of spec/addresses.md: the text
// that names one thing of a playbook or of the organization, as comments,
// the activity and explain_address use it. It parses and formats every form,
// applies the rule of list_comments' under, says which forms a comment and
// the activity take, and explains an address as the tool calls that read and
// act on its thing. It checks forms only, never that a thing exists, and
// imports nothing but the standard library and words/refusal.
//
// # API
//
//	Parse(s string) (Address, error)         every form; refusals are invalid_input at /address
//	Address.String() string                   Parse(s).String() == s for every accepted s
//	Address.Thing() Address                   the thing a part belongs to
//	Address.Explain() Explanation             explain_address's answer, JSON as it stands
//	Contains(under, a Address) bool           the rule of under
//	CommentTakes, IsOrgThing, ActivityForm    which forms a comment / the organization / the activity take
//	ForComment(s, playbook), ForUnder(s, playbook), ForActivity(s)
//	                                          Parse, then refuse what make_comment, list_comments' under
//	                                          and mark_activity_seen refuse; playbook "" is the organization
//	ValidPlaybookID, ValidName, ValidType, Types, ValidVersion, ValidPart, ValidPage,
//	ValidMember, ValidUUID, ValidLowerUUID, ValidEventID, ValidStep
//	                                          the segment rules, for other packages (the vault's names)
//
// Kinds: playbook, definition, step, run, event, block, request, part (Of
// names the kind of its thing), org, connection, member, settings; the forms
// only the activity names, broken_definition, playbook_change and comment;
// and definition_any, a definition without its version, which only under
// takes.
//
// # Refusals
//
// A refusal is *refusal.Error, code invalid_input, with one issue at
// /address whose message names the segment (by its place from 1 and its name
// in the spec, such as <version>) and the rule it breaks. The whole address's
// rules are checked first (empty, valid UTF-8, white space and control
// characters, at most 512 characters, no / at its end, no empty segment),
// then the segments from the left; the first rule broken is the one named.
//
// # Decisions where addresses.md is silent
//
//   - Every address that begins playbooks/ is one of the playbook's forms,
//     playbooks/<playbook>, …/parts/<part> and playbooks/<playbook>/<at>, or
//     a request of two segments, as the spec says. So a playbook whose id is
//     playbooks has, of its own, only its request addresses; the vault had
//     best refuse that id.
//   - A second segment that is a UUID in either case makes a two-segment
//     address a request; its <run_id> must then be lowercase, so an
//     uppercase one is refused as a run id, never read as a playbook.
//     playbooks/<uuid> is a request even when the UUID is also a valid
//     playbook id.
//   - org followed by connections, members, settings, parts or comments is
//     the organization's. org/comments/<id> parses with Playbook "" (the
//     organization's own); whether it is playbook org's is the activity
//     row's to say. String writes Playbook "" and "org" alike for a comment.
//   - An <event_id> and a comment's <id> are "a UUID": either case is
//     taken and kept as written, and Contains compares them without regard
//     to case. <run_id> and <connection> are lowercase only. No UUID's
//     version or variant is checked.
//   - <n> and the number of an <event_id> have the bound of <version>,
//     2147483646. No number takes a sign or a leading zero.
//   - <at> is 0 or a whole number without a leading zero, at most
//     253402300799999 (the last millisecond of the year 9999), so every
//     <at> is a time RFC 3339 writes.
//   - A <step> takes any character but white space and control characters;
//     its tokens are not empty (by the rule of no empty segment), a ~ in it
//     must be ~0 or ~1 as in any JSON Pointer, and it is not URL-decoded.
//     Its 255 bytes are counted in UTF-8; the 512 characters of an address
//     are counted as Unicode code points. No valid address of any form comes
//     near 512 characters (a step's is at most 391), so the bound only
//     refuses long text early.
//   - White space is Unicode's (unicode.IsSpace). Control characters and
//     text that is not valid UTF-8 are refused too.
//   - The things that take parts are the playbook, a definition at a
//     version, a run, org, a connection, a member and a page of Settings. A
//     part takes no parts; nor do a definition without its version and the
//     forms only the activity names.
//   - Contains: every address holds itself; a part holds only itself; a
//     broken definition, a playbook change and a comment hold only
//     themselves. A definition without its version holds the definitions,
//     steps and parts of the same playbook, type and name.
//   - ActivityForm is every form a comment takes and the four the activity
//     names; only a definition without its version is not one. IsOrgThing is
//     org, a connection, a member, a page of Settings and their parts, not
//     org/comments/<id>, which takes no comment.
//   - ForComment and ForUnder refuse first what is not of a form they take,
//     then what is of the other owner: the organization's things for a
//     playbook (playbook org included), a playbook's things for the
//     organization, another playbook's things for a playbook.
//
// # Explain
//
// Explanation names the kind, the segments by their names in the spec
// (playbook, type, name, version, step, run_id, event_id, n, part,
// connection, member, page, id, at), and the calls of the table "From an
// address to a call": Read, Act, and Resolve, the resolve_comment that ends
// the work on a comment (set for the forms a comment takes; without playbook
// for the organization's things). The arguments of a call are named after
// the segments: playbook, type, name, run_id, event_id, connection_id and
// comment_id; an argument the address cannot give (the key of
// activate_license, the type and name of the definition a run carried out)
// is said in the call's note. A call with Person set names no tool: the agent
// reports to the person. Where the spec is silent:
//
//   - the runtime page of Settings has no tool that reads it; a page the
//     spec does not list has no tool, like billing;
//   - the connections page has the connection's tools without an id;
//   - a playbook's part settings also reads with search and the playbook;
//   - a broken definition reads with get_definition and is mended with
//     update_definition; a playbook created or updated reads with
//     get_playbook and list_playbook_events and changes with
//     update_playbook; a comment reads with list_comments and ends with
//     resolve_comment (of the organization without playbook); a definition
//     without its version is read and changed as a definition.
package address
