package ledger

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A vault is made with git's settings for many files, and quire's writes
// keep its index in version 4, whole or split, with git status clean.
func TestVaultKeepsIndexVersion4(t *testing.T) {
	f := newFixture(t)
	for key, want := range map[string]string{"feature.manyFiles": "true", "index.version": "4", "core.untrackedCache": "true"} {
		if got := strings.TrimSpace(f.git("config", "--get", key)); got != want {
			t.Errorf("git config %s is %q, want %q", key, got, want)
		}
	}
	version := func(name string) uint32 {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(f.dir, ".git", name))
		if err != nil || len(data) < 8 {
			t.Fatalf(".git/%s: %v", name, err)
		}
		return binary.BigEndian.Uint32(data[4:])
	}
	check := func(when string) {
		t.Helper()
		if v := version("index"); v != 4 {
			t.Fatalf("%s: .git/index is version %d", when, v)
		}
		if s := f.git("status", "--porcelain"); s != "" {
			t.Fatalf("%s: git status:\n%s", when, s)
		}
	}
	r := f.start()
	f.call("record_event", `{"playbook":"finance","run_id":"`+r.RunID+`","event":"step_completed","step":"do/1/check","actor":"agent-7"}`)
	check("after quire's writes")
	f.git("config", "core.splitIndex", "true")
	f.start()
	check("split")
	shared, _ := filepath.Glob(filepath.Join(f.dir, ".git", "sharedindex.*"))
	if len(shared) == 0 {
		t.Fatal("no shared index after a write with core.splitIndex")
	}
	if v := version(filepath.Base(shared[len(shared)-1])); v != 4 {
		t.Fatalf("the shared index is version %d", v)
	}
	f.start()
	check("split, again")
	if n := strings.Count(f.git("ls-files"), "\n"); n < 15 {
		t.Fatalf("git ls-files lists %d files", n)
	}
}
