package comments

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzDecode: Decode never panics; what it refuses names the file; what
// it takes encodes back to a file that decodes to the same front matter
// and text, as resolve_comment rewrites a comment it read.
func FuzzDecode(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "*.md"))
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no comment files in testdata: %v", err)
	}
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("no front matter"))
	f.Add([]byte("---\nid: x\nid: y\n---\n"))
	f.Add([]byte("---\nresolved: maybe\n---\ntext"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const rel = "org/comments/c.md"
		fr, text, err := Decode(rel, data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), rel+": ") {
				t.Fatalf("Decode's error does not name the file: %v", err)
			}
			return
		}
		again, back, err := Decode(rel, Encode(fr, text))
		if err != nil {
			t.Fatalf("Encode(%+v, %q) does not decode: %v", fr, text, err)
		}
		if again != fr || back != text {
			t.Fatalf("round trip:\n got %+v %q\nwant %+v %q", again, back, fr, text)
		}
	})
}
