package address

import (
	"fmt"
	"strconv"
	"time"
)

// Explanation is explain_address's answer: what an address names and the
// calls that read and act on it, from the table "From an address to a call"
// of addresses.md, with their arguments filled in from its segments. It is
// meant to be returned as JSON as it stands.
type Explanation struct {
	Address  string   `json:"address"`
	Kind     Kind     `json:"kind"`
	Of       Kind     `json:"of,omitempty"` // for a part, the kind of its thing
	Thing    string   `json:"thing"`        // what it names, in words
	Segments Segments `json:"segments"`
	Read     []Call   `json:"read"`
	Act      []Call   `json:"act"`
	// Resolve is the call that ends the work on a comment made on the
	// address; nil for the forms no comment is made on.
	Resolve *Call  `json:"resolve,omitempty"`
	Note    string `json:"note,omitempty"`
}

// Segments are the named segments of an address, by the names of the table
// "The segments"; a segment the address lacks is left out.
type Segments struct {
	Playbook   string `json:"playbook,omitempty"`
	Type       string `json:"type,omitempty"`
	Name       string `json:"name,omitempty"`
	Version    int    `json:"version,omitempty"`
	Step       string `json:"step,omitempty"`
	RunID      string `json:"run_id,omitempty"`
	EventID    string `json:"event_id,omitempty"`
	N          int    `json:"n,omitempty"`
	Part       string `json:"part,omitempty"`
	Connection string `json:"connection,omitempty"`
	Member     string `json:"member,omitempty"`
	Page       string `json:"page,omitempty"`
	ID         string `json:"id,omitempty"`
	At         *int64 `json:"at,omitempty"`
}

// Call is one tool call an agent can make, with the arguments the address
// gives; Note says what to look for or what the agent adds. A Call with
// Person set names no tool: what it notes is the person's to change, and the
// agent reports it to them.
type Call struct {
	Tool   string            `json:"tool,omitempty"`
	Args   map[string]string `json:"args,omitempty"`
	Note   string            `json:"note,omitempty"`
	Person bool              `json:"person,omitempty"`
	// NotServed is set on a call of the spec's table that this server does
	// not serve: Tool is then empty and Note names the tool the table gives
	// and says it is not served here.
	NotServed bool `json:"not_served,omitempty"`
}

// Explain answers explain_address for a parsed address.
func (a Address) Explain() Explanation {
	e := Explanation{Address: a.String(), Kind: a.Kind, Of: a.Of, Thing: describe(a), Segments: a.segments()}
	e.Read, e.Act, e.Note = calls(a.Thing())
	if a.Kind == KindPart {
		e.Note = join(partNote(a), e.Note)
		if a.Of == KindPlaybook && a.Part == "settings" {
			e.Read = append(e.Read, Call{Tool: "search", Args: args("playbook", a.Playbook), Note: "lists the tool servers of the playbook's page of Settings and the tools of each"})
		}
	}
	if CommentTakes(a) {
		r := Call{Tool: "resolve_comment", Note: "with the comment's id and how acted"}
		if IsOrgThing(a) {
			r.Note += ", and no playbook: the comment is the organization's own"
		} else {
			r.Args = args("playbook", a.Playbook)
		}
		e.Resolve = &r
	}
	if e.Read == nil {
		e.Read = []Call{}
	}
	if e.Act == nil {
		e.Act = []Call{}
	}
	return e
}

func (a Address) segments() Segments {
	s := Segments{
		Playbook: a.Playbook, Type: a.Type, Name: a.Name, Version: a.Version, Step: a.Step,
		RunID: a.RunID, EventID: a.EventID, N: a.Block, Part: a.Part, Connection: a.Connection,
		Member: a.Member, Page: a.Page, ID: a.CommentID,
	}
	if a.Kind == KindPlaybookChange {
		at := a.At
		s.At = &at
	}
	return s
}

func args(kv ...string) map[string]string {
	m := make(map[string]string, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + " " + b
}

func ordinal(n int) string {
	s := strconv.Itoa(n)
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return s + "th"
	case n%10 == 1:
		return s + "st"
	case n%10 == 2:
		return s + "nd"
	case n%10 == 3:
		return s + "rd"
	}
	return s + "th"
}

const person = "The agent reports what the comment asks to the person."

// calls are the read and act calls of a thing (never a part), and a note.
func calls(a Address) (read, act []Call, note string) {
	pb := a.Playbook
	def := args("playbook", pb, "type", a.Type, "name", a.Name)
	versionNote := fmt.Sprintf("get_definition reads the current version; the address names version %d, so if the definition changed since, read the comment against the current document and act only where it still applies.", a.Version)
	switch a.Kind {
	case KindPlaybook:
		read = []Call{
			{Tool: "get_playbook", Args: args("playbook", pb), Note: "holds the source of its page"},
			{Tool: "list_definitions", Args: args("playbook", pb), Note: "for what it holds"},
		}
		act = []Call{
			{Tool: "update_playbook", Args: args("playbook", pb), Note: "for its name, description and page"},
			{Tool: "update_definition", Args: args("playbook", pb), Note: "of the definitions the comment is about, by their type and name"},
		}
	case KindDefinition:
		read = []Call{{Tool: "get_definition", Args: def}}
		act = []Call{{Tool: "update_definition", Args: def, Note: "with the changed document, overview or diagram"}}
		note = versionNote
	case KindStep:
		read = []Call{{Tool: "get_definition", Args: def, Note: fmt.Sprintf("the step is at /%s in its source; a step that calls a function names it there, to read with get_definition and its type and name", a.Step)}}
		act = []Call{
			{Tool: "update_definition", Args: def, Note: "of the workflow"},
			{Tool: "update_definition", Args: args("playbook", pb), Note: "or of the function the step calls, by the type and name its source names"},
		}
		note = versionNote
	case KindRun:
		read = []Call{
			{Tool: "get_run", Args: args("playbook", pb, "run_id", a.RunID)},
			{Tool: "list_playbook_events", Args: args("playbook", pb, "run_id", a.RunID), Note: "for what it did"},
		}
		act = runActs(a)
	case KindEvent:
		read = []Call{{Tool: "get_event", Args: args("playbook", pb, "event_id", a.EventID)}}
		act = runActs(a)
		note = "Act as for its run, " + Address{Kind: KindRun, Playbook: pb, RunID: a.RunID}.String() + "."
	case KindBlock:
		read = []Call{{Tool: "get_run", Args: args("playbook", pb, "run_id", a.RunID), Note: fmt.Sprintf("the block is the %s top-level block of its page.result, counted from the top; a rule is not counted", ordinal(a.Block))}}
		act = []Call{{Tool: "update_definition", Args: args("playbook", pb), Note: "of the definition the run carried out, its type and name as get_run gives them: its page for how it shows the run, the rest of its document for what it produced"}}
		note = "The result renders with the page as it stands, so after the page changed the same n can name another block; the comment's text says what it was about."
	case KindRequest:
		read = []Call{
			{Tool: "list_interactions", Args: args("playbook", pb)},
			{Tool: "get_run", Args: args("playbook", pb, "run_id", a.RunID)},
		}
		act = []Call{{Tool: "answer_interaction", Args: args("playbook", pb, "run_id", a.RunID), Note: "once the person says how to answer"}}
	case KindOrg:
		read = []Call{
			{Tool: "list_playbooks", Note: "for its playbooks"},
			{Tool: "list_connections", Note: "for its connections"},
		}
		act = []Call{{Person: true, Note: "What no tool changes, such as the organization's name, the agent reports to the person."}}
		note = "Read and act with the tools of what the comment asks about."
	case KindConnection:
		read, act = connectionCalls(a.Connection)
	case KindMember:
		read = []Call{{Tool: "list_members", Note: "the member with id " + a.Member + "; where the endpoint offers it, as hosted Auto's does: a self-hosted runtime does not"}}
		act = []Call{{Person: true, Note: "No tool: a member's role and their removal are a person's to change, in Studio. " + person}}
	case KindSettings:
		read, act = settingsCalls(a.Page)
	case KindBrokenDefinition:
		read = []Call{{Tool: "get_definition", Args: def, Note: "the definition does not check as it stands; the activity's row says why"}}
		act = []Call{{Tool: "update_definition", Args: def, Note: "with the document mended"}}
	case KindPlaybookChange:
		read = []Call{
			{Tool: "get_playbook", Args: args("playbook", pb)},
			{Tool: "list_playbook_events", Args: args("playbook", pb), Note: "for what changed"},
		}
		act = []Call{{Tool: "update_playbook", Args: args("playbook", pb), Note: "for its name, description and page"}}
		note = "The playbook was created or updated at " + time.UnixMilli(a.At).UTC().Format("2006-01-02T15:04:05.000Z") + "."
	case KindComment:
		read = []Call{{Tool: "list_comments", Args: args("playbook", pb), Note: "the comment with id " + a.CommentID}}
		act = []Call{{Tool: "resolve_comment", Args: args("playbook", pb, "comment_id", a.CommentID), Note: "with how acted, once acted on"}}
		if pb == "" {
			read[0].Args, act[0].Args = nil, args("comment_id", a.CommentID)
			note = "org/comments/<id> names a comment of the organization's own and a comment of a playbook whose id is org alike; the activity row's playbook tells them apart. The organization's comments are listed and resolved with no playbook, those of playbook org with playbook org."
		}
	case KindDefinitionAny:
		read = []Call{{Tool: "get_definition", Args: def}}
		act = []Call{{Tool: "update_definition", Args: def}}
		note = "A definition without its version: with under, it holds every version, their steps and their parts."
	}
	return read, act, note
}

func runActs(a Address) []Call {
	return []Call{
		{Tool: "update_definition", Args: args("playbook", a.Playbook), Note: "of the definition the run carried out, its type and name as get_run with run_id " + a.RunID + " gives them"},
		{Tool: "run_definition", Args: args("playbook", a.Playbook), Note: "then run that definition again"},
		{Tool: "cancel_run", Args: args("playbook", a.Playbook, "run_id", a.RunID), Note: "while the run is started"},
	}
}

func connectionCalls(id string) (read, act []Call) {
	var byID map[string]string
	of := "the connection's id"
	if id != "" {
		byID, of = args("connection_id", id), "the connection with id "+id
	}
	read = []Call{
		{Tool: "list_connections", Note: "holds every field of each connection, its status among them: " + of},
		{Tool: "list_connection_tools", Args: byID, Note: "with " + of + ", for its tools"},
	}
	act = []Call{
		{Tool: "reconnect_connection", Args: byID, Note: "for a connection that is broken, whose link ran out or that should be granted more: a new link, which the agent gives the person to sign in again"},
		{Tool: "remove_connection", Args: byID, Note: "once the person says to"},
	}
	return read, act
}

// settingsCalls are the calls of a page of Settings, by the list of
// addresses.md; a page it does not list has no tool.
func settingsCalls(page string) (read, act []Call) {
	switch page {
	case "connections":
		return connectionCalls("")
	case "tool-servers":
		read = []Call{{Tool: "search", Note: "lists the tool servers and the tools of each"}}
		act = []Call{{Person: true, Note: "The servers of the configuration are the operator's to change. " + person}}
	case "runtime":
		read = []Call{{Person: true, Note: "No tool reads the page: the runtime's address, its status, who Studio acts as there and the voice model are the operator's and Studio's."}}
		act = []Call{
			{Tool: "activate_license", Note: "with the key the person gives, for a self-hosted runtime's license"},
			{Person: true, Note: "The runtime's address, its status, who Studio acts as there and the voice model are the operator's and Studio's. " + person},
		}
	case "members":
		read = []Call{{Tool: "list_members", Note: "where the endpoint offers it, as hosted Auto's does"}}
		act = []Call{
			{Tool: "invite_member", Note: "to invite a person as a member, where the endpoint offers it"},
			{Person: true, Note: "Roles, removals and invitations of admins are a person's, in Studio. " + person},
		}
	default:
		read = []Call{{Person: true, Note: "No tool reads the page " + page + "."}}
		act = []Call{{Person: true, Note: "No tool: " + person + " They change it in Studio."}}
	}
	return read, act
}

// partNote says what a part adds to its thing's calls.
func partNote(a Address) string {
	note := fmt.Sprintf("The part %s says which piece of %s, %s, the comment is about; read and act as for it.", a.Part, describe(a.Thing()), a.Thing())
	var n, m int
	switch {
	case a.Of == KindRun && scan(a.Part, "result-%d-%d", &n, &m):
		note += fmt.Sprintf(" It is the %s cell of the %s block of the run's page.result.", ordinal(m), ordinal(n))
	case a.Of == KindDefinition && scan(a.Part, "runs-%d-%d", &n, &m):
		note += fmt.Sprintf(" It is the %s cell of the %s block of the runs of its page.", ordinal(m), ordinal(n))
	case a.Of == KindDefinition && scan(a.Part, "runs-%d", &n):
		note += fmt.Sprintf(" It is the %s block of the runs of its page.", ordinal(n))
	case a.Of == KindPlaybook && a.Part == "settings":
		note += " It is the playbook's page of Settings, whose tool servers search lists with playbook " + a.Playbook + "."
	}
	return note
}

// scan matches s against format exactly, numbers from 1 without a leading
// zero.
func scan(s, format string, nums ...*int) bool {
	vals := make([]any, len(nums))
	for i, p := range nums {
		vals[i] = p
	}
	if k, err := fmt.Sscanf(s, format, vals...); err != nil || k != len(nums) {
		return false
	}
	back := make([]any, len(nums))
	for i, p := range nums {
		if *p < 1 {
			return false
		}
		back[i] = *p
	}
	return fmt.Sprintf(format, back...) == s
}
