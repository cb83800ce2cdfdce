package web

import (
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"quire/ledger"
	"quire/words/refusal"
)

// A run's commit, as its page shows it: what the commit changed in the
// run's folder, as list_run_commits with the commit answers it (read
// from git's objects by the ledger), drawn in each file's terms: the
// events added as a list, the text appended to the thread as Markdown,
// the state's fields changed as before and after, the artifacts and
// other files added, changed or removed.

type commitPage struct {
	R         *ledger.Run
	RunHref   string
	C         ledger.RunCommit
	Changes   *ledger.RunCommitChanges
	Events    []eventRow
	Thread    template.HTML
	Removed   string // thread text the commit did not keep, as it was
	State     []stateRow
	Artifacts []ledger.FileChange
	Files     []ledger.FileChange
}

// stateRow is one field of run.state.json before and after the commit,
// as the page writes a value: a string as its text, anything else as
// JSON; a side without one (or null) is drawn as none.
type stateRow struct {
	Field, Before, After string
	HadBefore, HasAfter  bool
}

// runCommit is the page of one of a run's commits.
func (w *Web) runCommit(r *http.Request, c *reqCtx) (*view, error) {
	pb, id, sha := r.PathValue("playbook"), r.PathValue("run_id"), r.PathValue("commit")
	run, err := callAs[*ledger.Run](w, r, c, "get_run", map[string]any{"playbook": pb, "run_id": id})
	if err != nil {
		return nil, err
	}
	page, err := callAs[*ledger.RunCommitPage](w, r, c, "list_run_commits", map[string]any{"playbook": pb, "run_id": id, "commit": sha})
	if err != nil {
		return nil, err
	}
	if len(page.Commits) != 1 || page.Changes == nil {
		return nil, fmt.Errorf("list_run_commits answered no changes of commit %s", sha)
	}
	cp := &commitPage{R: run, RunHref: runHref(pb, id), C: page.Commits[0], Changes: page.Changes,
		Artifacts: page.Changes.Artifacts, Files: page.Changes.Files, Removed: page.Changes.ThreadRemoved}
	for _, e := range page.Changes.Events {
		cp.Events = append(cp.Events, eventRowOf(run.Address, e))
	}
	if strings.TrimSpace(page.Changes.Thread) != "" {
		cp.Thread = (&mdState{}).inSection(page.Changes.Thread, 2, func(h string) bool { return strings.HasPrefix(h, "Thread of run ") })
	}
	for _, s := range page.Changes.State {
		cp.State = append(cp.State, stateRow{Field: s.Field, Before: valueText(s.Before), After: valueText(s.After),
			HadBefore: hasValue(s.Before), HasAfter: hasValue(s.After)})
	}
	return &view{Title: "Commit " + cp.C.Commit[:min(12, len(cp.C.Commit))] + " of a run of " + run.Name, Playbook: pb, Template: "commit", Data: cp,
		Crumbs: []crumb{{"Playbooks", "/"}, {pb, "/p/" + url.PathEscape(pb)}, {run.Name, defHref(pb, run.Type, run.Name)}, {"Run", cp.RunHref}}}, nil
}

// valueText is a JSON value as the page writes it: a string as its text,
// anything else as its JSON.
func valueText(raw json.RawMessage) string {
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// hasValue says whether a field has a value to show: null (a step not
// begun yet) is drawn as none, as a field left out is.
func hasValue(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// eventRowOf is an event of a run as the pages list it.
func eventRowOf(runAddr string, e ledger.Event) eventRow {
	er := eventRow{E: e, Address: runAddr + "/events/" + e.ID}
	var d struct {
		Step   string `json:"step"`
		Detail string `json:"detail"`
	}
	json.Unmarshal(e.Data, &d)
	er.Step, er.Detail = d.Step, d.Detail
	return er
}

// endRun ends a run through end_run, as the run page's forms ask:
// succeeded (with an output, JSON, where one is given), rejected (with
// its reason, and a kind and detail where given) or failed (with a
// detail); as the token's principal, whom rule 4 wants the run's executor
// or authorizer, or, on a server without tokens, as the name given.
func (w *Web) endRun(rw http.ResponseWriter, r *http.Request, c *reqCtx) (string, error) {
	pb, id := r.PathValue("playbook"), r.PathValue("run_id")
	args := map[string]any{"playbook": pb, "run_id": id, "status": r.PostFormValue("status")}
	for _, k := range []string{"reason", "kind", "detail"} {
		if v := strings.TrimSpace(r.PostFormValue(k)); v != "" {
			args[k] = v
		}
	}
	if out := strings.TrimSpace(r.PostFormValue("output")); out != "" {
		if !json.Valid([]byte(out)) {
			return "", refusal.Invalid("/output", "the output is not JSON; write it as JSON, such as {\"month\": \"2026-10\"}, or leave it empty")
		}
		args["output"] = json.RawMessage(out)
	}
	if c.Open {
		name, err := w.formName(rw, r, "actor", "give your name, as a run is ended by its executor or authorizer")
		if err != nil {
			return "", err
		}
		args["actor"] = name
	} else {
		args["actor"] = c.Who
	}
	if _, err := callAs[*ledger.Run](w, r, c, "end_run", args); err != nil {
		return "", err
	}
	return runHref(pb, id), nil
}
