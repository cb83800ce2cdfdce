package agentrun

import (
	"go/build"
	"strings"
	"testing"
)

// The format imports nothing above the words: of quire, only words and
// the leaf helpers under internal that import nothing of quire.
func TestImportsNothingAboveTheWords(t *testing.T) {
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
			if !strings.HasPrefix(imp, "quire/words/") && imp != "quire/internal/jsscan" && imp != "quire/internal/front" {
				t.Errorf("%s imports %s", path, imp)
			}
			walk(imp)
		}
	}
	walk("quire/words/agentrun")
}
