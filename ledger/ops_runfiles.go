package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"path"
	"path/filepath"

	"quire/runfolder"
	"quire/words/refusal"
)

// The reads a run's page makes of the run beside get_run: its files
// (get_run_files) and its commits (list_run_commits), so that the pages
// read the vault through the operations alone, and an agent reads what a
// person sees.

type RunFilesArgs struct {
	Playbook string `json:"playbook"`
	RunID    string `json:"run_id"`
}

// RunFiles are a run's files as get_run_files answers them.
type RunFiles struct {
	RunID   string `json:"run_id"`
	Path    string `json:"path"`    // the run's folder, relative to the vault
	Context string `json:"context"` // context.md
	Thread  string `json:"thread"`  // thread.md
	// State is run.state.json as it is in the folder: its object, or,
	// when a hand edit left it no JSON, its text as a string.
	State     json.RawMessage `json:"state"`
	Artifacts []ArtifactFile  `json:"artifacts"`
}

// ArtifactFile is one file under a run's artifacts/.
type ArtifactFile struct {
	Name  string `json:"name"` // its path under artifacts/
	Bytes int64  `json:"bytes"`
}

// getRunFiles reads a run's context, thread, state and artifact list.
func (l *Ledger) getRunFiles(ctx context.Context, a *RunFilesArgs) (*RunFiles, error) {
	e, f, err := l.runFolder(a.Playbook, a.RunID)
	if err != nil {
		return nil, err
	}
	out := &RunFiles{RunID: a.RunID, Path: e.Path, Artifacts: []ArtifactFile{}}
	text := func(name string) (string, error) {
		b, err := l.ReadRunFile(f.Rel, name)
		if r, ok := refusal.As(err); ok && r.Code == refusal.NotFound {
			return "", nil // a file a person removed; quire check says so
		}
		return string(b), err
	}
	if out.Context, err = text(runfolder.ContextFile); err != nil {
		return nil, err
	}
	if out.Thread, err = text(runfolder.ThreadFile); err != nil {
		return nil, err
	}
	state, err := text(runfolder.StateFile)
	if err != nil {
		return nil, err
	}
	if json.Valid([]byte(state)) {
		out.State = json.RawMessage(state)
	} else {
		out.State, _ = json.Marshal(state)
	}
	if out.Artifacts, err = l.artifactFiles(f.Rel); err != nil {
		return nil, err
	}
	return out, nil
}

// artifactFiles lists the regular files under a run's artifacts/, in
// lexical order; links and the folder's .gitkeep are left out.
func (l *Ledger) artifactFiles(folder string) ([]ArtifactFile, error) {
	root := l.v.Abs(path.Join(folder, runfolder.ArtifactsDir))
	out := []ArtifactFile{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == root {
				return filepath.SkipAll
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil // a folder (walked), a link (never followed)
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == ".gitkeep" {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, ArtifactFile{Name: rel, Bytes: fi.Size()})
		return nil
	})
	return out, err
}

type ListRunCommitsArgs struct {
	Playbook string `json:"playbook"`
	RunID    string `json:"run_id"`
	Limit    int    `json:"limit,omitempty" range:"1,1000" jsonschema:"1 to 1000 (default 100)"`
	Cursor   string `json:"cursor,omitempty" jsonschema:"the next of the page before"`
	Commit   string `json:"commit,omitempty" jsonschema:"one of them (its id, or 7+ of its first digits): it alone, with changes"`
}

// RunCommitPage is a page of a run's commits, newest first; asked for one
// commit, that commit and its changes to the run's folder.
type RunCommitPage struct {
	Commits []RunCommit       `json:"commits"`
	Next    string            `json:"next,omitempty"`
	Changes *RunCommitChanges `json:"changes,omitempty"`
}

// listRunCommits pages a run's commits from the index of commits, or
// answers one of them with what it changed in the run's folder. The one
// commit is an argument of this read rather than a tool of its own: it is
// the same list looked into, and tools/list has a budget.
func (l *Ledger) listRunCommits(ctx context.Context, a *ListRunCommitsArgs) (*RunCommitPage, error) {
	e, _, err := l.runFolder(a.Playbook, a.RunID)
	if err != nil {
		return nil, err
	}
	if a.Commit != "" && (a.Cursor != "" || a.Limit != 0) {
		return nil, refusal.Invalid("/commit", "a commit is answered alone: give it without limit or cursor")
	}
	limit := a.Limit
	if limit == 0 {
		limit = 100
	}
	all, err := l.runCommitsOf(a.RunID)
	if err != nil {
		return nil, err
	}
	if a.Commit != "" {
		c, err := findRunCommit(all, a.RunID, a.Commit)
		if err != nil {
			return nil, err
		}
		ch, err := l.runCommitChanges(a.Playbook, e.Path, c.Commit)
		if err != nil {
			return nil, err
		}
		return &RunCommitPage{Commits: []RunCommit{c}, Changes: ch}, nil
	}
	cs, next, err := pageCommits(all, a.Cursor, limit)
	if err != nil {
		return nil, refusal.Invalid("/cursor", "%q is not a cursor this list gave", a.Cursor)
	}
	return &RunCommitPage{Commits: cs, Next: next}, nil
}
