package vault

import (
	"path"
	"path/filepath"
	"strings"

	"quire/internal/front"
	"quire/internal/fsys"
)

// A run folder written by another tool in the capsule's own form is a run
// like any of quire's: its index line may be the capsule's minimum (a uid,
// its type and its path, as "grep type: playbook-run" reads the run
// inventory), and its definition.md the capsule's front matter without
// quire's own fields. Such a line is completed when the index is read,
// from the run's folder: the capsule's `playbook:` names the definition's
// uid, whose own index line says the playbook, the definition's type and
// its name, as quire writes them on the lines of its runs. The file is
// never rewritten; every reader of the index (list_runs, get_run, the
// histories, quire check, the janitor) sees the completed line.

// incompleteRun says whether e is a run's line that lacks what quire
// writes on the lines of its own runs.
func incompleteRun(e *Entry) bool {
	return e.Type == "playbook-run" && (e.Playbook == "" || e.Name == "" || e.DefType == "" || e.Path == "")
}

// completeRuns completes the runs' lines that lack what quire writes on
// its own (incompleteRun) from their folders; those whose folder or
// definition cannot be found yet are tried again at the next read. The
// caller holds r.mu.
func (r *registry) completeRuns() {
	if len(r.incomplete) == 0 {
		return
	}
	left := r.incomplete[:0]
	for _, i := range r.incomplete {
		// Completed in a copy, and set in place (in a slice of the
		// registry's own) only when it changed.
		e := r.entries[i]
		if !r.completeRun(&e) {
			left = append(left, i)
		}
		if o := &r.entries[i]; e.Path != o.Path || e.Playbook != o.Playbook || e.DefType != o.DefType || e.Name != o.Name {
			r.own()
			r.entries[i] = e
		}
	}
	r.incomplete = left
}

// completeRun fills in e, a run's line in the capsule's minimal form:
// its path from the folder named after its uid when the line has none,
// then the playbook, the definition's type and name from definition.md
// (quire's own fields when it has them, else the index line of the
// definition its `playbook:` names). A `playbook` on the line that is the
// definition's uid (the capsule's meaning of the word) is read as that.
func (r *registry) completeRun(e *Entry) bool {
	if e.Path == "" {
		dirs, _ := filepath.Glob(filepath.Join(r.root, RunsDir, "*-"+e.UID+"-*"))
		if len(dirs) != 1 {
			return false
		}
		e.Path = path.Join(RunsDir, filepath.Base(dirs[0]))
	}
	if !strings.HasPrefix(e.Path, RunsDir+"/") || strings.Contains(e.Path, "..") {
		return false
	}
	data, err := fsys.ReadFile(filepath.Join(r.root, filepath.FromSlash(path.Join(e.Path, "definition.md"))))
	if err != nil {
		return false
	}
	m, err := front.Read(data)
	if err != nil {
		return false
	}
	var fm struct {
		Playbook       string `yaml:"playbook"`
		QuirePlaybook  string `yaml:"quire_playbook"`
		DefinitionType string `yaml:"definition_type"`
		DefinitionName string `yaml:"definition_name"`
	}
	if m.Decode(&fm, false) != nil {
		return false
	}
	if fm.QuirePlaybook != "" && fm.DefinitionType != "" && fm.DefinitionName != "" {
		e.Playbook, e.DefType, e.Name = fm.QuirePlaybook, fm.DefinitionType, fm.DefinitionName
		return true
	}
	def := fm.Playbook
	if i, ok := r.byUID[e.Playbook]; ok && r.entries[i].Type == "definition" && def == "" {
		def = e.Playbook
	}
	i, ok := r.byUID[def]
	if !ok || r.entries[i].Type != "definition" {
		return false
	}
	d := r.entries[i]
	e.Playbook, e.DefType, e.Name = d.Playbook, d.DefType, d.Name
	return true
}

// DefinitionOf answers the index line of the definition a run's
// definition.md names by the capsule's `playbook:` uid, for a
// definition.md without quire's own fields.
func (v *Vault) DefinitionOf(uid string) (Entry, bool) {
	e, ok, err := v.Lookup(uid)
	if err != nil || !ok || e.Type != "definition" {
		return Entry{}, false
	}
	return e, true
}
