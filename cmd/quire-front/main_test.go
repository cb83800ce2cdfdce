package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The front links the standard library and internal/resident alone: none
// of the packages whose initialisers make the whole program's start slow,
// nor anything else of quire or outside the standard library, nor the net
// package, which would link cgo and load the C library at every start.
func TestFrontLinksNoEngine(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	banned := []string{"quire/ledger", "quire/vault", "quire/fold", "quire/render", "quire/serve",
		"jsonschema", "goldmark", "urfave", "go-git", "qjs", "esbuild"}
	for _, p := range strings.Fields(string(out)) {
		if p == "net" || p == "runtime/cgo" {
			t.Errorf("the front links %s", p)
		}
		for _, b := range banned {
			if strings.Contains(p, b) {
				t.Errorf("the front links %s", p)
			}
		}
		first, _, _ := strings.Cut(p, "/")
		thirdParty := strings.Contains(first, ".") && !strings.HasPrefix(p, "vendor/")
		ours := p == "quire/internal/resident" || p == "quire/internal/gomod" || p == "quire/cmd/quire-front"
		if thirdParty || (first == "quire" && !ours) {
			t.Errorf("the front links %s: only the standard library, quire/internal/resident and quire/internal/gomod", p)
		}
	}
}
