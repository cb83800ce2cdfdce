package vault

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"quire/vault/git/index"
	"quire/words/refusal"
)

// A GitOperation is one of git's own operations stopped in the middle of
// the vault: a merge (a git pull or git merge that met a conflict), a
// cherry-pick, a revert, a rebase, or an index that holds the stages of a
// conflict with none of those (a git stash pop, say). While one is, quire
// writes nothing and leaves .git/index as git left it: its unmerged
// entries are the person's record of what is still to resolve.
type GitOperation struct {
	// What names it: "merge", "cherry-pick", "revert", "rebase" or
	// "conflict".
	What string
	// Conflicted are the paths whose index entries hold a conflict's
	// stages, in order.
	Conflicted []string
}

// gitOperation answers the operation in progress, or nil.
func (v *Vault) gitOperation() *GitOperation {
	op := &GitOperation{What: v.operationMarked()}
	// An index that cannot be read holds no conflict quire can see; the
	// janitor rebuilds it from HEAD (unless a merge is in progress, found
	// above), and quire check names it.
	loaded := v.gitIdx.load() == nil
	seen := map[string]bool{}
	if loaded && v.gitIdx.conflicted {
		v.gitIdx.each(func(e *index.Entry) bool {
			if e.Stage != 0 && !seen[e.Name] {
				name := strings.Clone(e.Name)
				seen[name] = true
				op.Conflicted = append(op.Conflicted, name)
			}
			return true
		})
	}
	sort.Strings(op.Conflicted)
	if op.What == "" && len(op.Conflicted) > 0 {
		op.What = "conflict"
	}
	if op.What == "" {
		return nil
	}
	return op
}

// operationMarked names the operation git's own files say is in progress
// (merge, cherry-pick, revert, rebase), or "": a few stats, and no read of
// .git/index, so a reader holding no lock may ask.
func (v *Vault) operationMarked() string {
	for _, c := range []struct{ file, what string }{
		{"MERGE_HEAD", "merge"}, {"CHERRY_PICK_HEAD", "cherry-pick"}, {"REVERT_HEAD", "revert"},
		{"rebase-merge", "rebase"}, {"rebase-apply", "rebase"},
	} {
		if _, err := os.Lstat(filepath.Join(v.gitDir, c.file)); err == nil {
			return c.what
		}
	}
	return ""
}

// GitOperation answers git's operation stopped in the middle of the
// vault, or nil, for quire check.
func (v *Vault) GitOperation() *GitOperation { return v.gitOperation() }

// Refusal is what every write answers while the operation is in progress.
func (op *GitOperation) Refusal() error {
	return refusal.New(refusal.Conflict, "%s", op.Words())
}

// Words say what is in progress and how to finish it.
func (op *GitOperation) Words() string {
	files := ""
	if len(op.Conflicted) > 0 {
		files = sample(op.Conflicted)
		if len(op.Conflicted) == 1 {
			files += " is in conflict"
		} else {
			files += " are in conflict"
		}
	}
	var b strings.Builder
	switch op.What {
	case "conflict":
		b.WriteString("the git index holds a conflict: " + files + ". Resolve each file (an append-only file such as run.jsonl keeps both sides' lines) and git add it, or git checkout the file to drop the change")
	default:
		b.WriteString("git's " + op.What + " is not finished")
		if files != "" {
			b.WriteString(": " + files)
		}
		b.WriteString(". Resolve each file in conflict (an append-only file such as run.jsonl keeps both sides' lines), git add it and ")
		if op.What == "rebase" {
			b.WriteString("git rebase --continue")
		} else {
			b.WriteString("git commit")
		}
		b.WriteString(", or git " + op.What + " --abort")
	}
	b.WriteString("; quire writes nothing until then")
	return b.String()
}
