package address

// The rules of the table "The segments" of addresses.md, one function each,
// exported so that other packages (the vault checks playbook ids and names)
// apply the same rules.

// Bounds of the segments and of a whole address.
const (
	MaxAddress = 512        // characters in a whole address
	MaxStep    = 255        // bytes of a step, without its leading /
	MaxVersion = 2147483646 // largest <version>; also the largest <n> and event number
	MaxPart    = 64         // characters of a <part> or a <page>
	MaxMember  = 64         // characters of a <member>
	MinID      = 3          // characters of a <playbook> or a <name>
	MaxID      = 48
	// MaxAt is the largest <at>: the last millisecond of 9999-12-31 UTC, so
	// that every <at> is a time RFC 3339 can write.
	MaxAt = 253402300799999
)

// The rules as the refusals word them.
const (
	ruleID      = "must be 3 to 48 lowercase letters, digits and hyphens, beginning with a letter"
	ruleType    = "must be one of reasoning, lookup, interaction, prediction, computation, generation or workflow"
	ruleVersion = "must be a whole number from 1 to 2147483646, without a leading zero"
	ruleLower   = "must be a UUID in lowercase, 8-4-4-4-12 hexadecimal digits"
	ruleUUID    = "must be a UUID, 8-4-4-4-12 hexadecimal digits"
	ruleEvent   = "must be a UUID, or a UUID, an underscore and a number from 1 to 2147483646 without a leading zero"
	ruleN       = "must be a whole number from 1 to 2147483646, without a leading zero"
	rulePart    = "must be 1 to 64 lowercase letters, digits and hyphens, beginning with a letter"
	ruleMember  = "must be 1 to 64 ASCII letters, digits, underscores and hyphens"
	ruleAt      = "must be a whole number of milliseconds since 1970-01-01T00:00:00Z, from 0 to 253402300799999, without a leading zero"
)

var types = [...]string{"reasoning", "lookup", "interaction", "prediction", "computation", "generation", "workflow"}

// Types lists the definition types <type> takes, in the spec's order.
func Types() []string { return append([]string(nil), types[:]...) }

// ValidType reports whether s is a definition type.
func ValidType(s string) bool {
	for _, t := range types {
		if s == t {
			return true
		}
	}
	return false
}

// ValidPlaybookID reports whether s is a playbook's id: 3 to 48 lowercase
// letters, digits and hyphens, beginning with a letter.
func ValidPlaybookID(s string) bool { return lowerWord(s, MinID, MaxID) }

// ValidName reports whether s is a definition's name, by the rule of a
// playbook's id.
func ValidName(s string) bool { return lowerWord(s, MinID, MaxID) }

// ValidPart reports whether s is a part: 1 to 64 lowercase letters, digits
// and hyphens, beginning with a letter. A page of Settings takes the same
// rule.
func ValidPart(s string) bool { return lowerWord(s, 1, MaxPart) }

// ValidPage reports whether s is a page of Settings, by the rule of a part.
func ValidPage(s string) bool { return lowerWord(s, 1, MaxPart) }

func lowerWord(s string, min, max int) bool {
	if len(s) < min || len(s) > max || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// ValidMember reports whether s is a member's id: 1 to 64 ASCII letters,
// digits, underscores and hyphens.
func ValidMember(s string) bool {
	if len(s) < 1 || len(s) > MaxMember {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// ValidVersion reports whether v is a version: 1 to 2,147,483,646.
func ValidVersion(v int) bool { return v >= 1 && v <= MaxVersion }

// ValidUUID reports whether s is a UUID in its text form, 8-4-4-4-12
// hexadecimal digits, in either case. Neither its version nor its variant
// is checked: an address checks forms, not where an id came from.
func ValidUUID(s string) bool { return uuid(s, false) }

// ValidLowerUUID reports whether s is a UUID in lowercase, as a run's and a
// connection's id are.
func ValidLowerUUID(s string) bool { return uuid(s, true) }

func uuid(s string, lower bool) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
		case !lower && c >= 'A' && c <= 'F':
		default:
			return false
		}
	}
	return true
}

// ValidEventID reports whether s is an event's id: a UUID, or a UUID, an
// underscore and the step event's number from 1 without a leading zero.
func ValidEventID(s string) bool {
	if len(s) == 36 {
		return ValidUUID(s)
	}
	if len(s) < 38 || s[36] != '_' || !ValidUUID(s[:36]) {
		return false
	}
	_, ok := number(s[37:], MaxVersion)
	return ok
}

// ValidStep reports whether s is a step: a workflow's JSON Pointer without
// its leading /, at most 255 bytes, of non-empty reference tokens, with no
// white space or control character, and with every ~ escaping as JSON
// Pointer does (~0 for ~, ~1 for /).
func ValidStep(s string) bool {
	return len(s) >= 1 && len(s) <= MaxStep && noBadRune(s) && s[len(s)-1] != '/' &&
		emptySegment(s) < 0 && badTilde(s) < 0
}

// number reads a whole number from 1 to max without a leading zero.
func number(s string, max int64) (int64, bool) {
	if len(s) == 0 || len(s) > 19 || s[0] == '0' {
		return 0, false
	}
	var v int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
		if v > max {
			return 0, false
		}
	}
	return v, true
}

// at reads an <at>: 0, or a whole number to MaxAt without a leading zero.
func at(s string) (int64, bool) {
	if s == "0" {
		return 0, true
	}
	return number(s, MaxAt)
}

// badTilde is the index of the first ~ that is not ~0 or ~1, or -1.
func badTilde(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '~' && (i+1 == len(s) || s[i+1] != '0' && s[i+1] != '1') {
			return i
		}
	}
	return -1
}

// emptySegment is the 1-based place of the first empty segment of s, or -1.
func emptySegment(s string) int {
	seg := 1
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			if i == 0 || s[i-1] == '/' {
				return seg
			}
			seg++
		}
	}
	if len(s) > 0 && s[len(s)-1] == '/' {
		return seg
	}
	return -1
}

func noBadRune(s string) bool {
	i, _ := badRune(s)
	return i < 0
}
