package ledger

import (
	"bytes"
	"encoding/json"
	"path"
	"strings"

	"quire/runfolder"
	"quire/vault"
	"quire/words/event"
	"quire/words/refusal"
)

// What one commit changed in a run's folder, for list_run_commits with a
// commit: read from the commit's tree and its first parent's through the
// vault's object store (no git program, no work tree), so that it says
// what git recorded, whatever the folder holds now. A run's files are
// appended to (run.jsonl, thread.md) or rewritten whole
// (run.state.json), so each is told in its own terms: the events added,
// the text appended, the state's fields changed, the artifacts and other
// files added, changed or removed.

// RunCommitChanges is what a commit changed in its run's folder.
type RunCommitChanges struct {
	// Events are the lines the commit added to run.jsonl, in CloudEvents
	// form; EventsRemoved counts the lines of the parent's run.jsonl the
	// commit does not keep (a hand edit: quire only appends).
	Events        []Event `json:"events"`
	EventsRemoved int     `json:"events_removed,omitempty"`
	// Thread is the text the commit appended to thread.md;
	// ThreadRemoved the parent's text it does not keep, from the first
	// line the two differ at.
	Thread        string `json:"thread,omitempty"`
	ThreadRemoved string `json:"thread_removed,omitempty"`
	// State is run.state.json's fields the commit changed, in the
	// file's order.
	State     []StateChange `json:"state"`
	Artifacts []FileChange  `json:"artifacts"` // under artifacts/, by their names there
	Files     []FileChange  `json:"files"`     // the folder's other files (context.md, definition.md)
}

// StateChange is one field of run.state.json before and after a commit;
// a side without the field leaves it out.
type StateChange struct {
	Field  string          `json:"field"`
	Before json.RawMessage `json:"before,omitempty"`
	After  json.RawMessage `json:"after,omitempty"`
}

// FileChange is one file a commit added, changed or removed, with its
// size after (before, for one removed).
type FileChange struct {
	Name   string `json:"name"`
	Change string `json:"change"` // added, changed or removed
	Bytes  int    `json:"bytes"`
}

// findRunCommit finds one of a run's commits by its id or a prefix of it
// (at least 7 hex digits, as git shortens them).
func findRunCommit(all []RunCommit, runID, id string) (RunCommit, error) {
	id = strings.ToLower(id)
	if len(id) < 7 || len(id) > 40 || strings.Trim(id, "0123456789abcdef") != "" {
		return RunCommit{}, refusal.Invalid("/commit", "%q is not a commit's id: 7 to 40 hex digits", id)
	}
	var found []RunCommit
	for _, c := range all {
		if strings.HasPrefix(c.Commit, id) {
			found = append(found, c)
		}
	}
	switch len(found) {
	case 0:
		return RunCommit{}, refusal.At(refusal.NotFound, "/commit", "run %s has no commit %s (list_run_commits lists its commits)", runID, id)
	case 1:
		return found[0], nil
	}
	return RunCommit{}, refusal.Invalid("/commit", "%s names %d of the run's commits; give more of its digits", id, len(found))
}

// runCommitChanges reads what commit id changed in the folder at rel
// (the run's, relative to the vault), against its first parent (the
// empty tree for a first commit).
func (l *Ledger) runCommitChanges(playbook, rel, id string) (*RunCommitChanges, error) {
	h := l.v.History()
	defer h.Close()
	tree, parents, err := h.Commit(parseHash(id))
	if err != nil {
		return nil, err
	}
	after, err := folderTree(h, tree, rel)
	if err != nil {
		return nil, err
	}
	var before []byte
	if len(parents) > 0 {
		ptree, _, err := h.Commit(parents[0])
		if err != nil {
			return nil, err
		}
		if before, err = folderTree(h, ptree, rel); err != nil {
			return nil, err
		}
	}
	out := &RunCommitChanges{Events: []Event{}, State: []StateChange{}, Artifacts: []FileChange{}, Files: []FileChange{}}
	err = changedFiles(h, before, after, "", func(name string, old, new vault.Hash) error {
		a, err := h.Blob(old)
		if err != nil {
			return err
		}
		b, err := h.Blob(new)
		if err != nil {
			return err
		}
		switch name {
		case runfolder.LogFile:
			out.Events, out.EventsRemoved = eventsAdded(playbook, a, b)
		case runfolder.ThreadFile:
			out.Thread, out.ThreadRemoved = textAdded(string(a), string(b))
		case runfolder.StateFile:
			out.State = stateChanges(a, b)
		default:
			fc := FileChange{Name: name, Change: "changed", Bytes: len(b)}
			switch {
			case old.IsZero():
				fc.Change = "added"
			case new.IsZero():
				fc.Change, fc.Bytes = "removed", len(a)
			}
			if art, ok := strings.CutPrefix(name, runfolder.ArtifactsDir+"/"); ok {
				fc.Name = art
				if art != ".gitkeep" {
					out.Artifacts = append(out.Artifacts, fc)
				}
			} else {
				out.Files = append(out.Files, fc)
			}
		}
		return nil
	})
	return out, err
}

// folderTree reads the raw tree at rel under the root tree (nil where
// the commit has no such folder).
func folderTree(h *vault.History, root vault.Hash, rel string) ([]byte, error) {
	raw, err := h.Tree(root)
	if err != nil {
		return nil, err
	}
	for _, seg := range strings.Split(rel, "/") {
		e, ok, err := vault.TreeFind(raw, seg)
		if err != nil || !ok || !e.Dir {
			return nil, err
		}
		if raw, err = h.Tree(e.Hash); err != nil {
			return nil, err
		}
	}
	return raw, nil
}

// changedFiles calls fn for every file that differs between two raw
// trees, in git's order, by its path under them; old or new is zero for
// a file added or removed. Folders are walked.
func changedFiles(h *vault.History, a, b []byte, prefix string, fn func(name string, old, new vault.Hash) error) error {
	return vault.DiffTrees(a, b, func(o, n *vault.TreeEntry) error {
		name := path.Join(prefix, entryName(o, n))
		if (o != nil && o.Dir) || (n != nil && n.Dir) {
			sub := func(e *vault.TreeEntry) ([]byte, error) {
				if e == nil || !e.Dir {
					return nil, nil
				}
				return h.Tree(e.Hash)
			}
			sa, err := sub(o)
			if err != nil {
				return err
			}
			sb, err := sub(n)
			if err != nil {
				return err
			}
			if err := changedFiles(h, sa, sb, name, fn); err != nil {
				return err
			}
		}
		// A file on either side that is not a folder.
		oh, nh := fileHash(o), fileHash(n)
		if oh.IsZero() && nh.IsZero() {
			return nil
		}
		return fn(name, oh, nh)
	})
}

func entryName(o, n *vault.TreeEntry) string {
	if n != nil {
		return n.Name
	}
	return o.Name
}

// fileHash is a file entry's blob (zero for none or a folder).
func fileHash(e *vault.TreeEntry) vault.Hash {
	if e == nil || e.Dir {
		return vault.ZeroHash
	}
	return e.Hash
}

// eventsAdded reads the event lines b adds after the lines it keeps of a,
// and counts the lines of a it does not keep. A line that is no event
// (torn, or written by hand wrongly) is left out: quire check names it.
func eventsAdded(playbook string, a, b []byte) ([]Event, int) {
	x, y := fileLines(a), fileLines(b)
	same := 0
	for same < len(x) && same < len(y) && bytes.Equal(x[same], y[same]) {
		same++
	}
	out := []Event{}
	for _, raw := range y[same:] {
		if ln, err := event.Parse(raw); err == nil {
			out = append(out, eventOf(playbook, &ln))
		}
	}
	return out, len(x) - same
}

func fileLines(b []byte) [][]byte {
	if len(b) == 0 {
		return nil
	}
	return bytes.Split(bytes.TrimSuffix(b, []byte{'\n'}), []byte{'\n'})
}

// textAdded is the text b appends to a; when b does not begin with a, the
// two from the first line they differ at (removed is a's rest).
func textAdded(a, b string) (added, removed string) {
	if rest, ok := strings.CutPrefix(b, a); ok {
		return rest, ""
	}
	i := 0
	for {
		j := strings.IndexByte(a[i:], '\n')
		if j < 0 || !strings.HasPrefix(b[i:], a[i:i+j+1]) {
			break
		}
		i += j + 1
	}
	return b[i:], a[i:]
}

// stateChanges compares two run.state.json files field by field: each
// field whose value differs (compared as compact JSON), in the order of
// the file after, then those it dropped. A file that is no JSON object
// (a hand edit) is one change of its whole text, field "".
func stateChanges(a, b []byte) []StateChange {
	out := []StateChange{}
	ka, va, okA := objectFields(a)
	kb, vb, okB := objectFields(b)
	if !okA || !okB {
		if !bytes.Equal(a, b) {
			sc := StateChange{}
			if len(a) > 0 {
				sc.Before = textValue(a, okA)
			}
			if len(b) > 0 {
				sc.After = textValue(b, okB)
			}
			out = append(out, sc)
		}
		return out
	}
	for _, k := range kb {
		if old, ok := va[k]; !ok || !bytes.Equal(old, vb[k]) {
			out = append(out, StateChange{Field: k, Before: old, After: vb[k]})
		}
	}
	for _, k := range ka {
		if _, ok := vb[k]; !ok {
			out = append(out, StateChange{Field: k, Before: va[k]})
		}
	}
	return out
}

// objectFields reads a JSON object's keys in order and their values,
// compacted; an empty file is an object without fields.
func objectFields(b []byte) ([]string, map[string]json.RawMessage, bool) {
	vals := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, vals, true
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, false
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, false
		}
		k, _ := t.(string)
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return nil, nil, false
		}
		if _, dup := vals[k]; !dup {
			keys = append(keys, k)
		}
		vals[k] = compact(v)
	}
	return keys, vals, true
}

// textValue is a whole state file as a change's value: its JSON
// compacted, or its text as a JSON string when it is no JSON.
func textValue(b []byte, isObject bool) json.RawMessage {
	if isObject || json.Valid(b) {
		return compact(b)
	}
	s, _ := json.Marshal(string(b))
	return s
}
