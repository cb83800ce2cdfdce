package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesWholeAndLeavesNoTemporary(t *testing.T) {
	for name, write := range map[string]func(string, []byte) error{"Write": Write, "Replace": Replace} {
		t.Run(name, func(t *testing.T) { replacesWhole(t, write) })
	}
}

func replacesWhole(t *testing.T, write func(string, []byte) error) {
	dir := t.TempDir()
	p := filepath.Join(dir, "run.state.json")
	for _, s := range []string{"first", "second"} {
		if err := write(p, []byte(s)); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(p); string(got) != s {
			t.Fatalf("got %q", got)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left %d files behind", len(ents))
	}
	if err := write(filepath.Join(dir, "missing", "x"), []byte("x")); err == nil {
		t.Fatal("a write into a missing folder succeeded")
	}
}
