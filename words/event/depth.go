package event

// MaxDepth is how deep a run's input, an event's data or a preview's
// sample_output may nest: 512 levels of arrays and objects (page-format.md,
// Limits), so that a fold never meets JSON deeper than it reads.
const MaxDepth = 512

// Depth is how deep JSON text nests: 0 for a scalar, 1 for [] or {}, one
// more for each array or object inside. It reads the text as it is and
// does not check that it is JSON.
func Depth(raw []byte) int {
	depth, most, inStr, esc := 0, 0, false, false
	for _, c := range raw {
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{' || c == '[':
			depth++
			most = max(most, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return most
}
