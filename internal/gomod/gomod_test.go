package gomod

import (
	"os"
	"path/filepath"
	"testing"
)

func TestAround(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b")
	os.MkdirAll(deep, 0o755)
	if got := Around(deep); got != "" && got == root {
		t.Fatalf("no go.mod yet, Around = %q", got)
	}
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644)
	if got := Around(deep); got != root {
		t.Fatalf("Around(%q) = %q, want %q", deep, got, root)
	}
	if got := Around(""); got != "" {
		t.Fatalf("Around(\"\") = %q", got)
	}
}
