package shape

import (
	"encoding/json"
	"math"
	"strconv"
)

// rules checks, for each shape, what its schema cannot state. Each rule
// looks only at values of the type the schema asks for and passes over the
// rest, which the schema reports. Where a rule and the schema both find a
// problem (a NaN, a text too long), they word it alike, and the collector
// keeps one.
var rules = map[string]func(c *collector, v any){
	"series":     seriesRules,
	"categories": categoriesRules,
	"table":      tableRules,
	"text":       textRules,
}

const (
	maxPoints    = 2000
	maxTextBytes = 65536
)

func seriesRules(c *collector, v any) {
	o, ok := asObj(v)
	if !ok {
		return
	}
	f := formTime
	if p, ok := o.get("period"); ok {
		if s, ok := p.(string); ok {
			f = formOf(s)
		} else {
			f = formUnknown
		}
	}
	if origin, ok := o.str("origin"); ok && f != formUnknown {
		if _, msg := parseAt(f, origin); msg != "" {
			c.add("/origin", msg)
		}
	}
	if lines, ok := o.list("lines"); ok {
		total, oneTooMany := 0, false
		var seen map[string]bool
		for i, l := range lines {
			line, ok := asObj(l)
			if !ok {
				continue
			}
			here := "/lines/" + strconv.Itoa(i)
			if name, ok := line.str("name"); ok {
				if seen == nil {
					seen = make(map[string]bool, len(lines))
				}
				if seen[name] {
					c.add(here+"/name", msgUnique("line"))
				}
				seen[name] = true
			}
			points, ok := line.list("points")
			if !ok {
				continue
			}
			total += len(points)
			oneTooMany = oneTooMany || len(points) > maxPoints
			pointsRules(c, here+"/points", f, points)
		}
		// A line that alone holds too many has its own issue already.
		if total > maxPoints && !oneTooMany {
			c.add("/lines", msgPoints)
		}
	}
	if marks, ok := o.list("marks"); ok {
		for i, m := range marks {
			if mark, ok := asObj(m); ok {
				if x, ok := mark.get("value"); ok {
					numberRule(c, x, func() string { return "/marks/" + strconv.Itoa(i) + "/value" })
				}
			}
		}
	}
}

// pointsRules checks one line's points: the form of each at, each later
// than the one before it, and each value with its low and high.
func pointsRules(c *collector, here string, f form, points []any) {
	var prev instant
	prevOK := false
	for j, p := range points {
		point, ok := asObj(p)
		if !ok {
			prevOK = false
			continue
		}
		path := func() string { return here + "/" + strconv.Itoa(j) }
		boundsRules(c, point, path)
		at, ok := point.str("at")
		if !ok || f == formUnknown {
			prevOK = false
			continue
		}
		t, msg := parseAt(f, at)
		if msg != "" {
			c.add(path()+"/at", msg)
			prevOK = false
			continue
		}
		if prevOK && !t.after(prev) {
			c.add(path()+"/at", msgLater)
		}
		prev, prevOK = t, true
	}
}

// boundsRules checks a record's value, low and high: each a number a
// double holds, a low at most its value and a high at least it.
func boundsRules(c *collector, rec obj, path func() string) {
	value, hasValue := rec.get("value")
	low, hasLow := rec.get("low")
	high, hasHigh := rec.get("high")
	var vf float64
	vOK := false
	if hasValue {
		vf, vOK = numberRule(c, value, func() string { return path() + "/value" })
	}
	if hasLow {
		if lf, ok := numberRule(c, low, func() string { return path() + "/low" }); ok && vOK && lf > vf {
			c.add(path()+"/low", msgLow)
		}
	}
	if hasHigh {
		if hf, ok := numberRule(c, high, func() string { return path() + "/high" }); ok && vOK && hf < vf {
			c.add(path()+"/high", msgHigh)
		}
	}
}

// numberRule reads a number the schema has taken as one. A json.Number
// that a double cannot hold, or a float that is NaN or infinite, is an
// issue; anything else that is no number is left to the schema.
func numberRule(c *collector, x any, path func() string) (float64, bool) {
	f, known, ok := toFloat(x)
	if !known {
		return 0, false
	}
	if !ok {
		c.add(path(), msgDouble)
		return 0, false
	}
	return f, true
}

// toFloat gives a number's value as a double; known is false for what is
// no number, ok false for a number that no double holds.
func toFloat(x any) (f float64, known, ok bool) {
	switch n := x.(type) {
	case float64:
		f = n
	case json.Number:
		var err error
		f, err = strconv.ParseFloat(string(n), 64)
		if err != nil && !math.IsInf(f, 0) {
			// Not a number at all: only a caller's own json.Number can be.
			return 0, true, false
		}
	case float32:
		f = float64(n)
	case int:
		f = float64(n)
	case int8:
		f = float64(n)
	case int16:
		f = float64(n)
	case int32:
		f = float64(n)
	case int64:
		f = float64(n)
	case uint:
		f = float64(n)
	case uint8:
		f = float64(n)
	case uint16:
		f = float64(n)
	case uint32:
		f = float64(n)
	case uint64:
		f = float64(n)
	default:
		return 0, false, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, true, false
	}
	return f, true, true
}

func categoriesRules(c *collector, v any) {
	o, ok := asObj(v)
	if !ok {
		return
	}
	values, ok := o.list("values")
	if !ok {
		return
	}
	seen := make(map[string]bool, len(values))
	for i, x := range values {
		rec, ok := asObj(x)
		if !ok {
			continue
		}
		path := func() string { return "/values/" + strconv.Itoa(i) }
		if name, ok := rec.str("name"); ok {
			if seen[name] {
				c.add(path()+"/name", msgUnique("value"))
			}
			seen[name] = true
		}
		boundsRules(c, rec, path)
	}
}

func tableRules(c *collector, v any) {
	o, ok := asObj(v)
	if !ok {
		return
	}
	columns, colsOK := o.list("columns")
	if colsOK {
		seen := make(map[string]bool, len(columns))
		for i, x := range columns {
			if col, ok := asObj(x); ok {
				if name, ok := col.str("name"); ok {
					if seen[name] {
						c.add("/columns/"+strconv.Itoa(i)+"/name", msgUnique("column"))
					}
					seen[name] = true
				}
			}
		}
	}
	rows, ok := o.list("rows")
	if !ok {
		return
	}
	for i, x := range rows {
		row, ok := x.([]any)
		if !ok {
			continue
		}
		if colsOK && len(row) != len(columns) {
			c.add("/rows/"+strconv.Itoa(i), msgCells(len(columns)))
		}
		for j, cell := range row {
			numberRule(c, cell, func() string { return "/rows/" + strconv.Itoa(i) + "/" + strconv.Itoa(j) })
		}
	}
}

func textRules(c *collector, v any) {
	o, ok := asObj(v)
	if !ok {
		return
	}
	if s, ok := o.str("text"); ok && len(s) > maxTextBytes {
		c.add("/text", msgTextLen)
	}
}
