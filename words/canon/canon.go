// Package canon writes JSON in its canonical form, RFC 8785 (the JSON
// Canonicalization Scheme): the form a view receipt's digest is taken of,
// so that any program can compute it again from the same value.
//
//   - No whitespace between tokens.
//   - An object's members sorted by their names' UTF-16 code units.
//   - Strings escaped as ECMAScript's JSON.stringify escapes them: \" \\
//     \b \f \n \r \t, other control characters as \u00xx in lowercase hex,
//     everything else as it is, in UTF-8.
//   - Numbers as ECMAScript's Number.prototype.toString writes a double:
//     the shortest digits that read back to it, 1e+21 and 1e-7 beyond
//     [1e-6, 1e21), and -0 as 0.
//
// Views come out of the fold as JSON.stringify wrote them, so their
// canonical form differs only in the order of members.
package canon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
)

// JSON answers the canonical form of the JSON text b, or why b is not JSON
// that has one (a number beyond a double, say).
func JSON(b []byte) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	// Anything after the value, a second value or bytes that are none
	// ("0A0"), makes the text no JSON.
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("canon: the text holds more than one JSON value")
	}
	var out bytes.Buffer
	if err := write(&out, v); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func write(out *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case nil:
		out.WriteString("null")
	case bool:
		out.WriteString(strconv.FormatBool(v))
	case string:
		writeString(out, v)
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil || math.IsInf(f, 0) {
			return fmt.Errorf("canon: the number %s is beyond a double", v)
		}
		out.WriteString(Number(f))
	case []any:
		out.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				out.WriteByte(',')
			}
			if err := write(out, e); err != nil {
				return err
			}
		}
		out.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return utf16Less(keys[i], keys[j]) })
		out.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				out.WriteByte(',')
			}
			writeString(out, k)
			out.WriteByte(':')
			if err := write(out, v[k]); err != nil {
				return err
			}
		}
		out.WriteByte('}')
	}
	return nil
}

// utf16Less orders two names by their UTF-16 code units, as RFC 8785
// sorts members (which differs from UTF-8's order beyond U+FFFF).
func utf16Less(a, b string) bool {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return ua[i] < ub[i]
		}
	}
	return len(ua) < len(ub)
}

func writeString(out *bytes.Buffer, s string) {
	out.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			out.WriteString(`\"`)
		case '\\':
			out.WriteString(`\\`)
		case '\b':
			out.WriteString(`\b`)
		case '\f':
			out.WriteString(`\f`)
		case '\n':
			out.WriteString(`\n`)
		case '\r':
			out.WriteString(`\r`)
		case '\t':
			out.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(out, `\u%04x`, r)
			} else {
				out.WriteRune(r)
			}
		}
	}
	out.WriteByte('"')
}

// Number writes a double as ECMAScript's Number.prototype.toString does
// (RFC 8785 §3.2.2.3).
func Number(f float64) string {
	if f == 0 {
		return "0" // and -0
	}
	if a := math.Abs(f); a >= 1e-6 && a < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // 1.5e-07, 1e+21
	mant, exp, _ := strings.Cut(s, "e")
	sign, digits := exp[:1], strings.TrimLeft(exp[1:], "0")
	return mant + "e" + sign + digits
}
