package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/osteele/liquid/values"

	"quire/words/event"
)

// The values a template reads. JSON is decoded into these types, each a
// values.Value of osteele/liquid, so that the engine reads them as they are:
//
//   - an object keeps its keys in the order the JSON wrote them and has only
//     its own fields: reading another gives a missing value;
//   - a list has its items and the fields size, first and last;
//   - text has the field size; a number, true, false and null have none;
//   - a missing value remembers what was read, and stops the render wherever
//     it is used, except in a condition of if, elsif or unless and as the
//     input of default.

// object is a JSON object whose keys keep their order.
type object struct {
	path string
	keys []string
	vals []values.Value
}

// list is a JSON array.
type list struct {
	path  string
	items []values.Value
}

type (
	str     string  // JSON text
	num     float64 // JSON number
	boolean bool    // JSON true or false
	null    struct{ path string }
)

// missing is the value of a field a value does not have.
type missing struct{ what string }

func (o *object) get(key string) (values.Value, bool) {
	for i, k := range o.keys {
		if k == key {
			return o.vals[i], true
		}
	}
	return nil, false
}

func (o *object) Interface() any                         { return o }
func (o *object) Int() int                               { panic(values.TypeError(o.path + " is an object, not a number")) }
func (o *object) Equal(v values.Value) bool              { return v.Interface() == any(o) }
func (o *object) Less(values.Value) bool                 { return false }
func (o *object) Test() bool                             { return true }
func (o *object) IndexValue(v values.Value) values.Value { return o.PropertyValue(v) }
func (o *object) Contains(v values.Value) bool {
	k, ok := plain(v.Interface()).(string)
	if !ok {
		return false
	}
	_, has := o.get(k)
	return has
}

func (o *object) PropertyValue(v values.Value) values.Value {
	k, ok := plain(v.Interface()).(string)
	if !ok {
		return missing{fmt.Sprintf("%s has no field %s", o.path, describeKey(v.Interface()))}
	}
	if val, has := o.get(k); has {
		return val
	}
	return missing{fmt.Sprintf("%s has no field %s", o.path, k)}
}

func (l *list) Interface() any         { return l }
func (l *list) Int() int               { panic(values.TypeError(l.path + " is a list, not a number")) }
func (l *list) Less(values.Value) bool { return false }
func (l *list) Test() bool             { return true }
func (l *list) Len() int               { return len(l.items) }
func (l *list) Index(i int) any        { return l.items[i] }
func (l *list) Equal(v values.Value) bool {
	o, ok := v.Interface().(*list)
	if !ok {
		return false
	}
	if len(o.items) != len(l.items) {
		return false
	}
	for i := range l.items {
		if !l.items[i].Equal(o.items[i]) {
			return false
		}
	}
	return true
}

func (l *list) Contains(v values.Value) bool {
	for _, it := range l.items {
		if it.Equal(v) {
			return true
		}
	}
	return false
}

func (l *list) IndexValue(v values.Value) values.Value {
	var n int
	switch x := plain(v.Interface()).(type) {
	case int:
		n = x
	case float64:
		if x != math.Trunc(x) {
			return missing{fmt.Sprintf("%s has no item %s", l.path, jsNumber(x))}
		}
		n = int(x)
	default:
		return l.PropertyValue(v)
	}
	i := n
	if i < 0 {
		i += len(l.items)
	}
	if i < 0 || i >= len(l.items) {
		return missing{fmt.Sprintf("%s has no item %d", l.path, n)}
	}
	return l.items[i]
}

func (l *list) PropertyValue(v values.Value) values.Value {
	k, _ := plain(v.Interface()).(string)
	switch k {
	case "size":
		return values.ValueOf(len(l.items))
	case "first":
		if len(l.items) > 0 {
			return l.items[0]
		}
		return missing{l.path + " is empty: it has no first item"}
	case "last":
		if len(l.items) > 0 {
			return l.items[len(l.items)-1]
		}
		return missing{l.path + " is empty: it has no last item"}
	}
	return missing{fmt.Sprintf("%s is a list: it has no field %s", l.path, describeKey(v.Interface()))}
}

func (s str) Interface() any                         { return string(s) }
func (s str) Int() int                               { return values.ValueOf(string(s)).Int() }
func (s str) Equal(v values.Value) bool              { return values.Equal(string(s), v.Interface()) }
func (s str) Less(v values.Value) bool               { return values.Less(string(s), v.Interface()) }
func (s str) Test() bool                             { return true }
func (s str) IndexValue(v values.Value) values.Value { return s.PropertyValue(v) }
func (s str) Contains(v values.Value) bool {
	sub, ok := plain(v.Interface()).(string)
	if !ok {
		sub = display(v.Interface())
	}
	return strings.Contains(string(s), sub)
}

func (s str) PropertyValue(v values.Value) values.Value {
	if k, _ := plain(v.Interface()).(string); k == "size" {
		return values.ValueOf(len([]rune(string(s))))
	}
	return missing{fmt.Sprintf("a text has no field %s", describeKey(v.Interface()))}
}

func (n num) Interface() any                         { return float64(n) }
func (n num) Equal(v values.Value) bool              { return values.Equal(float64(n), v.Interface()) }
func (n num) Less(v values.Value) bool               { return values.Less(float64(n), v.Interface()) }
func (n num) Test() bool                             { return true }
func (n num) Contains(values.Value) bool             { return false }
func (n num) IndexValue(v values.Value) values.Value { return n.PropertyValue(v) }
func (n num) PropertyValue(v values.Value) values.Value {
	return missing{fmt.Sprintf("a number has no field %s", describeKey(v.Interface()))}
}
func (n num) Int() int {
	f := float64(n)
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		panic(values.TypeError(jsNumber(f) + " is not a whole number"))
	}
	return int(f)
}

func (b boolean) Interface() any                         { return bool(b) }
func (b boolean) Int() int                               { panic(values.TypeError("true or false is not a number")) }
func (b boolean) Equal(v values.Value) bool              { return v.Interface() == any(bool(b)) }
func (b boolean) Less(values.Value) bool                 { return false }
func (b boolean) Test() bool                             { return bool(b) }
func (b boolean) Contains(values.Value) bool             { return false }
func (b boolean) IndexValue(v values.Value) values.Value { return b.PropertyValue(v) }
func (b boolean) PropertyValue(v values.Value) values.Value {
	return missing{fmt.Sprintf("%t has no field %s", bool(b), describeKey(v.Interface()))}
}

func (n null) Interface() any { return nil }
func (n null) Int() int       { panic(values.TypeError(n.name() + " is null, not a number")) }
func (n null) Equal(v values.Value) bool {
	x := v.Interface()
	if _, ok := x.(missing); ok {
		return true
	}
	return x == nil
}
func (n null) Less(values.Value) bool                 { return false }
func (n null) Test() bool                             { return false }
func (n null) Contains(values.Value) bool             { return false }
func (n null) IndexValue(v values.Value) values.Value { return n.PropertyValue(v) }
func (n null) PropertyValue(v values.Value) values.Value {
	return missing{fmt.Sprintf("%s is null: it has no field %s", n.name(), describeKey(v.Interface()))}
}
func (n null) name() string {
	if n.path == "" {
		return "the value"
	}
	return n.path
}

func (m missing) Interface() any                       { return m }
func (m missing) Int() int                             { panic(values.TypeError(m.what)) }
func (m missing) Less(values.Value) bool               { return false }
func (m missing) Test() bool                           { return false }
func (m missing) Contains(values.Value) bool           { return false }
func (m missing) IndexValue(values.Value) values.Value { return m }
func (m missing) PropertyValue(values.Value) values.Value {
	return m
}
func (m missing) Equal(v values.Value) bool {
	x := v.Interface()
	if _, ok := x.(missing); ok {
		return true
	}
	return x == nil
}

// viewsValue is the variable views: a view the fold has not written reads
// as null.
type viewsValue struct{ *object }

func (v viewsValue) Interface() any { return v.object }
func (v viewsValue) PropertyValue(k values.Value) values.Value {
	name, _ := plain(k.Interface()).(string)
	if val, ok := v.get(name); ok {
		return val
	}
	return null{"views." + name}
}
func (v viewsValue) IndexValue(k values.Value) values.Value { return v.PropertyValue(k) }

func describeKey(k any) string {
	switch k := plain(k).(type) {
	case string:
		return k
	case nil:
		return "null"
	default:
		return display(k)
	}
}

// plain unwraps the package's own scalar types to Go values.
func plain(x any) any {
	switch v := x.(type) {
	case str:
		return string(v)
	case num:
		return float64(v)
	case boolean:
		return bool(v)
	case null:
		return nil
	case values.Value:
		if _, ok := v.(missing); ok {
			return v
		}
		if _, ok := v.(*object); ok {
			return v
		}
		if _, ok := v.(*list); ok {
			return v
		}
		return v.Interface()
	}
	return x
}

// lift turns a Go value a filter made into the package's own types, so that
// reading a field it lacks stops the render as it does for decoded JSON.
func lift(x any, path string) any {
	switch v := x.(type) {
	case string:
		return str(v)
	case float64:
		return num(v)
	case bool:
		return boolean(v)
	case nil:
		return null{path}
	case []any:
		l := &list{path: path, items: make([]values.Value, len(v))}
		for i, it := range v {
			l.items[i] = toValue(lift(it, fmt.Sprintf("%s[%d]", path, i)))
		}
		return l
	}
	return x
}

func toValue(x any) values.Value {
	if v, ok := x.(values.Value); ok {
		return v
	}
	return values.ValueOf(x)
}

var errTooDeep = fmt.Errorf("the JSON nests deeper than %d levels", event.MaxDepth)

// decodeJSON decodes one JSON value into the package's types, keeping the
// order of every object's keys. path names the value in messages.
func decodeJSON(data []byte, path string) (values.Value, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return null{path}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, path, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("the JSON holds more than one value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, path string, depth int) (values.Value, error) {
	if depth > event.MaxDepth {
		return nil, errTooDeep
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &object{path: path}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeValue(dec, path+"."+k, depth+1)
				if err != nil {
					return nil, err
				}
				if i := o.index(k); i >= 0 { // a repeated key keeps its first place, takes the last value
					o.vals[i] = v
					continue
				}
				o.keys = append(o.keys, k)
				o.vals = append(o.vals, v)
			}
			_, err := dec.Token()
			return o, err
		case '[':
			l := &list{path: path}
			for dec.More() {
				v, err := decodeValue(dec, fmt.Sprintf("%s[%d]", path, len(l.items)), depth+1)
				if err != nil {
					return nil, err
				}
				l.items = append(l.items, v)
			}
			_, err := dec.Token()
			return l, err
		}
	case string:
		return str(t), nil
	case json.Number:
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil {
			return nil, fmt.Errorf("the number %s is out of range", t)
		}
		return num(f), nil
	case bool:
		return boolean(t), nil
	case nil:
		return null{path}, nil
	}
	return nil, errors.New("unexpected JSON")
}

func (o *object) index(k string) int {
	for i, key := range o.keys {
		if key == k {
			return i
		}
	}
	return -1
}

// jsNumber writes a number as JavaScript's String(number) does: 4.800000000000001,
// 100, 1e+21, 1.5e-7.
func jsNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		return "0"
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddddde±XX
	mant, expPart, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expPart)
	digits := strings.Replace(mant, ".", "", 1)
	k := len(digits)
	n := exp + 1 // the decimal point is after n digits
	switch {
	case k <= n && n <= 21:
		return sign + digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		return sign + digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		return sign + "0." + strings.Repeat("0", -n) + digits
	}
	es := "+"
	if n-1 < 0 {
		es = "-"
	}
	d := digits[:1]
	if k > 1 {
		d += "." + digits[1:]
	}
	return sign + d + "e" + es + strconv.Itoa(abs(n-1))
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

// display renders a value as an output does: text as it is, a number as
// JavaScript writes it, a list as its items with no separators, an object
// as [object Object], null as nothing.
func display(x any) string {
	var b strings.Builder
	writeDisplay(&b, x, 0)
	return b.String()
}

func writeDisplay(b *strings.Builder, x any, depth int) {
	switch v := x.(type) {
	case nil, null:
	case string:
		b.WriteString(v)
	case str:
		b.WriteString(string(v))
	case float64:
		b.WriteString(jsNumber(v))
	case num:
		b.WriteString(jsNumber(float64(v)))
	case float32:
		b.WriteString(jsNumber(float64(v)))
	case int:
		b.WriteString(strconv.Itoa(v))
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case boolean:
		b.WriteString(strconv.FormatBool(bool(v)))
	case *list:
		if depth > event.MaxDepth {
			return
		}
		for _, it := range v.items {
			writeDisplay(b, it, depth+1)
		}
	case []any:
		if depth > event.MaxDepth {
			return
		}
		for _, it := range v {
			writeDisplay(b, it, depth+1)
		}
	case []string:
		for _, it := range v {
			b.WriteString(it)
		}
	case values.Range:
		for i := 0; i < v.Len(); i++ {
			b.WriteString(strconv.Itoa(v.Index(i).(int)))
		}
	case *object, viewsValue, map[string]any:
		b.WriteString("[object Object]")
	case time.Time:
		b.WriteString(isoTime(v))
	case values.Value:
		writeDisplay(b, v.Interface(), depth+1)
	default:
		fmt.Fprint(b, v)
	}
}

// isoTime writes a time as JavaScript's toISOString does, in UTC.
func isoTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
