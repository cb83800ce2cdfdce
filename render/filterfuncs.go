package render

import (
	"errors"
	"math"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/osteele/liquid/values"
	"github.com/osteele/tuesday"
)

// The functions of the filters of filters.go.

func toNumber(x any) (float64, bool) {
	switch v := x.(type) {
	case float64:
		return v, true
	case int:
		return float64(v), true
	case int64:
		return float64(v), true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		return f, err == nil
	case nil:
		return 0, true
	}
	return 0, false
}

func needNumber(name string, x any) (float64, error) {
	f, ok := toNumber(x)
	if !ok {
		return 0, stopf("%s needs a number, not %s", name, kindOf(x))
	}
	return f, nil
}

func kindOf(x any) string {
	switch x.(type) {
	case string:
		return "text"
	case float64, int, int64:
		return "a number"
	case bool:
		return "true or false"
	case nil:
		return "null"
	case *list, []any, values.Range:
		return "a list"
	case *object, viewsValue:
		return "an object"
	}
	return "this value"
}

func toText(x any) string { return display(x) }

// toList reads a value as a list of its items; null is an empty list and
// anything else a list of one.
func toList(x any) []any {
	switch v := x.(type) {
	case *list:
		out := make([]any, len(v.items))
		for i, it := range v.items {
			out[i] = it
		}
		return out
	case []any:
		return v
	case values.Range:
		if v.Len() > memoryLimit {
			return nil
		}
		return v.AsArray()
	case nil:
		return nil
	}
	return []any{x}
}

func isWhole(f float64) bool { return f == math.Trunc(f) && math.Abs(f) < 1<<53 }

func fNum1(fn func(float64) float64) func(any, []any, *rstate) (any, error) {
	return func(in any, _ []any, _ *rstate) (any, error) {
		f, err := needNumber("this filter", in)
		if err != nil {
			return nil, err
		}
		return fn(f), nil
	}
}

func fNum2(fn func(float64, float64) float64) func(any, []any, *rstate) (any, error) {
	return func(in any, args []any, _ *rstate) (any, error) {
		a, err := needNumber("this filter", in)
		if err != nil {
			return nil, err
		}
		b, err := needNumber("its argument", args[0])
		if err != nil {
			return nil, err
		}
		return fn(a, b), nil
	}
}

func fText(fn func(string) string) func(any, []any, *rstate) (any, error) {
	return func(in any, _ []any, _ *rstate) (any, error) { return fn(toText(in)), nil }
}

func fArith(op byte) func(any, []any, *rstate) (any, error) {
	return func(in any, args []any, _ *rstate) (any, error) {
		ai, aInt := in.(int)
		bi, bInt := args[0].(int)
		if aInt && bInt {
			switch op {
			case '+':
				return ai + bi, nil
			case '-':
				return ai - bi, nil
			case '*':
				return ai * bi, nil
			case '%':
				if bi == 0 {
					return nil, stopf("modulo: division by zero")
				}
				return ai % bi, nil
			}
		}
		a, err := needNumber("this filter", in)
		if err != nil {
			return nil, err
		}
		b, err := needNumber("its argument", args[0])
		if err != nil {
			return nil, err
		}
		switch op {
		case '+':
			return a + b, nil
		case '-':
			return a - b, nil
		case '*':
			return a * b, nil
		default:
			if b == 0 {
				return nil, stopf("modulo: division by zero")
			}
			return math.Mod(a, b), nil
		}
	}
}

func fDividedBy(in any, args []any, _ *rstate) (any, error) {
	ai, aInt := in.(int)
	bi, bInt := args[0].(int)
	if aInt && bInt {
		if bi == 0 {
			return nil, stopf("divided_by: division by zero")
		}
		return int(math.Floor(float64(ai) / float64(bi))), nil
	}
	a, err := needNumber("divided_by", in)
	if err != nil {
		return nil, err
	}
	b, err := needNumber("divided_by", args[0])
	if err != nil {
		return nil, err
	}
	if b == 0 {
		return nil, stopf("divided_by: division by zero")
	}
	return a / b, nil
}

func fRound(in any, args []any, _ *rstate) (any, error) {
	f, err := needNumber("round", in)
	if err != nil {
		return nil, err
	}
	places := 0
	if len(args) > 0 {
		p, err := needNumber("round", args[0])
		if err != nil {
			return nil, err
		}
		places = int(p)
	}
	if places < 0 || places > 15 {
		return nil, stopf("round takes 0 to 15 decimals")
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(roundHalfAway(f, places), 'f', places, 64), 64)
	return r, nil
}

// roundHalfAway rounds to places decimals, halves away from zero, reading
// the number as it is written (2.345 rounds to 2.35, not 2.34).
func roundHalfAway(f float64, places int) float64 {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	intPart, frac, _ := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	if len(frac) <= places {
		return f
	}
	keep := intPart + frac[:places]
	n, _ := strconv.ParseFloat(keep, 64)
	if frac[places] >= '5' {
		n++
	}
	n /= math.Pow10(places)
	if f < 0 {
		n = -n
	}
	return n
}

func fClip(in any, args []any, _ *rstate) (any, error) {
	n, err := needNumber("clip", args[0])
	if err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, stopf("clip needs a length of at least 1")
	}
	return clip(toText(in), int(n)), nil
}

// clip cuts text to at most n characters, the ellipsis included, and drops
// the white space the cut leaves at its end.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i < len(s) && count < n-1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	return strings.TrimRightFunc(s[:i], unicode.IsSpace) + "…"
}

var currencySymbols = map[string]string{"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "INR": "₹"}

func fMoney(in any, args []any, _ *rstate) (any, error) {
	f, err := needNumber("money", in)
	if err != nil {
		return nil, err
	}
	code := "USD"
	if len(args) > 0 {
		code = strings.ToUpper(strings.TrimSpace(toText(args[0])))
		if !regexp.MustCompile(`^[A-Z]{3}$`).MatchString(code) {
			return nil, stopf("money takes a currency code of three letters, such as EUR")
		}
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	cents := roundHalfAway(f, 2)
	var amount string
	if cents == math.Trunc(cents) {
		amount = group(strconv.FormatFloat(cents, 'f', 0, 64))
	} else {
		s := strconv.FormatFloat(cents, 'f', 2, 64)
		ip, fp, _ := strings.Cut(s, ".")
		amount = group(ip) + "." + fp
	}
	if sym, ok := currencySymbols[code]; ok {
		return sign + sym + amount, nil
	}
	return sign + code + " " + amount, nil
}

// group writes thousands separators into the digits of a whole number.
func group(digits string) string {
	if len(digits) <= 3 {
		return digits
	}
	var b strings.Builder
	lead := len(digits) % 3
	if lead > 0 {
		b.WriteString(digits[:lead])
	}
	for i := lead; i < len(digits); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(digits[i : i+3])
	}
	return b.String()
}

func groupNumber(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	if strings.ContainsAny(s, "eE") {
		return sign + s
	}
	ip, fp, hasFrac := strings.Cut(s, ".")
	out := sign + group(ip)
	if hasFrac {
		out += "." + fp
	}
	return out
}

func fNumber(in any, args []any, _ *rstate) (any, error) {
	f, err := needNumber("number", in)
	if err != nil {
		return nil, err
	}
	if len(args) == 0 {
		return groupNumber(jsNumber(f)), nil
	}
	p, err := needNumber("number", args[0])
	if err != nil {
		return nil, err
	}
	if p < 0 || p > 15 {
		return nil, stopf("number takes 0 to 15 decimals")
	}
	return groupNumber(strconv.FormatFloat(roundHalfAway(f, int(p)), 'f', int(p), 64)), nil
}

func fPercent(in any, args []any, _ *rstate) (any, error) {
	f, err := needNumber("percent", in)
	if err != nil {
		return nil, err
	}
	places := 0
	if len(args) > 0 {
		p, err := needNumber("percent", args[0])
		if err != nil {
			return nil, err
		}
		if p < 0 || p > 15 {
			return nil, stopf("percent takes 0 to 15 decimals")
		}
		places = int(p)
	}
	pct := roundHalfAway(f*100, places)
	s := strconv.FormatFloat(pct, 'f', places, 64)
	if places > 0 {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return groupNumber(s) + "%", nil
}

func fJSON(in any, _ []any, st *rstate) (any, error) {
	var b strings.Builder
	if err := writeJSON(&b, in, 0); err != nil {
		return nil, &errStop{err.Error()}
	}
	return b.String(), nil
}

func fSum(in any, args []any, _ *rstate) (any, error) {
	total := 0.0
	allInt := true
	for i, it := range toList(in) {
		x := plain(it)
		if len(args) > 0 {
			key := toText(args[0])
			v := toValue(it).PropertyValue(values.ValueOf(key))
			if _, ok := v.(missing); ok {
				x = nil
			} else {
				x = plain(v)
			}
		}
		if x == nil {
			continue
		}
		f, ok := toNumber(x)
		if !ok {
			return nil, stopf("sum: item %d is %s, not a number", i+1, kindOf(x))
		}
		if _, isInt := x.(int); !isInt {
			allInt = false
		}
		total += f
	}
	if allInt && isWhole(total) {
		return int(total), nil
	}
	return total, nil
}

func fDefault(in any, args []any, _ *rstate) (any, error) {
	switch v := in.(type) {
	case nil:
		return args[0], nil
	case bool:
		if !v {
			return args[0], nil
		}
	case string:
		if v == "" {
			return args[0], nil
		}
	case *list:
		if len(v.items) == 0 {
			return args[0], nil
		}
	case []any:
		if len(v) == 0 {
			return args[0], nil
		}
	}
	return in, nil
}

func fAppend(in any, args []any, _ *rstate) (any, error)  { return toText(in) + toText(args[0]), nil }
func fPrepend(in any, args []any, _ *rstate) (any, error) { return toText(args[0]) + toText(in), nil }

func fCapitalize(in any, _ []any, _ *rstate) (any, error) {
	s := toText(in)
	r, size := utf8.DecodeRuneInString(s)
	if size == 0 {
		return s, nil
	}
	return string(unicode.ToUpper(r)) + strings.ToLower(s[size:]), nil
}

func fReplaceN(which string, remove bool) func(any, []any, *rstate) (any, error) {
	return func(in any, args []any, _ *rstate) (any, error) {
		s, old := toText(in), toText(args[0])
		repl := ""
		if !remove {
			repl = toText(args[1])
		}
		switch which {
		case "first":
			return strings.Replace(s, old, repl, 1), nil
		case "last":
			i := strings.LastIndex(s, old)
			if i < 0 {
				return s, nil
			}
			return s[:i] + repl + s[i+len(old):], nil
		}
		if old == "" {
			return s, nil
		}
		return strings.ReplaceAll(s, old, repl), nil
	}
}

func fSplit(in any, args []any, st *rstate) (any, error) {
	s, sep := toText(in), toText(args[0])
	var parts []string
	if sep == " " {
		parts = strings.Fields(s)
	} else {
		parts = strings.Split(s, sep)
	}
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if err := st.charge(len(parts)); err != nil {
		return nil, err
	}
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out, nil
}

func fJoin(in any, args []any, st *rstate) (any, error) {
	sep := " "
	if len(args) > 0 {
		sep = toText(args[0])
	}
	items := toList(in)
	var b strings.Builder
	for i, it := range items {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(toText(it))
		if b.Len() > memoryLimit {
			return nil, st.over("memory")
		}
	}
	return b.String(), nil
}

func fFirst(in any, _ []any, _ *rstate) (any, error) {
	if s, ok := in.(string); ok {
		r, size := utf8.DecodeRuneInString(s)
		if size == 0 {
			return nil, nil
		}
		return string(r), nil
	}
	items := toList(in)
	if len(items) == 0 {
		return nil, nil
	}
	return items[0], nil
}

func fLast(in any, _ []any, _ *rstate) (any, error) {
	if s, ok := in.(string); ok {
		r, size := utf8.DecodeLastRuneInString(s)
		if size == 0 {
			return nil, nil
		}
		return string(r), nil
	}
	items := toList(in)
	if len(items) == 0 {
		return nil, nil
	}
	return items[len(items)-1], nil
}

func fMap(in any, args []any, _ *rstate) (any, error) {
	key := values.ValueOf(toText(args[0]))
	items := toList(in)
	out := make([]any, len(items))
	for i, it := range items {
		v := toValue(it).PropertyValue(key)
		if m, ok := v.(missing); ok {
			return nil, stopf("map: %s", m.what)
		}
		out[i] = v
	}
	return out, nil
}

func fCompact(in any, _ []any, _ *rstate) (any, error) {
	var out []any
	for _, it := range toList(in) {
		if plain(it) != nil {
			out = append(out, it)
		}
	}
	return orEmpty(out), nil
}

func orEmpty(l []any) []any {
	if l == nil {
		return []any{}
	}
	return l
}

func fConcat(in any, args []any, _ *rstate) (any, error) {
	a, b := toList(in), toList(args[0])
	out := make([]any, 0, len(a)+len(b))
	return append(append(out, a...), b...), nil
}

func fReverse(in any, _ []any, _ *rstate) (any, error) {
	items := toList(in)
	out := make([]any, len(items))
	for i, it := range items {
		out[len(items)-1-i] = it
	}
	return out, nil
}

func fUniq(in any, _ []any, _ *rstate) (any, error) {
	var out []any
	for _, it := range toList(in) {
		seen := false
		for _, o := range out {
			if toValue(o).Equal(toValue(it)) {
				seen = true
				break
			}
		}
		if !seen {
			out = append(out, it)
		}
	}
	return orEmpty(out), nil
}

func fSize(in any, _ []any, _ *rstate) (any, error) {
	switch v := in.(type) {
	case string:
		return utf8.RuneCountInString(v), nil
	case *object:
		return len(v.keys), nil
	case viewsValue:
		return len(v.keys), nil
	case nil:
		return 0, nil
	case *list, []any, values.Range:
		if r, ok := v.(values.Range); ok {
			return r.Len(), nil
		}
		return len(toList(v)), nil
	}
	return 0, nil
}

func fSlice(in any, args []any, _ *rstate) (any, error) {
	start, err := needNumber("slice", args[0])
	if err != nil {
		return nil, err
	}
	n := 1.0
	if len(args) > 1 {
		if n, err = needNumber("slice", args[1]); err != nil {
			return nil, err
		}
	}
	cut := func(l int) (int, int) {
		s := int(start)
		if s < 0 {
			s += l
		}
		if s < 0 {
			s = 0
		}
		if s > l {
			s = l
		}
		e := s + int(math.Max(n, 0))
		if e > l {
			e = l
		}
		return s, e
	}
	if s, ok := in.(string); ok {
		r := []rune(s)
		a, b := cut(len(r))
		return string(r[a:b]), nil
	}
	items := toList(in)
	a, b := cut(len(items))
	return append([]any{}, items[a:b]...), nil
}

func fSort(natural bool) func(any, []any, *rstate) (any, error) {
	return func(in any, args []any, _ *rstate) (any, error) {
		items := append([]any{}, toList(in)...)
		key := func(it any) any {
			if len(args) == 0 {
				return plain(it)
			}
			v := toValue(it).PropertyValue(values.ValueOf(toText(args[0])))
			if _, ok := v.(missing); ok {
				return nil
			}
			return plain(v)
		}
		less := func(a, b any) bool {
			if a == nil || b == nil {
				return a != nil && b == nil
			}
			if natural {
				as, aok := a.(string)
				bs, bok := b.(string)
				if aok && bok {
					return strings.ToLower(as) < strings.ToLower(bs)
				}
			}
			an, aok := toNumberStrict(a)
			bn, bok := toNumberStrict(b)
			if aok && bok {
				return an < bn
			}
			return toText(a) < toText(b)
		}
		sort.SliceStable(items, func(i, j int) bool { return less(key(items[i]), key(items[j])) })
		return items, nil
	}
}

func toNumberStrict(x any) (float64, bool) {
	if _, ok := x.(string); ok {
		return 0, false
	}
	return toNumber(x)
}

func fTruncate(in any, args []any, _ *rstate) (any, error) {
	n, err := needNumber("truncate", args[0])
	if err != nil {
		return nil, err
	}
	el := "..."
	if len(args) > 1 {
		el = toText(args[1])
	}
	r := []rune(toText(in))
	if len(r) <= int(n) {
		return string(r), nil
	}
	keep := int(n) - utf8.RuneCountInString(el)
	if keep < 0 {
		keep = 0
	}
	return string(r[:keep]) + el, nil
}

func fTruncateWords(in any, args []any, _ *rstate) (any, error) {
	n, err := needNumber("truncatewords", args[0])
	if err != nil {
		return nil, err
	}
	el := "..."
	if len(args) > 1 {
		el = toText(args[1])
	}
	words := strings.Fields(toText(in))
	if n < 1 {
		n = 1
	}
	if len(words) <= int(n) {
		return toText(in), nil
	}
	return strings.Join(words[:int(n)], " ") + el, nil
}

func fURLDecode(in any, _ []any, _ *rstate) (any, error) {
	s, err := url.QueryUnescape(toText(in))
	if err != nil {
		return nil, stopf("url_decode: the text is not URL-encoded")
	}
	return s, nil
}

func fWhere(in any, args []any, _ *rstate) (any, error) {
	key := values.ValueOf(toText(args[0]))
	var out []any
	for _, it := range toList(in) {
		v := toValue(it).PropertyValue(key)
		if _, ok := v.(missing); ok {
			continue
		}
		if len(args) > 1 {
			if v.Equal(values.ValueOf(args[1])) {
				out = append(out, it)
			}
		} else if v.Test() {
			out = append(out, it)
		}
	}
	return orEmpty(out), nil
}

func fDate(in any, args []any, st *rstate) (any, error) {
	var t time.Time
	switch v := in.(type) {
	case string:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "now", "today":
			t = st.now
		default:
			var err error
			t, err = parseTime(v)
			if err != nil {
				return nil, stopf("date: %q is not a time in ISO 8601", v)
			}
		}
	case float64:
		t = time.UnixMilli(int64(v))
	case int:
		t = time.UnixMilli(int64(v))
	default:
		return nil, stopf("date needs a time, not %s", kindOf(in))
	}
	s, err := tuesday.Strftime(toText(args[0]), t.UTC())
	if err != nil {
		return nil, stopf("date: %s", err.Error())
	}
	return s, nil
}

func parseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05Z07:00", "2006-01-02T15:04Z07:00", "2006-01-02", "2006-01"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New("not a time")
}
