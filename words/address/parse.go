package address

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"quire/words/refusal"
)

// Path is the JSON pointer every refusal of an address names: the argument
// address of the operations that take one.
const Path = "/address"

// Parse reads an address of any form of addresses.md. It refuses text that
// is not one with *refusal.Error, invalid_input, whose one issue is at
// /address and whose message names the segment and the rule it breaks.
// Parse checks the form only, never that the thing exists.
func Parse(s string) (Address, error) {
	if err := checkWhole(s); err != nil {
		return Address{}, err
	}
	p := parser{s: s}
	p.split()
	switch {
	case p.seg[0] == "playbooks":
		return p.playbooks()
	case p.seg[0] == "org" && (p.n == 1 || orgWord(p.seg[1])):
		return p.org()
	}
	return p.playbook()
}

// orgWord reports whether w, as the second segment after org, makes the
// address the organization's even when a playbook's id is org.
func orgWord(w string) bool {
	switch w {
	case "connections", "members", "settings", "parts", "comments":
		return true
	}
	return false
}

func invalid(format string, args ...any) error {
	return refusal.Invalid(Path, format, args...)
}

// segErr refuses segment k (from 1) of the form named what for breaking rule.
func segErr(k int, what, value, rule string) error {
	return invalid("%s %q (segment %d) %s", what, value, k, rule)
}

// checkWhole applies the rules of a whole address.
func checkWhole(s string) error {
	if s == "" {
		return invalid("the address is empty: an address names one thing as text")
	}
	if len(s) > 4*MaxAddress {
		return invalid("the address is %d bytes: an address is at most %d characters", len(s), MaxAddress)
	}
	if i, r := badRune(s); i >= 0 {
		seg := strings.Count(s[:i], "/") + 1
		char := utf8.RuneCountInString(s[:i]) + 1
		switch {
		case r == utf8.RuneError:
			return invalid("segment %d is not valid UTF-8 at character %d: an address is text", seg, char)
		case unicode.IsSpace(r):
			return invalid("segment %d has white space (%U) at character %d: an address has no white space", seg, r, char)
		default:
			return invalid("segment %d has the control character %U at character %d: an address has none", seg, r, char)
		}
	}
	if n := utf8.RuneCountInString(s); n > MaxAddress {
		return invalid("the address is %d characters: an address is at most %d", n, MaxAddress)
	}
	if s[len(s)-1] == '/' {
		return invalid("the address ends with /: an address has no / at its end")
	}
	if k := emptySegment(s); k > 0 {
		return invalid("segment %d is empty: an address has no empty segment", k)
	}
	return nil
}

// badRune finds the first byte of s that is not valid UTF-8, white space or
// a control character, with its rune (utf8.RuneError for bad UTF-8); -1 if
// there is none.
func badRune(s string) (int, rune) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c <= ' ' || c == 0x7f {
				return i, rune(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unicode.IsSpace(r) || unicode.IsControl(r) {
			return i, r
		}
		i += size
	}
	return -1, 0
}

// parser holds an address split into its first six segments and the rest.
type parser struct {
	s   string
	seg [7]string // seg[6] is everything after the sixth /, which a step may hold
	n   int       // segments in the whole address
}

func (p *parser) split() {
	rest := p.s
	k := 0
	for ; k < len(p.seg)-1; k++ {
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			break
		}
		p.seg[k], rest = rest[:i], rest[i+1:]
	}
	p.seg[k] = rest
	p.n = k + 1
	if k == len(p.seg)-1 {
		p.n += strings.Count(rest, "/")
	}
}

// segment is segment k (from 1) of the address, on its own.
func (p *parser) segment(k int) string {
	if k <= 6 {
		return p.seg[k-1]
	}
	return strings.Split(p.s, "/")[k-1]
}

// ends refuses an address that stops short of form.
func (p *parser) ends(form string) error {
	return invalid("the address ends after segment %d: %s", p.n, form)
}

// past refuses segment k, which goes on after the end of form.
func (p *parser) past(k int, form, why string) error {
	return invalid("segment %d %q goes past the end of %s: %s", k, p.segment(k), form, why)
}

func (p *parser) playbooks() (Address, error) {
	const forms = "an address that begins playbooks/ is playbooks/<playbook>, playbooks/<playbook>/parts/<part>, playbooks/<playbook>/<at> or the request playbooks/<run_id>; a playbook's definitions and runs begin <playbook>/, without playbooks/"
	if p.n == 1 {
		return Address{}, p.ends("a playbook is playbooks/<playbook>")
	}
	id := p.seg[1]
	if p.n == 2 && ValidUUID(id) {
		return p.request("playbooks")
	}
	if !ValidPlaybookID(id) {
		return Address{}, segErr(2, "<playbook>", id, ruleID)
	}
	pb := Address{Kind: KindPlaybook, Playbook: id}
	switch {
	case p.n == 2:
		return pb, nil
	case p.seg[2] == "parts":
		return p.parts(pb, 2, "playbooks/<playbook>")
	case p.n == 3:
		v := p.seg[2]
		if v[0] < '0' || v[0] > '9' || ValidUUID(v) {
			return Address{}, invalid("segment 3 %q is neither parts nor an <at>: %s", v, forms)
		}
		t, ok := at(v)
		if !ok {
			return Address{}, segErr(3, "<at>", v, ruleAt)
		}
		return Address{Kind: KindPlaybookChange, Playbook: id, At: t}, nil
	}
	return Address{}, invalid("segment 3 %q must be parts or, as the last segment, an <at>: %s", p.seg[2], forms)
}

func (p *parser) request(playbook string) (Address, error) {
	if id := p.seg[1]; !ValidLowerUUID(id) {
		return Address{}, segErr(2, "<run_id>", id, ruleLower+" (an address of two segments whose second is a UUID is the request of a run, <playbook>/<run_id>)")
	}
	return Address{Kind: KindRequest, Playbook: playbook, RunID: p.seg[1]}, nil
}

// parts reads what follows a thing of k segments: nothing, or /parts/<part>.
func (p *parser) parts(thing Address, k int, form string) (Address, error) {
	if p.n == k {
		return thing, nil
	}
	if w := p.seg[k]; w != "parts" {
		return Address{}, invalid("segment %d %q must be parts: after %s comes only /parts/<part>", k+1, w, form)
	}
	if p.n == k+1 {
		return Address{}, p.ends("a part is " + form + "/parts/<part>")
	}
	if p.n > k+2 {
		return Address{}, p.past(k+3, form+"/parts/<part>", "a part is one segment, and a part takes no parts")
	}
	part := p.seg[k+1]
	if !ValidPart(part) {
		return Address{}, segErr(k+2, "<part>", part, rulePart)
	}
	thing.Of, thing.Kind, thing.Part = thing.Kind, KindPart, part
	return thing, nil
}

func (p *parser) org() (Address, error) {
	if p.n == 1 {
		return Address{Kind: KindOrg}, nil
	}
	what, v := p.seg[1], p.seg[2]
	var a Address
	var form, name string
	switch what {
	case "parts":
		return p.parts(Address{Kind: KindOrg}, 1, "org")
	case "comments":
		if p.n == 2 {
			return Address{}, p.ends("a comment of the organization is org/comments/<id>")
		}
		if !ValidUUID(v) {
			return Address{}, segErr(3, "<id>", v, ruleUUID)
		}
		if p.n > 3 {
			return Address{}, p.past(4, "org/comments/<id>", "a comment takes no parts; a reply is a new comment on the same address")
		}
		return Address{Kind: KindComment, CommentID: v}, nil
	case "connections":
		form, name = "org/connections/<connection>", "a connection"
		if p.n > 2 && !ValidLowerUUID(v) {
			return Address{}, segErr(3, "<connection>", v, ruleLower)
		}
		a = Address{Kind: KindConnection, Connection: v}
	case "members":
		form, name = "org/members/<member>", "a member"
		if p.n > 2 && !ValidMember(v) {
			return Address{}, segErr(3, "<member>", v, ruleMember)
		}
		a = Address{Kind: KindMember, Member: v}
	default: // settings
		form, name = "org/settings/<page>", "a page of Settings"
		if p.n > 2 && !ValidPage(v) {
			return Address{}, segErr(3, "<page>", v, rulePart)
		}
		a = Address{Kind: KindSettings, Page: v}
	}
	if p.n == 2 {
		return Address{}, p.ends(name + " is " + form)
	}
	return p.parts(a, 3, form)
}

func (p *parser) playbook() (Address, error) {
	id := p.seg[0]
	if p.n == 1 {
		return Address{}, invalid("the address ends after segment 1 %q: no address of a playbook is one segment; a playbook is playbooks/<playbook>", id)
	}
	if !ValidPlaybookID(id) {
		return Address{}, segErr(1, "<playbook>", id, ruleID)
	}
	switch w := p.seg[1]; {
	case w == "definitions":
		return p.definitions(id)
	case w == "runs":
		return p.runs(id)
	case w == "comments":
		if p.n == 2 {
			return Address{}, p.ends("a comment of a playbook is <playbook>/comments/<id>")
		}
		if v := p.seg[2]; !ValidUUID(v) {
			return Address{}, segErr(3, "<id>", v, ruleUUID)
		}
		if p.n > 3 {
			return Address{}, p.past(4, "<playbook>/comments/<id>", "a comment takes no parts; a reply is a new comment on the same address")
		}
		return Address{Kind: KindComment, Playbook: id, CommentID: p.seg[2]}, nil
	case ValidType(w):
		if p.n == 2 {
			return Address{}, p.ends("a broken definition is <playbook>/<type>/<name>")
		}
		if v := p.seg[2]; !ValidName(v) {
			return Address{}, segErr(3, "<name>", v, ruleID)
		}
		if p.n > 3 {
			return Address{}, p.past(4, "a broken definition, <playbook>/<type>/<name>", "a definition at a version is <playbook>/definitions/<type>/<name>/<version>")
		}
		return Address{Kind: KindBrokenDefinition, Playbook: id, Type: w, Name: p.seg[2]}, nil
	case p.n == 2 && ValidUUID(w):
		return p.request(id)
	case ValidUUID(w):
		return Address{}, p.past(3, "the request of a run, <playbook>/<run_id>", "a request takes no parts")
	case p.n == 2:
		return Address{}, invalid("segment 2 %q must be a <run_id>, a UUID in lowercase: an address of two segments is the request of a run, <playbook>/<run_id>", w)
	case w == "parts":
		return Address{}, invalid("segment 2 %q comes after the playbook's id: a part of a playbook is playbooks/<playbook>/parts/<part>", w)
	default:
		return Address{}, invalid("segment 2 %q must be definitions, runs, comments or a <type> (one of reasoning, lookup, interaction, prediction, computation, generation or workflow)", w)
	}
}

func (p *parser) definitions(playbook string) (Address, error) {
	const form = "<playbook>/definitions/<type>/<name>/<version>"
	if p.n < 4 {
		return Address{}, p.ends("a definition is " + form)
	}
	a := Address{Kind: KindDefinitionAny, Playbook: playbook, Type: p.seg[2], Name: p.seg[3]}
	if !ValidType(a.Type) {
		return Address{}, segErr(3, "<type>", a.Type, ruleType)
	}
	if !ValidName(a.Name) {
		return Address{}, segErr(4, "<name>", a.Name, ruleID)
	}
	if p.n == 4 {
		return a, nil
	}
	v, ok := number(p.seg[4], MaxVersion)
	if !ok {
		return Address{}, segErr(5, "<version>", p.seg[4], ruleVersion)
	}
	a.Kind, a.Version = KindDefinition, int(v)
	switch {
	case p.n == 5 || p.seg[5] == "parts":
		return p.parts(a, 5, form)
	case p.seg[5] != "steps":
		return Address{}, invalid("segment 6 %q must be parts or steps: after %s come /parts/<part> and, of a workflow, /steps/<step>", p.seg[5], form)
	}
	if a.Type != "workflow" {
		return Address{}, invalid("segment 6 \"steps\" follows a definition of <type> %q: only a workflow has steps", a.Type)
	}
	if p.n == 6 {
		return Address{}, p.ends("a step is " + form + "/steps/<step>")
	}
	step := p.seg[6]
	if len(step) > MaxStep {
		return Address{}, invalid("<step> (segment 7 to the end) is %d bytes: a step is at most %d bytes in UTF-8, without its leading /", len(step), MaxStep)
	}
	if i := badTilde(step); i >= 0 {
		return Address{}, invalid("<step> %q (segment 7 to the end) has a ~ at byte %d that is neither ~0 nor ~1: a step is a JSON Pointer, which writes ~ as ~0 and / as ~1", step, i+1)
	}
	a.Kind, a.Step = KindStep, step
	return a, nil
}

func (p *parser) runs(playbook string) (Address, error) {
	const form = "<playbook>/runs/<run_id>"
	if p.n == 2 {
		return Address{}, p.ends("a run is " + form)
	}
	a := Address{Kind: KindRun, Playbook: playbook, RunID: p.seg[2]}
	if !ValidLowerUUID(a.RunID) {
		return Address{}, segErr(3, "<run_id>", a.RunID, ruleLower)
	}
	if p.n == 3 {
		return a, nil
	}
	switch p.seg[3] {
	case "events":
		if p.n == 4 {
			return Address{}, p.ends("an event is " + form + "/events/<event_id>")
		}
		if v := p.seg[4]; !ValidEventID(v) {
			return Address{}, segErr(5, "<event_id>", v, ruleEvent)
		}
		if p.n > 5 {
			return Address{}, p.past(6, form+"/events/<event_id>", "an event takes no parts")
		}
		a.Kind, a.EventID = KindEvent, p.seg[4]
		return a, nil
	case "result":
		if p.n == 4 {
			return Address{}, p.ends("a block of a run's result is " + form + "/result/<n>")
		}
		n, ok := number(p.seg[4], MaxVersion)
		if !ok {
			return Address{}, segErr(5, "<n>", p.seg[4], ruleN)
		}
		if p.n > 5 {
			return Address{}, p.past(6, form+"/result/<n>", "a block takes no parts; a cell of a block is a part of the run, "+form+"/parts/result-<n>-<m>")
		}
		a.Kind, a.Block = KindBlock, int(n)
		return a, nil
	case "parts":
		return p.parts(a, 3, form)
	}
	return Address{}, invalid("segment 4 %q must be events, result or parts: after %s come /events/<event_id>, /result/<n> and /parts/<part>", p.seg[3], form)
}
