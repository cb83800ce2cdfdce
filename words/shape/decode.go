package shape

import (
	"encoding/json"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// decode reads JSON text (RFC 8259) into the values encoding/json gives
// with UseNumber, []any, json.Number, string, bool and nil, but for an
// object, which it reads as an *object (object.go): std turns it into
// encoding/json's map[string]any. It exists for speed: encoding/json's
// Decoder takes several milliseconds over the 2,000 points a series may
// hold, this a fraction of that, not least as strings and numbers are cut
// from one copy of the text, and objects and lists from blocks (the values
// are only checked, never kept). It reads exactly what encoding/json
// reads, to the same value, as FuzzCheck verifies: a member named twice
// keeps its last value, and an escaped surrogate without its pair reads as
// U+FFFD. The text must be UTF-8 (Check refuses other text first). It
// gives the value, or the message of the issue.
func decode(doc []byte) (any, string) {
	// A block holds up to 1,024 members or elements, fewer for a short
	// text: each takes at least two bytes of it.
	d := decoder{s: doc, text: string(doc), block: min(max(len(doc)/8, 16), 1024)}
	d.space()
	v, ok := d.value(0)
	if !ok {
		return nil, d.message()
	}
	d.space()
	if d.i < len(d.s) {
		return nil, msgJSONMore
	}
	return v, ""
}

// maxDepth is the deepest nesting read, as encoding/json's.
const maxDepth = 10000

type decoder struct {
	s    []byte
	text string // s as a string, which strings and numbers are cut from

	// The members and elements being read, of every object and array
	// open, and the blocks the finished ones are cut from, so that most
	// take no allocation of their own.
	members []member
	elems   []any
	mblock  []member
	eblock  []any
	oblock  []object
	block   int
	i       int
	bad     int // where the text stopped being JSON; -1 when it ended too soon
}

func (d *decoder) message() string {
	if d.bad < 0 || d.bad >= len(d.s) {
		return msgJSONEnds
	}
	return "Expected JSON: the text is not JSON at byte " + strconv.Itoa(d.bad+1) + "."
}

func (d *decoder) fail(at int) bool {
	d.bad = at
	return false
}

func (d *decoder) space() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *decoder) value(depth int) (any, bool) {
	if d.i >= len(d.s) {
		return nil, d.fail(-1)
	}
	switch c := d.s[d.i]; {
	case c == '{':
		if depth >= maxDepth {
			return nil, d.fail(d.i)
		}
		return d.object(depth + 1)
	case c == '[':
		if depth >= maxDepth {
			return nil, d.fail(d.i)
		}
		return d.array(depth + 1)
	case c == '"':
		s, ok := d.str()
		return s, ok
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	}
	return nil, d.fail(d.i)
}

func (d *decoder) literal(word string) bool {
	for k := 0; k < len(word); k++ {
		if d.i >= len(d.s) {
			return d.fail(-1)
		}
		if d.s[d.i] != word[k] {
			return d.fail(d.i)
		}
		d.i++
	}
	return true
}

func (d *decoder) object(depth int) (any, bool) {
	d.i++ // {
	base := len(d.members)
	d.space()
	if d.i < len(d.s) && d.s[d.i] == '}' {
		d.i++
		return d.newObject(base), true
	}
	for {
		if d.i >= len(d.s) {
			return nil, d.fail(-1)
		}
		if d.s[d.i] != '"' {
			return nil, d.fail(d.i)
		}
		key, ok := d.key()
		if !ok {
			return nil, false
		}
		d.space()
		if d.i >= len(d.s) {
			return nil, d.fail(-1)
		}
		if d.s[d.i] != ':' {
			return nil, d.fail(d.i)
		}
		d.i++
		d.space()
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		d.members = append(d.members, member{key, v})
		d.space()
		if d.i >= len(d.s) {
			return nil, d.fail(-1)
		}
		switch d.s[d.i] {
		case ',':
			d.i++
			d.space()
		case '}':
			d.i++
			return d.newObject(base), true
		default:
			return nil, d.fail(d.i)
		}
	}
}

// newObject makes an object of the members read since base, each name once
// with its last value.
func (d *decoder) newObject(base int) *object {
	ms := d.members[base:]
	// Drop each member whose name comes again later.
	keep := ms[:0]
	if len(ms) <= 16 {
		for i := range ms {
			again := false
			for j := i + 1; j < len(ms); j++ {
				if ms[j].name == ms[i].name {
					again = true
					break
				}
			}
			if !again {
				keep = append(keep, ms[i])
			}
		}
	} else {
		last := make(map[string]int, len(ms))
		for i := range ms {
			last[ms[i].name] = i
		}
		for i := range ms {
			if last[ms[i].name] == i {
				keep = append(keep, ms[i])
			}
		}
	}
	n := len(keep)
	if len(d.mblock) < n {
		d.mblock = make([]member, max(n, d.block))
	}
	o := d.allocObject()
	o.members = d.mblock[:n:n]
	copy(o.members, keep)
	d.mblock = d.mblock[n:]
	clear(d.members[base:])
	d.members = d.members[:base]
	return o
}

func (d *decoder) allocObject() *object {
	if len(d.oblock) == 0 {
		d.oblock = make([]object, d.block/2)
	}
	o := &d.oblock[0]
	d.oblock = d.oblock[1:]
	return o
}

func (d *decoder) array(depth int) (any, bool) {
	d.i++ // [
	base := len(d.elems)
	d.space()
	if d.i < len(d.s) && d.s[d.i] == ']' {
		d.i++
		return d.newArray(base), true
	}
	for {
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		d.elems = append(d.elems, v)
		d.space()
		if d.i >= len(d.s) {
			return nil, d.fail(-1)
		}
		switch d.s[d.i] {
		case ',':
			d.i++
			d.space()
		case ']':
			d.i++
			return d.newArray(base), true
		default:
			return nil, d.fail(d.i)
		}
	}
}

// newArray makes a list of the elements read since base.
func (d *decoder) newArray(base int) []any {
	n := len(d.elems) - base
	if n == 0 {
		return []any{}
	}
	if len(d.eblock) < n {
		d.eblock = make([]any, max(n, d.block))
	}
	arr := d.eblock[:n:n]
	copy(arr, d.elems[base:])
	d.eblock = d.eblock[n:]
	clear(d.elems[base:])
	d.elems = d.elems[:base]
	return arr
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? as its text.
func (d *decoder) number() (any, bool) {
	start := d.i
	if d.s[d.i] == '-' {
		d.i++
	}
	if d.i >= len(d.s) {
		return nil, d.fail(-1)
	}
	switch c := d.s[d.i]; {
	case c == '0':
		d.i++
	case c >= '1' && c <= '9':
		d.i++
		d.digits()
	default:
		return nil, d.fail(d.i)
	}
	if d.i < len(d.s) && d.s[d.i] == '.' {
		d.i++
		if !d.needDigits() {
			return nil, false
		}
	}
	if d.i < len(d.s) && (d.s[d.i] == 'e' || d.s[d.i] == 'E') {
		d.i++
		if d.i < len(d.s) && (d.s[d.i] == '+' || d.s[d.i] == '-') {
			d.i++
		}
		if !d.needDigits() {
			return nil, false
		}
	}
	return json.Number(d.text[start:d.i]), true
}

func (d *decoder) digits() {
	for d.i < len(d.s) && d.s[d.i] >= '0' && d.s[d.i] <= '9' {
		d.i++
	}
}

func (d *decoder) needDigits() bool {
	if d.i >= len(d.s) {
		return d.fail(-1)
	}
	if d.s[d.i] < '0' || d.s[d.i] > '9' {
		return d.fail(d.i)
	}
	d.digits()
	return true
}

// field gives the shapes' field of this name, as a constant string, or
// "" and false.
func field(b []byte) (string, bool) {
	switch string(b) { // compiled to comparisons, without allocating
	case "unit":
		return "unit", true
	case "period":
		return "period", true
	case "origin":
		return "origin", true
	case "lines":
		return "lines", true
	case "marks":
		return "marks", true
	case "name":
		return "name", true
	case "points":
		return "points", true
	case "at":
		return "at", true
	case "value":
		return "value", true
	case "low":
		return "low", true
	case "high":
		return "high", true
	case "label":
		return "label", true
	case "values":
		return "values", true
	case "columns":
		return "columns", true
	case "rows":
		return "rows", true
	case "text":
		return "text", true
	}
	return "", false
}

// key reads a member's name: one of the shapes' fields is not copied.
func (d *decoder) key() (string, bool) {
	end := d.i + 1
	for end < len(d.s) && end-d.i <= 8 && d.s[end] != '"' && d.s[end] != '\\' {
		end++
	}
	if end < len(d.s) && d.s[end] == '"' {
		if f, ok := field(d.s[d.i+1 : end]); ok {
			d.i = end + 1
			return f, true
		}
	}
	return d.str()
}

// str reads a string. Most hold no escape and are sliced as they are.
func (d *decoder) str() (string, bool) {
	d.i++ // "
	start := d.i
	for d.i < len(d.s) {
		c := d.s[d.i]
		switch {
		case c == '"':
			s := d.text[start:d.i]
			d.i++
			return s, true
		case c == '\\':
			return d.escaped(start)
		case c < 0x20:
			return "", d.fail(d.i)
		}
		d.i++
	}
	return "", d.fail(-1)
}

// escaped reads the rest of a string that holds an escape.
func (d *decoder) escaped(start int) (string, bool) {
	buf := append([]byte(nil), d.s[start:d.i]...)
	for d.i < len(d.s) {
		c := d.s[d.i]
		switch {
		case c == '"':
			d.i++
			return string(buf), true
		case c < 0x20:
			return "", d.fail(d.i)
		case c != '\\':
			buf = append(buf, c)
			d.i++
			continue
		}
		d.i++ // \
		if d.i >= len(d.s) {
			return "", d.fail(-1)
		}
		switch e := d.s[d.i]; e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := d.hex4(d.i + 1)
			if !ok {
				return "", false
			}
			d.i += 4
			if utf16.IsSurrogate(r) {
				// A pair is \uD8xx\uDCxx; a half alone reads as U+FFFD.
				if d.i+6 < len(d.s) && d.s[d.i+1] == '\\' && d.s[d.i+2] == 'u' {
					if r2, ok := d.hex4q(d.i + 3); ok {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							d.i += 6
							buf = utf8.AppendRune(buf, dec)
							break
						}
					}
				}
				r = utf8.RuneError
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", d.fail(d.i)
		}
		d.i++
	}
	return "", d.fail(-1)
}

// hex4 reads four hexadecimal digits at i.
func (d *decoder) hex4(i int) (rune, bool) {
	if i+4 > len(d.s) {
		for k := i; k < len(d.s); k++ {
			if unhex(d.s[k]) < 0 {
				return 0, d.fail(k)
			}
		}
		return 0, d.fail(-1)
	}
	r, ok := d.hex4q(i)
	if !ok {
		for k := i; k < i+4; k++ {
			if unhex(d.s[k]) < 0 {
				return 0, d.fail(k)
			}
		}
	}
	return r, ok
}

// hex4q reads four hexadecimal digits at i, if they are there, without
// failing.
func (d *decoder) hex4q(i int) (rune, bool) {
	if i+4 > len(d.s) {
		return 0, false
	}
	var r rune
	for k := i; k < i+4; k++ {
		h := unhex(d.s[k])
		if h < 0 {
			return 0, false
		}
		r = r<<4 | rune(h)
	}
	return r, true
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
