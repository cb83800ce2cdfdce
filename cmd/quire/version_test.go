package main

import (
	"os"
	"runtime/debug"
	"strings"
	"testing"
)

// quire --version names the revision make install stamped where the Go
// toolchain stamped none (a git worktree, -buildvcs=false); the
// toolchain's own stamp wins. The Makefile stamps what it builds, and the
// README and the guide install quire one way, make install.
func TestVersionStampedByMakeInstall(t *testing.T) {
	defer func(r, tm, m string) { stampRevision, stampTime, stampModified = r, tm, m }(stampRevision, stampTime, stampModified)
	stampRevision, stampTime, stampModified = "cc70921afc4adf4c58fac8b9d798193f39bf1863", "2026-12-02T02:31:38Z", "true"
	bi := &debug.BuildInfo{Main: debug.Module{Path: "quire", Version: "(devel)"}}
	if got := versionOf(bi).String(); !strings.HasPrefix(got, "quire (devel) (revision cc70921afc4a+dirty, 2026-12-02T02:31:38Z) go") {
		t.Errorf("stamped by make: %s", got)
	}
	bi.Settings = []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-11-30T10:00:00Z"}}
	if got := versionOf(bi).String(); !strings.HasPrefix(got, "quire (devel) (revision 0123456789ab, 2026-11-30T10:00:00Z) go") {
		t.Errorf("stamped by the toolchain: %s", got)
	}
	stampRevision = ""
	if got := versionOf(&debug.BuildInfo{Main: debug.Module{Path: "quire"}}).String(); strings.Contains(got, "revision") {
		t.Errorf("stamped by neither: %s", got)
	}

	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"build:", "install:"} {
		_, rest, _ := strings.Cut(string(mk), "\n"+target)
		recipe, _, _ := strings.Cut(rest, "\n\n")
		if !strings.Contains(recipe, "$(STAMP)") {
			t.Errorf("make %s does not stamp the revision:%s", strings.TrimSuffix(target, ":"), recipe)
		}
	}
	for _, doc := range []string{"../../README.md", "../../docs/guide.md"} {
		b, _ := os.ReadFile(doc)
		if !strings.Contains(string(b), "make install") {
			t.Errorf("%s does not install with make install", doc)
		}
		if doc == "../../docs/guide.md" && strings.Contains(string(b), "go install") {
			t.Errorf("%s installs with go install", doc)
		}
	}
}
