package address

import (
	"strconv"
	"strings"
)

// Kind names what an address names.
type Kind string

// The kinds of address. The first block are the things a comment is made on;
// the second the forms only the activity names; DefinitionAny is the form
// only list_comments' under takes.
const (
	KindPlaybook   Kind = "playbook"   // playbooks/<playbook>
	KindDefinition Kind = "definition" // <playbook>/definitions/<type>/<name>/<version>
	KindStep       Kind = "step"       // <playbook>/definitions/workflow/<name>/<version>/steps/<step>
	KindRun        Kind = "run"        // <playbook>/runs/<run_id>
	KindEvent      Kind = "event"      // <playbook>/runs/<run_id>/events/<event_id>
	KindBlock      Kind = "block"      // <playbook>/runs/<run_id>/result/<n>
	KindRequest    Kind = "request"    // <playbook>/<run_id>
	KindPart       Kind = "part"       // the thing's address, then /parts/<part>; Of names the thing
	KindOrg        Kind = "org"        // org
	KindConnection Kind = "connection" // org/connections/<connection>
	KindMember     Kind = "member"     // org/members/<member>
	KindSettings   Kind = "settings"   // org/settings/<page>

	KindBrokenDefinition Kind = "broken_definition" // <playbook>/<type>/<name>
	KindPlaybookChange   Kind = "playbook_change"   // playbooks/<playbook>/<at>
	KindComment          Kind = "comment"           // <playbook>/comments/<id>, org/comments/<id>

	KindDefinitionAny Kind = "definition_any" // <playbook>/definitions/<type>/<name>
)

// Address is one parsed address. Kind says which form it is; only the fields
// of that form are set. For a part, Kind is KindPart, Of is the kind of the
// thing the part belongs to, the thing's fields are set as for the thing,
// and Part names the part.
//
// Address is comparable: two addresses Parse gives for the same text are ==.
type Address struct {
	Kind Kind
	Of   Kind // for KindPart only: the kind of its thing

	Playbook string // <playbook>; "" for the organization's things and org/comments/<id>
	Type     string // <type>
	Name     string // <name>
	Version  int    // <version>
	Step     string // <step>, without its leading /
	RunID    string // <run_id>; also of a request
	EventID  string // <event_id>
	Block    int    // <n> of a block of a run's result

	Part       string // <part>
	Connection string // <connection>
	Member     string // <member>
	Page       string // <page> of Settings

	CommentID string // <id> of a comment
	At        int64  // <at>, milliseconds since 1970-01-01T00:00:00Z
}

// String formats the address back to its text. For every s that Parse
// accepts, Parse(s).String() == s. String does not check the address: an
// Address made by hand is checked by parsing its text.
func (a Address) String() string {
	var b strings.Builder
	a.write(&b)
	return b.String()
}

func (a Address) write(b *strings.Builder) {
	kind := a.Kind
	if kind == KindPart {
		kind = a.Of
	}
	switch kind {
	case KindPlaybook:
		b.WriteString("playbooks/")
		b.WriteString(a.Playbook)
	case KindDefinition, KindStep, KindDefinitionAny:
		b.WriteString(a.Playbook)
		b.WriteString("/definitions/")
		b.WriteString(a.Type)
		b.WriteByte('/')
		b.WriteString(a.Name)
		if kind != KindDefinitionAny {
			b.WriteByte('/')
			b.WriteString(strconv.Itoa(a.Version))
		}
		if kind == KindStep {
			b.WriteString("/steps/")
			b.WriteString(a.Step)
		}
	case KindRun, KindEvent, KindBlock:
		b.WriteString(a.Playbook)
		b.WriteString("/runs/")
		b.WriteString(a.RunID)
		switch kind {
		case KindEvent:
			b.WriteString("/events/")
			b.WriteString(a.EventID)
		case KindBlock:
			b.WriteString("/result/")
			b.WriteString(strconv.Itoa(a.Block))
		}
	case KindRequest:
		b.WriteString(a.Playbook)
		b.WriteByte('/')
		b.WriteString(a.RunID)
	case KindOrg:
		b.WriteString("org")
	case KindConnection:
		b.WriteString("org/connections/")
		b.WriteString(a.Connection)
	case KindMember:
		b.WriteString("org/members/")
		b.WriteString(a.Member)
	case KindSettings:
		b.WriteString("org/settings/")
		b.WriteString(a.Page)
	case KindBrokenDefinition:
		b.WriteString(a.Playbook)
		b.WriteByte('/')
		b.WriteString(a.Type)
		b.WriteByte('/')
		b.WriteString(a.Name)
	case KindPlaybookChange:
		b.WriteString("playbooks/")
		b.WriteString(a.Playbook)
		b.WriteByte('/')
		b.WriteString(strconv.FormatInt(a.At, 10))
	case KindComment:
		if a.Playbook == "" {
			b.WriteString("org")
		} else {
			b.WriteString(a.Playbook)
		}
		b.WriteString("/comments/")
		b.WriteString(a.CommentID)
	}
	if a.Kind == KindPart {
		b.WriteString("/parts/")
		b.WriteString(a.Part)
	}
}

// Thing is the address of the thing a part belongs to; of any other
// address, the address itself.
func (a Address) Thing() Address {
	if a.Kind != KindPart {
		return a
	}
	a.Kind, a.Of, a.Part = a.Of, "", ""
	return a
}

// takesParts says whether a thing of kind k takes parts.
func takesParts(k Kind) bool {
	switch k {
	case KindPlaybook, KindDefinition, KindRun, KindOrg, KindConnection, KindMember, KindSettings:
		return true
	}
	return false
}
