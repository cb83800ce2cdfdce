package ledger

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"quire/words/event"
	"quire/words/jsonptr"
	"quire/words/refusal"
)

// maxDataDepth is how deeply a JSON value an operation takes (data, input,
// output, sample_output, page) may nest: event.MaxDepth, 512 levels.
const maxDataDepth = event.MaxDepth

// checkData checks a JSON value an operation takes, already known to be
// well formed: it nests at most 512 levels, its text (strings and keys) is
// valid UTF-8 with no lone surrogate escape, and each number is a finite
// double (1e400 is not). Text or a number that breaks one is refused at
// its pointer under path (the argument, such as /data); a value too deep
// at the argument itself, as run_definition's /input always was.
func checkData(path string, raw []byte) error {
	c := dataChecker{raw: raw, arg: path}
	c.space()
	if err := c.value(path, 1); err != nil {
		return err
	}
	return nil
}

type dataChecker struct {
	raw []byte
	i   int
	arg string
}

func (c *dataChecker) space() {
	for c.i < len(c.raw) && strings.IndexByte(" \t\r\n", c.raw[c.i]) >= 0 {
		c.i++
	}
}

func (c *dataChecker) value(path string, depth int) error {
	if c.i >= len(c.raw) {
		return refusal.Invalid(path, "the JSON value ends early")
	}
	switch b := c.raw[c.i]; {
	case b == '{' || b == '[':
		if depth > maxDataDepth {
			return refusal.Invalid(c.arg, "the value nests more than %d levels", maxDataDepth)
		}
		c.i++
		c.space()
		end := byte('}')
		if b == '[' {
			end = ']'
		}
		for n := 0; ; n++ {
			if c.i < len(c.raw) && c.raw[c.i] == end {
				c.i++
				return nil
			}
			if n > 0 {
				c.i++ // ','
				c.space()
			}
			at := path + "/" + strconv.Itoa(n)
			if b == '{' {
				key, err := c.str(path)
				if err != nil {
					return err
				}
				at = jsonptr.Append(path, key)
				c.space()
				c.i++ // ':'
				c.space()
			}
			if err := c.value(at, depth+1); err != nil {
				return err
			}
			c.space()
		}
	case b == '"':
		_, err := c.str(path)
		return err
	case b == 't' || b == 'f' || b == 'n':
		for c.i < len(c.raw) && c.raw[c.i] >= 'a' && c.raw[c.i] <= 'z' {
			c.i++
		}
		return nil
	default:
		start := c.i
		for c.i < len(c.raw) && strings.IndexByte("+-0123456789.eE", c.raw[c.i]) >= 0 {
			c.i++
		}
		if _, err := strconv.ParseFloat(string(c.raw[start:c.i]), 64); err != nil {
			return refusal.Invalid(path, "the number %s is not a finite double", truncate(string(c.raw[start:c.i]), 40))
		}
		return nil
	}
}

// str reads a string at c.i, checking its UTF-8 and its \u escapes, and
// answers its text.
func (c *dataChecker) str(path string) (string, error) {
	c.i++ // '"'
	var sb strings.Builder
	for c.i < len(c.raw) {
		b := c.raw[c.i]
		switch {
		case b == '"':
			c.i++
			return sb.String(), nil
		case b == '\\':
			if c.i+1 >= len(c.raw) {
				return "", refusal.Invalid(path, "the JSON value ends early")
			}
			if c.raw[c.i+1] != 'u' {
				sb.WriteByte(unescape(c.raw[c.i+1]))
				c.i += 2
				continue
			}
			r, ok := c.hex(c.i + 2)
			c.i += 6
			if hi := r; utf16.IsSurrogate(r) {
				r2, ok2 := rune(0), false
				if c.i+1 < len(c.raw) && c.raw[c.i] == '\\' && c.raw[c.i+1] == 'u' {
					r2, ok2 = c.hex(c.i + 2)
				}
				if r = utf16.DecodeRune(r, r2); !ok2 || r == utf8.RuneError {
					return "", refusal.Invalid(path, "a text holds a lone surrogate (\\u%04x), which is not Unicode text", hi)
				}
				c.i += 6
			}
			if !ok {
				return "", refusal.Invalid(path, "a text holds a bad \\u escape")
			}
			sb.WriteRune(r)
		default:
			r, n := utf8.DecodeRune(c.raw[c.i:])
			if r == utf8.RuneError && n <= 1 {
				return "", refusal.Invalid(path, "a text is not valid UTF-8 (byte 0x%02x)", b)
			}
			sb.Write(c.raw[c.i : c.i+n])
			c.i += n
		}
	}
	return "", refusal.Invalid(path, "the JSON value ends early")
}

func (c *dataChecker) hex(at int) (rune, bool) {
	if at+4 > len(c.raw) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(c.raw[at:at+4]), 16, 32)
	return rune(v), err == nil
}

func unescape(b byte) byte {
	switch b {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	case 'r':
		return '\r'
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	}
	return b
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("%s…", s[:n])
}
