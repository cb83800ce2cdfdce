package vault

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire/internal/fixture"
	"quire/words/refusal"
)

func TestReadFormat(t *testing.T) {
	for _, c := range []struct {
		yaml string
		want int
		err  string
	}{
		{"", 1, ""},
		{"org: acme\n", 1, ""},
		{"format: 1\norg: acme\n", 1, ""},
		{"org: acme\nformat: 3\n", 3, ""},
		{"format: two\n", 0, `line 1: format is "two"; a vault's format is a whole number, 1 or more`},
		{"org: acme\nformat: \"1\"\n", 0, `line 2: format is "1"; a vault's format is a whole number, 1 or more`},
		{"format: 0\n", 0, `line 1: format is "0"`},
		{"format: 1.5\n", 0, `line 1: format is "1.5"`},
		{"format: [1]\n", 0, `line 1: format is not a number`},
		{"- format: 1\n", 0, `line 1: it is not a mapping of keys to values`},
		{"org: [\n", 0, `it is not YAML (yaml: line 1:`},
	} {
		n, err := readFormat([]byte(c.yaml))
		if c.err == "" && (err != nil || n != c.want) || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%q: %d %v; want %d %q", c.yaml, n, err, c.want, c.err)
		}
	}
}

// quire init writes the format this quire writes, first in quire.yaml.
func TestInitWritesTheFormat(t *testing.T) {
	dir := t.TempDir()
	v, err := Init(dir, "acme", time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	data, _ := os.ReadFile(filepath.Join(dir, ConfigFile))
	if !strings.HasPrefix(string(data), "format: 1\norg: acme\n") {
		t.Fatalf("quire.yaml:\n%s", data)
	}
	if c, err := v.Config(); err != nil || c.Format != FormatVersion {
		t.Fatalf("%+v %v", c, err)
	}
}

// A vault of format 1 written by the quire of its day opens and reads:
// its configuration, its index, the blobs of its history.
func TestOpenFormat1Fixture(t *testing.T) {
	dir := fixture.Vault(t, 1)
	v, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	c, err := v.Config()
	if err != nil || c.Format != 1 || c.Org != "acme" || len(c.Tokens) != 1 || c.Tokens[0].Principal != "ana" {
		t.Fatalf("%+v %v", c, err)
	}
	es, err := v.Entries()
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, e := range es {
		count[e.Type]++
		if !v.Exists(e.Path) {
			t.Errorf("%s %s: %s is not there", e.Type, e.UID, e.Path)
		}
	}
	if count["project"] != 1 || count["playbook"] != 1 || count["definition"] != 2 || count["playbook-run"] != 3 || count["comment"] != 2 {
		t.Fatalf("the index holds %v", count)
	}
	if h, err := v.HeadCommit(); err != nil || h.IsZero() {
		t.Fatalf("HEAD %v %v", h, err)
	}
	// Version 1 of close-the-month, read back from git by the blob its
	// definition_saved names (the work tree holds version 2).
	if b, err := v.ReadBlob("90bfb0ff1ee9af5cf6467a87bda5476a603497ff"); err != nil || !strings.Contains(string(b), "summary: Closes a month's books.") {
		t.Fatalf("version 1: %v\n%s", err, b)
	}
	if ch, err := v.Status(); err != nil || len(ch) != 0 {
		t.Fatalf("status %v %v", ch, err)
	}
}

// A vault without the format key is format 1, the format as it was before
// the key: it opens, and its configuration says format 1.
func TestOpenWithoutTheFormatKey(t *testing.T) {
	dir := fixture.Vault(t, 1)
	path := filepath.Join(dir, ConfigFile)
	data, _ := os.ReadFile(path)
	old, ok := strings.CutPrefix(string(data), "format: 1\n")
	if !ok {
		t.Fatalf("quire.yaml:\n%s", data)
	}
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	c, err := v.Config()
	if err != nil || c.Format != 1 || c.Org != "acme" {
		t.Fatalf("%+v %v", c, err)
	}
	// quire.yaml rewritten (a token made) says the format it lacked.
	if err := v.WriteConfig(c); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); !strings.HasPrefix(string(data), "format: 1\norg: acme\n") {
		t.Fatalf("quire.yaml:\n%s", data)
	}
}

// A vault of a newer format, or of a format quire.yaml does not say
// clearly, is refused at Open as conflict, saying what to do.
func TestOpenRefusesANewerFormat(t *testing.T) {
	dir := fixture.Vault(t, 1)
	path := filepath.Join(dir, ConfigFile)
	data, _ := os.ReadFile(path)
	for _, c := range []struct{ format, want string }{
		{"format: 2", "this vault (" + dir + ") is format 2; this quire reads format 1 at most: install a newer quire to open it"},
		{"format: 12", "this vault (" + dir + ") is format 12; this quire reads format 1 at most: install a newer quire to open it"},
		{"format: -1", `quire.yaml: line 1: format is "-1"; a vault's format is a whole number, 1 or more, so this quire cannot tell the vault's format: mend it (git diff quire.yaml shows what changed since it was committed)`},
	} {
		if err := os.WriteFile(path, []byte(strings.Replace(string(data), "format: 1", c.format, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		v, err := Open(dir)
		var r *refusal.Error
		if !errors.As(err, &r) || r.Code != refusal.Conflict || r.Message != c.want {
			if v != nil {
				v.Close()
			}
			t.Fatalf("%s: %v\nwant %s", c.format, err, c.want)
		}
	}
}

// A vault upgraded under a quire that has it open (a quire serve) is
// refused at that quire's next write, not written in the old form.
func TestFormatCheckedAgainAtEachWrite(t *testing.T) {
	dir := t.TempDir()
	v, err := Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if err := v.Locked(func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, ConfigFile)
	data, _ := os.ReadFile(p)
	if err := os.WriteFile(p, []byte(strings.Replace(string(data), "format: 1", "format: 2", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	ran := false
	err = v.Locked(func() error { ran = true; return nil })
	if r, ok := refusal.As(err); !ok || r.Code != refusal.Conflict || !strings.Contains(r.Message, "is format 2; this quire reads format 1 at most") || ran {
		t.Fatalf("a write after the upgrade: ran %v, %v", ran, err)
	}
}
