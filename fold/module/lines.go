package module

import (
	"encoding/json"
	"errors"
)

// Lines maps the transpiled JavaScript's lines back to the TypeScript's:
// Lines[i] is the TypeScript line (from 1) of JavaScript line i+1, or 0.
type Lines []int

// TS is the TypeScript line of JavaScript line jsLine (from 1). A line
// esbuild made up takes the nearest mapped line before it; 0 if none.
func (l Lines) TS(jsLine int) int {
	for i := jsLine - 1; i >= 0; i-- {
		if i < len(l) && l[i] > 0 {
			return l[i]
		}
	}
	return 0
}

// decodeLines reads a version 3 source map's mappings far enough to know,
// for each generated line, the first original line it maps to.
func decodeLines(raw []byte, n int) (Lines, error) {
	var sm struct {
		Mappings string `json:"mappings"`
	}
	if err := json.Unmarshal(raw, &sm); err != nil {
		return nil, err
	}
	out := make(Lines, n)
	gen, srcLine := 0, 0
	seg := make([]int, 0, 5)
	seen := false
	flush := func() error {
		if len(seg) == 0 {
			return nil
		}
		if len(seg) >= 4 {
			srcLine += seg[2]
			if !seen && gen < n {
				out[gen] = srcLine + 1
				seen = true
			}
		} else if len(seg) != 1 {
			return errors.New("bad segment")
		}
		seg = seg[:0]
		return nil
	}
	val, shift := 0, 0
	for i := 0; i < len(sm.Mappings); i++ {
		c := sm.Mappings[i]
		switch c {
		case ';':
			if err := flush(); err != nil {
				return nil, err
			}
			gen++
			seen = false
			continue
		case ',':
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		d := b64(c)
		if d < 0 {
			return nil, errors.New("bad base64 digit")
		}
		val += (d & 31) << shift
		if d&32 != 0 {
			shift += 5
			continue
		}
		v := val >> 1
		if val&1 != 0 {
			v = -v
		}
		seg = append(seg, v)
		val, shift = 0, 0
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}

func b64(c byte) int {
	switch {
	case c >= 'A' && c <= 'Z':
		return int(c - 'A')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 26
	case c >= '0' && c <= '9':
		return int(c-'0') + 52
	case c == '+':
		return 62
	case c == '/':
		return 63
	}
	return -1
}
