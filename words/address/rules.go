package address

import "strings"

// The rules of "What the runtime checks": which forms a comment takes,
// which the activity names, and what an address holds with under.

// CommentTakes reports whether a is of a form a comment is made on: a thing
// of a playbook or of the organization, or a part of one. The forms only
// the activity names, a comment's own address and a definition without its
// version take no comment.
func CommentTakes(a Address) bool {
	switch a.Kind {
	case KindPlaybook, KindDefinition, KindStep, KindRun, KindEvent, KindBlock, KindRequest,
		KindOrg, KindConnection, KindMember, KindSettings:
		return true
	case KindPart:
		return takesParts(a.Of)
	}
	return false
}

// IsOrgThing reports whether a is one of the organization's things a comment
// is made on, or a part of one: org, org/connections/…, org/members/…,
// org/settings/…. A comment's address org/comments/<id> is not: it takes no
// comment.
func IsOrgThing(a Address) bool {
	switch a.Thing().Kind {
	case KindOrg, KindConnection, KindMember, KindSettings:
		return true
	}
	return false
}

// ActivityForm reports whether a is of a form the activity names a row by:
// every form a comment takes, and the broken definition, the playbook
// created or updated and the comments of a playbook and of the organization.
// Only a definition without its version is not.
func ActivityForm(a Address) bool {
	switch a.Kind {
	case KindBrokenDefinition, KindPlaybookChange, KindComment:
		return true
	}
	return CommentTakes(a)
}

// Contains reports whether under holds a, by the rule of list_comments'
// under. Every address holds itself and its parts. A run also holds its
// events and the blocks of its result; a definition at a version its steps;
// a definition without its version every version of it, their steps and
// their parts. Nothing else holds anything more: the playbook holds none of
// what the playbook holds, org none of the organization's connections,
// members or pages, and a step does not hold the steps nested in it.
func Contains(under, a Address) bool {
	if under.Kind == "" || a.Kind == "" {
		return false
	}
	if same(under, a) {
		return true
	}
	thing := a.Thing()
	if a.Kind == KindPart && same(under, thing) {
		return true
	}
	switch under.Kind {
	case KindRun:
		switch thing.Kind {
		case KindEvent, KindBlock:
			return thing.Playbook == under.Playbook && thing.RunID == under.RunID
		}
	case KindDefinition:
		return thing.Kind == KindStep && thing.Playbook == under.Playbook &&
			thing.Type == under.Type && thing.Name == under.Name && thing.Version == under.Version
	case KindDefinitionAny:
		switch thing.Kind {
		case KindDefinition, KindStep:
			return thing.Playbook == under.Playbook && thing.Type == under.Type && thing.Name == under.Name
		}
	}
	return false
}

// same compares two addresses, the UUIDs that may be written in either case
// (an event's and a comment's id) without regard to case.
func same(a, b Address) bool {
	if !strings.EqualFold(a.EventID, b.EventID) || !strings.EqualFold(a.CommentID, b.CommentID) {
		return false
	}
	a.EventID, b.EventID, a.CommentID, b.CommentID = "", "", "", ""
	return a == b
}

// ForComment parses s as the address of a new comment. With playbook set it
// is make_comment of that playbook, which takes the forms a comment takes of
// that playbook's things; with playbook "" it is the organization's, which
// takes the organization's things and their parts. Every other address is
// refused with invalid_input at /address.
func ForComment(s, playbook string) (Address, error) {
	a, err := Parse(s)
	if err != nil {
		return a, err
	}
	if !CommentTakes(a) {
		return Address{}, invalid("%q is %s, of a form no comment is made on", s, describe(a))
	}
	return a, owner(s, a, playbook)
}

// ForUnder parses s as list_comments' under, of a playbook (playbook set) or
// of the organization (playbook ""). It takes what ForComment takes and, of a
// playbook, also a definition without its version.
func ForUnder(s, playbook string) (Address, error) {
	a, err := Parse(s)
	if err != nil {
		return a, err
	}
	if !CommentTakes(a) && (a.Kind != KindDefinitionAny || playbook == "") {
		return Address{}, invalid("%q is %s, which under does not take", s, describe(a))
	}
	return a, owner(s, a, playbook)
}

// owner refuses a of another playbook, or of the organization for a
// playbook's comments and of a playbook for the organization's.
func owner(s string, a Address, playbook string) error {
	switch {
	case playbook == "" && !IsOrgThing(a):
		return invalid("%q is of playbook %q: the organization's comments are on org, org/connections/<connection>, org/members/<member>, org/settings/<page> and their parts", s, a.Playbook)
	case playbook != "" && IsOrgThing(a):
		return invalid("%q is the organization's: a comment on it is the organization's own, made and listed through the organization's comments", s)
	case playbook != "" && a.Playbook != playbook:
		return invalid("%q names playbook %q, not %q: a playbook's comments are on its own things", s, a.Playbook, playbook)
	}
	return nil
}

// ForActivity parses s as an activity item's address, as mark_activity_seen
// takes it, refusing the forms the activity does not name.
func ForActivity(s string) (Address, error) {
	a, err := Parse(s)
	if err != nil {
		return a, err
	}
	if !ActivityForm(a) {
		return Address{}, invalid("%q is %s, of a form the activity does not name", s, describe(a))
	}
	return a, nil
}

// describe names the kind of a in words, for refusals.
func describe(a Address) string {
	switch a.Kind {
	case KindPart:
		return "a part of " + describe(a.Thing())
	case KindDefinitionAny:
		return "a definition without its version"
	case KindBrokenDefinition:
		return "a broken definition, a form only the activity names"
	case KindPlaybookChange:
		return "a playbook created or updated, a form only the activity names"
	case KindComment:
		return "a comment's own address (a reply is a new comment on the same address)"
	case KindOrg:
		return "the organization"
	case KindSettings:
		return "a page of Settings"
	case KindRequest:
		return "the request of a run"
	case KindBlock:
		return "a block of a run's result"
	case KindEvent:
		return "an event of a run"
	case KindStep:
		return "a step of a workflow"
	case KindDefinition:
		return "a definition at a version"
	}
	return "a " + string(a.Kind)
}
