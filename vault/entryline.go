package vault

// quire's own index lines, read without encoding/json.
//
// Every process that opens a vault reads its index whole once (quire
// check, the CLI, a server's start), and at 100,000 runs encoding/json
// spent 0.24 s of a 2.1 s quire check decoding 100,000 lines that quire
// wrote itself, in the one form json.Marshal gives an Entry. ownEntry reads
// that form alone; any other line (keys in another order or case, spaces,
// escapes, bytes outside printable ASCII, a line written by hand or by
// another tool) is answered false and goes to encoding/json, so what a
// line means never depends on which reader took it
// (FuzzOwnEntryIsJSONs holds the two to the same answer).

// ownFields are Entry's keys in the order json.Marshal writes them; the
// first three are always written, the others left out when empty
// (omitempty).
var ownFields = [...]string{"uid", "type", "path", "playbook", "name", "definition_type", "created"}

// ownRequired is how many of ownFields json.Marshal always writes.
const ownRequired = 3

// ownEntry reads line when it is exactly what json.Marshal writes for an
// Entry whose strings are printable ASCII without a quote or a backslash
// (so no escape): {"uid":"…","type":"…","path":"…"} and the optional
// fields after, in their order, each with a value that is not empty.
func ownEntry(line []byte) (Entry, bool) {
	var e Entry
	dst := [...]*string{&e.UID, &e.Type, &e.Path, &e.Playbook, &e.Name, &e.DefType, &e.Created}
	if len(line) < 2 || line[0] != '{' || line[len(line)-1] != '}' {
		return Entry{}, false
	}
	rest := line[1 : len(line)-1]
	next := 0 // the first of ownFields the next pair may name
	for n := 0; len(rest) > 0; n++ {
		if n > 0 {
			if rest[0] != ',' {
				return Entry{}, false
			}
			rest = rest[1:]
		}
		key, rest2, ok := plainString(rest)
		if !ok || len(rest2) == 0 || rest2[0] != ':' {
			return Entry{}, false
		}
		val, rest3, ok := plainString(rest2[1:])
		if !ok {
			return Entry{}, false
		}
		i := next
		for i < len(ownFields) && ownFields[i] != string(key) {
			if i < ownRequired {
				return Entry{}, false // a field json.Marshal always writes
			}
			i++
		}
		if i == len(ownFields) || (len(val) == 0 && i >= ownRequired) {
			return Entry{}, false // another key, or one out of order; an empty value omitempty leaves out
		}
		*dst[i] = string(val)
		next, rest = i+1, rest3
	}
	if next < ownRequired {
		return Entry{}, false
	}
	return e, true
}

// plainString reads a JSON string at the start of b that needs no
// decoding (printable ASCII, no backslash), and answers its bytes and
// what follows it.
func plainString(b []byte) (s, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return nil, nil, false
	}
	for j := 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return b[1:j], b[j+1:], true
		case c < 0x20 || c > 0x7e || c == '\\':
			return nil, nil, false
		}
	}
	return nil, nil, false
}
