package words

import (
	"go/build"
	"os"
	"strings"
	"testing"
)

// Every word imports nothing above the words: of quire, only words and the
// leaf helpers under internal that import nothing of quire.
func TestTheWordsImportNothingAboveThem(t *testing.T) {
	leaves := map[string]bool{"quire/internal/jsscan": true, "quire/internal/front": true}
	ents, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var walk func(path string)
	walk = func(path string) {
		if seen[path] {
			return
		}
		seen[path] = true
		p, err := build.Import(path, ".", 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range p.Imports {
			if imp != "quire" && !strings.HasPrefix(imp, "quire/") {
				continue
			}
			if !strings.HasPrefix(imp, "quire/words/") && !leaves[imp] {
				t.Errorf("%s imports %s", path, imp)
			}
			walk(imp)
		}
	}
	n := 0
	for _, e := range ents {
		if e.IsDir() && e.Name() != "testdata" {
			walk("quire/words/" + e.Name())
			n++
		}
	}
	if n < 8 {
		t.Fatalf("%d words found", n)
	}
}
