package fold

// jsonDepth is how deeply a JSON text nests (0 for a scalar), read
// without decoding it.
func jsonDepth(raw []byte) int {
	depth, most := 0, 0
	in := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if in {
			switch c {
			case '\\':
				i++
			case '"':
				in = false
			}
			continue
		}
		switch c {
		case '"':
			in = true
		case '{', '[':
			depth++
			most = max(most, depth)
		case '}', ']':
			depth--
		}
	}
	return most
}
