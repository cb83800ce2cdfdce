package page

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"gopkg.in/yaml.v3"
)

// DataHash is a stable hash of the page's data key: the SHA-256 of its
// value as JSON with sorted keys, as "sha256:<hex>". Two versions whose
// data decode to the same value (whatever their layout, comments or key
// order) have the same hash, and the keeper rebuilds the views only when
// it changes. A page without data hashes to "".
func DataHash(p *Page) string {
	if p == nil || p.Data == nil || p.Data.node == nil {
		return ""
	}
	var v any
	var b []byte
	err := p.Data.node.Decode(&v)
	if err == nil {
		b, err = json.Marshal(normalize(v))
	}
	if err != nil {
		// A value JSON cannot carry (such as .nan): hash the YAML instead.
		b, _ = yaml.Marshal(p.Data.node)
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// normalize turns yaml.v3's maps with keys of any type into maps JSON can
// encode, with sorted keys.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = normalize(e)
		}
		return m
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = normalize(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = normalize(e)
		}
		return s
	}
	return v
}
