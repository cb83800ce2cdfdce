package vault

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"quire/words/refusal"
)

// Symbolic links can come into a vault with git (git carries a link as a
// blob), and a write through one would land outside the vault. quire writes
// through none: every writer checks, under the lock, that the folders and
// files it writes into are no links (Lstat, each component), and refuses
// the write naming the link. quire check lists every link in the vault.

// topLevel are the entries of the root quire writes under; each is checked
// at every lock (a stat each), with .quire's own entries.
var topLevel = []string{ConfigFile, "vault", IndexFile, RunsDir, AgentsFile, "playbooks", "projects", "org", QuireDir}

// linked refuses a write when a path quire writes into is a symbolic link.
// It runs under the lock.
func (v *Vault) linked() error {
	for _, rel := range topLevel {
		if err := v.notLink(rel); err != nil {
			return err
		}
	}
	ents, err := os.ReadDir(filepath.Join(v.root, QuireDir))
	if err != nil {
		return nil
	}
	for _, e := range ents {
		if e.Type()&fs.ModeSymlink != 0 {
			return linkRefusal(QuireDir + "/" + e.Name())
		}
	}
	return nil
}

func (v *Vault) notLink(rel string) error {
	fi, err := os.Lstat(filepath.Join(v.root, filepath.FromSlash(rel)))
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return linkRefusal(rel)
	}
	return nil
}

func linkRefusal(rel string) error {
	return refusal.New(refusal.Conflict, "%s is a symbolic link; quire writes nothing through a link, which could lead outside the vault: replace it with the file or folder itself (quire check lists every link)", rel)
}

// WritePath is the absolute path of rel for a write: it refuses a path
// that leaves the vault or passes through a symbolic link, the last
// element included (see Join), as a conflict naming the link.
func (v *Vault) WritePath(rel string) (string, error) {
	abs, err := v.Join(rel)
	if err != nil {
		if strings.Contains(err.Error(), "symbolic link") {
			return "", refusal.New(refusal.Conflict, "%v; quire writes nothing through a link, which could lead outside the vault: replace it with the file or folder itself", err)
		}
		return "", err
	}
	return abs, nil
}
