package ledger

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"quire/vault"
	"quire/words/refusal"
)

// What the doors (cmd/quire, serve, serve/web) ask of the vault under the
// ledger, which alone holds it.

// Config is quire.yaml; Token one of its tokens.
type (
	Config = vault.Config
	Token  = vault.Token
)

// ConfigFile is quire.yaml's name in the vault.
const ConfigFile = vault.ConfigFile

// Init makes a vault at dir (see vault.Init) and opens its ledger.
func Init(dir, org string, now time.Time) (*Ledger, error) {
	v, err := vault.Init(dir, org, now)
	if err != nil {
		return nil, err
	}
	return New(v), nil
}

// ReadDerived reads a file of the vault's derived state, .quire/<name>
// (never committed; quire makes it again when it is lost).
func (l *Ledger) ReadDerived(name string) ([]byte, error) {
	p, err := derivedPath(name)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(l.v.Abs(p))
}

// WriteDerived replaces a file of the vault's derived state, .quire/<name>,
// atomically.
func (l *Ledger) WriteDerived(name string, data []byte) error {
	p, err := derivedPath(name)
	if err != nil {
		return err
	}
	abs := l.v.Abs(p)
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return err
	}
	return vault.WriteAtomic(abs, data)
}

func derivedPath(name string) (string, error) {
	if name == "" || name != path.Base(name) || strings.HasPrefix(name, ".") || strings.Contains(name, "\\") {
		return "", fmt.Errorf("ledger: %q is not a file name of .quire/", name)
	}
	return path.Join(vault.QuireDir, name), nil
}

// Root is the vault's folder.
func (l *Ledger) Root() string { return l.v.Root() }

// SetLogger sets where the vault says what it repaired on its own.
func (l *Ledger) SetLogger(log *slog.Logger) { l.v.SetLogger(log) }

// SetCompactContext ends the vault's background compaction when ctx ends.
func (l *Ledger) SetCompactContext(ctx context.Context) { l.v.SetCompactContext(ctx) }

// Compact packs the vault's loose objects now.
func (l *Ledger) Compact(ctx context.Context) error { return l.v.Compact(ctx) }

// CompactIfDue packs the vault's loose objects if a compaction is due and
// none is under way in any process (the work of the process SetCompactBy
// starts).
func (l *Ledger) CompactIfDue(ctx context.Context) error { return l.v.CompactIfDue(ctx) }

// SetCompactBy makes start what starts a compaction that is due, instead
// of this process's background (nil: the background again): a short-lived
// process starts another that calls CompactIfDue, so that it need not
// wait for the compaction at Close.
func (l *Ledger) SetCompactBy(start func() error) { l.v.SetCompactBy(start) }

// Warm reads the index of things whole once, for a process that serves
// many calls: a lookup then reads only the lines appended since.
func (l *Ledger) Warm() error {
	_, err := l.v.Entries()
	return err
}

// Config reads quire.yaml.
func (l *Ledger) Config() (vault.Config, error) { return l.v.Config() }

// UpdateConfig changes quire.yaml as one write: fn changes the
// configuration and answers the subject of the commit (or refuses, and
// nothing is written). The commit is quire's; one that cannot be made is
// finished by the next writer. A change of quire.yaml that quire did not
// make (a person's edit, not committed yet) is refused: quire would commit
// it under its own name.
func (l *Ledger) UpdateConfig(fn func(c *vault.Config) (subject string, err error)) error {
	return l.write(writeArgs{}, func(t *tx) error {
		if same, err := l.v.Unchanged(vault.ConfigFile); err != nil {
			return err
		} else if !same && !slices.Contains(l.hist.Pending(), vault.ConfigFile) {
			return refusal.New(refusal.Conflict, "%s has a change that is not committed, and quire did not make it (a person's edit?): "+
				"commit it with git under your name (git commit %s), or take it back (git checkout -- %s), before quire changes the file", vault.ConfigFile, vault.ConfigFile, vault.ConfigFile)
		}
		c, err := l.v.Config()
		if err != nil {
			return err
		}
		subject, err := fn(&c)
		if err != nil {
			return err
		}
		t.willCommit(vault.ConfigFile)
		if err := l.v.WriteConfig(c); err != nil {
			return err
		}
		t.commit([]string{vault.ConfigFile}, vault.Signature{Name: "quire", When: l.Now()}, vault.Message{Subject: subject})
		return nil
	})
}

// OpenRunFile opens a file of a run's folder (as get_run answers its
// path) for reading: name is relative to the folder, such as thread.md or
// artifacts/report.csv. Nothing outside the folder, and no symbolic link,
// is opened: a name that leaves it is refused at /name, a file that is not
// there is not_found.
func (l *Ledger) OpenRunFile(folder, name string) (*os.File, fs.FileInfo, error) {
	if !strings.HasPrefix(folder, vault.RunsDir+"/") || strings.Count(folder, "/") != 1 {
		return nil, nil, fmt.Errorf("ledger: %q is not a run folder", folder)
	}
	clean := path.Clean("/" + name)[1:]
	if clean == "" || clean != name || strings.Contains(name, "\\") {
		return nil, nil, refusal.Invalid("/name", "%q is not a file of a run folder", name)
	}
	abs, err := l.v.Join(path.Join(folder, clean))
	if err != nil {
		return nil, nil, refusal.Invalid("/name", "%q is not a file of a run folder", name)
	}
	fi, err := os.Lstat(abs)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, nil, refusal.At(refusal.NotFound, "/name", "the run has no file %q", name)
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, nil, err
	}
	return f, fi, nil
}

// ReadRunFile reads a file of a run's folder whole (see OpenRunFile).
func (l *Ledger) ReadRunFile(folder, name string) ([]byte, error) {
	f, _, err := l.OpenRunFile(folder, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
