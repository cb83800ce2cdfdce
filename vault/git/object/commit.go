package object

import (
	"bytes"
	"errors"
)

// ParseCommit reads a commit's tree and parents from the lines git writes
// first, "tree <hex>" then "parent <hex>" for each parent; the rest (the
// author, the committer, the message) is not read.
func ParseCommit(data []byte) (tree Hash, parents []Hash, err error) {
	first := true
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		k, val, _ := bytes.Cut(line, []byte{' '})
		switch {
		case first && string(k) == "tree":
			if tree, err = ParseHash(string(val)); err != nil {
				return Hash{}, nil, errors.New("a commit whose tree line holds no object id")
			}
		case first:
			return Hash{}, nil, errors.New("a commit that does not begin with its tree")
		case string(k) == "parent":
			p, err := ParseHash(string(val))
			if err != nil {
				return Hash{}, nil, errors.New("a commit whose parent line holds no object id")
			}
			parents = append(parents, p)
		default:
			return tree, parents, nil
		}
		first = false
	}
	if first {
		return Hash{}, nil, errors.New("an empty commit")
	}
	return tree, parents, nil
}
