// Package filter is the page format's event filter: data.source.events,
// the events a page's fold takes. quire/words/page reads the filters of a
// page at save; quire/fold matches the playbook's history against them.
// It imports nothing of quire but the refusal object.
//
//	Parse(v any) ([]Filter, []refusal.Issue)
//	(Filter).Match(event map[string]any) bool
//	(Filters).Match(event map[string]any) bool; (Filters).MatchJSON(raw []byte) bool
//
// Parse refuses what is not a list of 1 to 8 mappings, a filter without a
// type or with an empty value, an attribute the page format's Event type
// does not name, a value other than data that is not written out as a
// scalar (a number or a boolean is matched as its text, so depth: 1
// matches the event's 1 and "1"), and data that is not a mapping. data
// matches as a subset: each key given must be in the event's data and
// equal, objects compared the same way, lists and scalars exactly
// (numbers by value). Its issues' paths are relative to
// data.source.events; the caller prefixes them and adds the lines.
package filter
