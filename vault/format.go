package vault

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"gopkg.in/yaml.v3"

	"quire/internal/fsys"
	"quire/words/refusal"
)

// FormatVersion is the version of the vault's format this quire writes,
// and the newest it reads: quire.yaml's top-level key format says a
// vault's, and a vault without the key is format 1, the format as it was
// before the key. A vault of a newer format is refused at Open, so that no
// quire misreads or writes in an older form what a newer one wrote.
// docs/vault-format.md ("The format's version") says when the version
// changes and how a vault is brought to a new one.
const FormatVersion = 1

// checkFormat reads the format key of the vault's quire.yaml (only that
// key: the rest is Config's) and refuses, as conflict, a vault of a format
// newer than FormatVersion, a format that is not a whole number from 1,
// and a quire.yaml that is not a YAML mapping, whose format cannot be
// known.
func checkFormat(root string) error {
	data, err := fsys.ReadFile(filepath.Join(root, ConfigFile))
	if err != nil {
		return err
	}
	n, err := readFormat(data)
	if err != nil {
		return refusal.New(refusal.Conflict, "%s: %s, so this quire cannot tell the vault's format: mend it (git diff %[1]s shows what changed since it was committed)", ConfigFile, err)
	}
	if n > FormatVersion {
		return refusal.New(refusal.Conflict, "this vault (%s) is format %d; this quire reads format %d at most: install a newer quire to open it", root, n, FormatVersion)
	}
	return nil
}

// FormatOf answers the format a quire.yaml's text says (1 when it has no
// format key), or why it cannot be told: quire clone judges a remote's
// vault by it before it opens it.
func FormatOf(data []byte) (int, error) { return readFormat(data) }

// formatHolds checks the format again when quire.yaml changed since it
// was last checked (a stat): a vault upgraded under a running quire serve
// is refused at its next write, not written in the old form. The caller
// holds the lock.
func (v *Vault) formatHolds() error {
	fi, err := os.Stat(filepath.Join(v.root, ConfigFile))
	if err != nil {
		return err
	}
	stamp := stampOf(fi)
	if stamp == v.formatStamp {
		return nil
	}
	if err := checkFormat(v.root); err != nil {
		return err
	}
	v.formatStamp = stamp
	return nil
}

// readFormat answers the format quire.yaml's text says: its top-level key
// format, 1 when it has none.
func readFormat(data []byte) (int, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return 0, fmt.Errorf("it is not YAML (%v)", err)
	}
	if doc.Kind == 0 {
		return 1, nil // empty
	}
	m := &doc
	if m.Kind == yaml.DocumentNode && len(m.Content) == 1 {
		m = m.Content[0]
	}
	if m.Kind != yaml.MappingNode {
		return 0, fmt.Errorf("line %d: it is not a mapping of keys to values", m.Line)
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Value != "format" {
			continue
		}
		n, err := strconv.Atoi(v.Value)
		if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" || err != nil || n < 1 {
			return 0, fmt.Errorf("line %d: format is %s; a vault's format is a whole number, 1 or more", v.Line, describe(v))
		}
		return n, nil
	}
	return 1, nil
}

// describe is a YAML value as a message quotes it.
func describe(v *yaml.Node) string {
	if v.Kind == yaml.ScalarNode {
		return strconv.Quote(v.Value)
	}
	return "not a number"
}
