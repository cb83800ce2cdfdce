package module

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The lookup's order and its refusal: QUIRE_TSC, the vault's setting, tsc
// on the PATH (TypeScript 7 only), .tools/ beside the binary and at the
// source tree's root, the user's cache; without one, every place is named.
func TestFindOrderAndRefusal(t *testing.T) {
	real := compiler(t)
	tmp := t.TempDir()
	root := filepath.Join(tmp, "src") // a source tree without .tools/
	os.MkdirAll(root, 0o755)
	cache := filepath.Join(tmp, "cache")
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", tmp)
	t.Setenv("QUIRE_TSC", "")
	// A tsc on the PATH of TypeScript 5: passed over, and said so.
	old := filepath.Join(tmp, "old")
	os.MkdirAll(old, 0o755)
	os.WriteFile(filepath.Join(old, "tsc"), []byte("#!/bin/sh\necho 'Version 5.4.5'\n"), 0o755)
	os.WriteFile(filepath.Join(old, "lib.es5.d.ts"), nil, 0o644)
	t.Setenv("PATH", old)

	_, err := Find(root, "")
	var nc *NoCompiler
	if !errors.As(err, &nc) || !errors.Is(err, ErrNoCompiler) {
		t.Fatalf("no compiler anywhere: %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"QUIRE_TSC (not set)", "the vault's tsc: in quire.yaml (not set)",
		"tsc on the PATH (" + filepath.Join(old, "tsc") + " is TypeScript 5, not 7 or later)",
		filepath.Join(root, ".tools", "node_modules", ".bin", "tsc") + " (absent)",
		filepath.Join(cache, "quire", "tools", "node_modules", ".bin", "tsc") + " (absent)",
		"quire tools install"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, msg)
		}
	}
	// The user's cache, where quire tools install puts it.
	bin := filepath.Join(cache, "quire", "tools", "node_modules", ".bin")
	os.MkdirAll(bin, 0o755)
	if err := os.Symlink(real.Path, filepath.Join(bin, "tsc")); err != nil {
		t.Fatal(err)
	}
	if c, err := Find(root, ""); err != nil || c.Path != real.Path {
		t.Fatalf("from the cache: %+v %v", c, err)
	}
	// The vault's setting comes before the PATH and the cache: one that
	// holds no compiler is refused naming it, not passed over.
	if _, err := Find(root, filepath.Join(tmp, "nowhere", "tsc")); err == nil || !strings.Contains(err.Error(), "the vault's tsc: ") {
		t.Fatalf("a setting naming nothing: %v", err)
	}
	// QUIRE_TSC comes first.
	t.Setenv("QUIRE_TSC", filepath.Join(tmp, "nothing"))
	if _, err := Find(root, real.Path); err == nil || !strings.Contains(err.Error(), "QUIRE_TSC=") {
		t.Fatalf("QUIRE_TSC naming nothing: %v", err)
	}
}
