package checker

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"quire/runfolder"
	"quire/vault"
	"quire/words/refusal"
)

// WriteDerived writes, for every run of the index, the entries of its
// folder that quire derives and another tool may not have written: a run
// folder made in the capsule's own form without run.state.json (derived
// from run.jsonl and definition.md, as every read derives it) and
// artifacts/'s .gitkeep where the folder is empty or gone (git keeps no
// empty folder, so a clone lacks it). What it
// wrote is committed as vault-janitor, and said one sentence each. A run
// whose state cannot be derived (no definition.md, no run.jsonl) is left
// to quire check's rule 6. The caller holds the lock (quire janitor's
// repair, quire reindex).
func (c *Checker) WriteDerived() ([]string, error) {
	runs, err := c.v.Find(func(e *vault.Entry) bool { return e.Type == "playbook-run" })
	if err != nil {
		return nil, err
	}
	var done, commit, states, dirs []string
	for i, e := range runs {
		c.h.Progress("deriving the runs' missing state files", "runs", i+1, len(runs))
		if _, err := c.v.Join(e.Path); err != nil || !c.v.Exists(e.Path) {
			continue // quire check reports the index's path
		}
		f := c.h.Folder(e.Path)
		state := path.Join(e.Path, runfolder.StateFile)
		if !c.v.Exists(state) && c.v.Exists(path.Join(e.Path, runfolder.DefinitionFile)) && c.v.Exists(path.Join(e.Path, runfolder.LogFile)) {
			st, err := f.Derive("")
			if err != nil {
				continue // quire check says why
			}
			if err := f.WriteState(st); err != nil {
				return nil, err
			}
			states = append(states, e.Path)
			commit = append(commit, state)
		}
		if artifacts := path.Join(e.Path, runfolder.ArtifactsDir); !c.v.Exists(artifacts) || emptyDir(c.v.Abs(artifacts)) {
			keep := path.Join(e.Path, runfolder.ArtifactsDir, ".gitkeep")
			abs, err := c.v.Join(keep)
			if err != nil {
				continue
			}
			if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
				return nil, err
			}
			if err := vault.WriteAtomic(abs, nil); err != nil {
				return nil, err
			}
			dirs = append(dirs, e.Path)
			commit = append(commit, keep)
		}
	}
	if len(states) > 0 {
		done = append(done, fmt.Sprintf("derived run.state.json from run.jsonl and definition.md for %d run(s) written without it: %s", len(states), sample(states)))
	}
	if len(dirs) > 0 {
		done = append(done, fmt.Sprintf("made artifacts/ (with its .gitkeep) for %d run(s) without it: %s", len(dirs), sample(dirs)))
	}
	if len(commit) == 0 {
		return done, nil
	}
	msg := "vault-janitor: derive what runs written without quire lack\n\n" + strings.Join(commit, "\n")
	id, err := c.v.Commit(commit, vault.Signature{Name: runfolder.Janitor, When: c.h.Now()}, msg)
	if r, ok := refusal.As(err); ok && r.Code == refusal.Unavailable {
		return append(done, fmt.Sprintf("left them uncommitted for now: %s", r.Message)), nil
	}
	if err != nil {
		return append(done, fmt.Sprintf("left them uncommitted: %v", err)), nil
	}
	if id != "" {
		done = append(done, fmt.Sprintf("committed them (commit %.12s)", id))
	}
	return done, nil
}

// emptyDir says whether dir is a folder with nothing in it, which git
// does not keep: a clone would lack it.
func emptyDir(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	names, _ := f.Readdirnames(1)
	return len(names) == 0
}

// sample names the first few of xs, and how many more there are.
func sample(xs []string) string {
	const most = 3
	if len(xs) <= most {
		return strings.Join(xs, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(xs[:most], ", "), len(xs)-most)
}
