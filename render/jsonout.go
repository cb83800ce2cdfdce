package render

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/osteele/liquid/values"

	"quire/words/event"
)

// writeJSON writes a value as JavaScript's JSON.stringify does, without
// spaces: an object's keys in the order they were written, numbers as
// JavaScript writes them, text escaped as JSON.stringify escapes it.
func writeJSON(b *strings.Builder, x any, depth int) error {
	if depth > event.MaxDepth {
		return fmt.Errorf("json: the value nests deeper than %d levels", event.MaxDepth)
	}
	switch v := x.(type) {
	case nil, null:
		b.WriteString("null")
	case missing:
		return errors.New(v.what)
	case string:
		jsonString(b, v)
	case str:
		jsonString(b, string(v))
	case float64:
		jsonNum(b, v)
	case num:
		jsonNum(b, float64(v))
	case int:
		b.WriteString(strconv.Itoa(v))
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case boolean:
		b.WriteString(strconv.FormatBool(bool(v)))
	case viewsValue:
		return writeJSON(b, v.object, depth)
	case *object:
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			jsonString(b, k)
			b.WriteByte(':')
			if err := writeJSON(b, v.vals[i], depth+1); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case *list:
		b.WriteByte('[')
		for i, it := range v.items {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, it, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case []any:
		b.WriteByte('[')
		for i, it := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, it, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case []string:
		b.WriteByte('[')
		for i, it := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			jsonString(b, it)
		}
		b.WriteByte(']')
	case values.Range:
		b.WriteByte('[')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(v.Index(i).(int)))
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			if !strings.HasPrefix(k, ".") {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			jsonString(b, k)
			b.WriteByte(':')
			if err := writeJSON(b, v[k], depth+1); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case time.Time:
		jsonString(b, isoTime(v))
	case values.Value:
		return writeJSON(b, v.Interface(), depth+1)
	default:
		jsonString(b, display(v))
	}
	return nil
}

func jsonNum(b *strings.Builder, f float64) {
	s := jsNumber(f)
	if s == "NaN" || s == "Infinity" || s == "-Infinity" {
		s = "null"
	}
	b.WriteString(s)
}

// jsonString escapes text as JSON.stringify does: the quote, the backslash
// and the control characters, and nothing else.
func jsonString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				b.WriteString(`\"`)
			case '\\':
				b.WriteString(`\\`)
			case '\b':
				b.WriteString(`\b`)
			case '\f':
				b.WriteString(`\f`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			default:
				if c < 0x20 {
					b.WriteString(`\u00`)
					b.WriteByte("0123456789abcdef"[c>>4])
					b.WriteByte("0123456789abcdef"[c&0xf])
				} else {
					b.WriteByte(c)
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(`\ufffd`)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
}
