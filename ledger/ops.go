package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"quire/ledger/comments"
	"quire/words/address"
	"quire/words/event"
	"quire/words/near"
	"quire/words/refusal"
)

// Op is one operation of the table that every interface serves: the CLI's
// `quire call`, the HTTP routes and the MCP tools are all made from it.
type Op struct {
	Name string
	// Description says what the operation does, what it changes and what
	// it refuses, for an agent to act on.
	Description string
	ReadOnly    bool
	Idempotent  bool
	// Scope is the token scope a caller needs: ScopeRead, ScopeWrite or
	// ScopeAdmin.
	Scope string
	// Method and Path are the HTTP route, relative to /v1/orgs/{org}.
	// Path segments in braces are filled from the arguments of those names;
	// a last segment {name...} takes the rest of the path, slashes and all.
	Method string
	Path   string
	// StatePath is the argument a refusal of the run's state is at, when
	// the layer that refused named none: transition_run's /to, end_run's
	// /status, record_event's /event (a run that is paused cannot pause).
	StatePath string
	// Args is the type of the arguments (a struct); Result of the answer.
	Args   reflect.Type
	Result reflect.Type
	// Handler names the method that does it, as a profile names it:
	// quire/ledger.(*Ledger).runDefinition.
	Handler string
	// Enums are the closed sets of values the arguments that take one
	// take, by the argument's JSON name, in the order the schemas list
	// them: read at register from the enum tags of Args' fields (see
	// enumOf). Every door's schema and completion reads them here.
	Enums map[string][]string

	call func(ctx context.Context, l *Ledger, args any) (any, error)
}

// The token scopes (serve/tokens.go says what each grants).
const (
	ScopeRead  = "playbook:read"
	ScopeWrite = "playbook:write"
	ScopeAdmin = "admin"
	// ScopeDelegate is no operation's scope: it lets run_definition name
	// another executor or authorized_by than the caller's principal.
	ScopeDelegate = "playbook:delegate"
)

// Scopes are the token scopes, in the order a help lists them.
var Scopes = []string{ScopeRead, ScopeWrite, ScopeAdmin, ScopeDelegate}

// operations is every operation, each pointing at its handler, a method
// of Ledger named after it in the file of its noun (runs.go, comments.go,
// ...). Nothing else adds to the table.
func operations() []*Op {
	return []*Op{
		// definitions.go
		op(Op{Name: "create_project", Scope: ScopeWrite, Method: "POST", Path: "/projects",
			Description: "Make a project, the parent every run must belong to (member_of). Writes projects/<slug>.md, appends its line to the index and commits. Refuses an empty name or one whose slug is taken (conflict)."}, (*Ledger).createProject),
		op(Op{Name: "list_projects", Scope: ScopeRead, Method: "GET", Path: "/projects", ReadOnly: true, Idempotent: true,
			Description: "List the projects, in the order they were made, with the uid that member_of names."}, (*Ledger).listProjects),
		op(Op{Name: "create_playbook", Scope: ScopeAdmin, Method: "POST", Path: "/playbooks",
			Description: "Make a playbook: playbooks/<playbook>/playbook.md, events.jsonl with playbook_created, its index line; commits. Refuses an id breaking the segment rule (/playbook) or one that exists (conflict)."}, (*Ledger).createPlaybook),
		op(Op{Name: "get_playbook", Scope: ScopeRead, Method: "GET", Path: "/playbooks/{playbook}", ReadOnly: true, Idempotent: true,
			Description: "Read a playbook: its name, description, the source of its page, and how many definitions and runs it holds. Refuses an unknown playbook (not_found)."}, (*Ledger).getPlaybook),
		op(Op{Name: "list_playbooks", Scope: ScopeRead, Method: "GET", Path: "/playbooks", ReadOnly: true, Idempotent: true,
			Description: "List the vault's playbooks in the order they were made."}, (*Ledger).listPlaybooks),
		op(Op{Name: "create_definition", Scope: ScopeWrite, Method: "POST", Path: "/playbooks/{playbook}/definitions",
			Description: "Save a new definition (a workflow or a function) as version 1: writes its document under playbooks/<playbook>/definitions/, records definition_saved and commits. Refuses a bad name or type, a document that does not parse or check (with its line or pointer), and one that exists (conflict)."}, (*Ledger).createDefinition),
		op(Op{Name: "update_definition", Scope: ScopeWrite, Method: "PUT", Path: "/playbooks/{playbook}/definitions/{type}/{name}",
			Description: "Save a new version of a definition (version n+1); runs already started keep the version they pinned. Refuses an unknown definition (not_found), a retired one (conflict) and a document that does not parse."}, (*Ledger).updateDefinition),
		op(Op{Name: "get_definition", Scope: ScopeRead, Method: "GET", Path: "/playbooks/{playbook}/definitions/{type}/{name}", ReadOnly: true, Idempotent: true,
			Description: "Read a definition at its current version, or at an earlier one with version: its document (source), version, whether it is retired. Refuses an unknown definition or version (not_found)."}, (*Ledger).getDefinition),
		op(Op{Name: "list_definitions", Scope: ScopeRead, Method: "GET", Path: "/playbooks/{playbook}/definitions", ReadOnly: true, Idempotent: true,
			Description: "List a playbook's definitions with their current versions, without their documents."}, (*Ledger).listDefinitions),
		op(Op{Name: "retire_definition", Scope: ScopeWrite, Method: "POST", Path: "/playbooks/{playbook}/definitions/{type}/{name}/retire", Idempotent: true,
			Description: "Retire a definition: it refuses new runs (conflict) and new versions; its runs and versions stay readable. Records definition_retired and commits."}, (*Ledger).retireDefinition),
		// documents.go
		op(Op{Name: "update_playbook", Scope: ScopeAdmin, Method: "PUT", Path: "/playbooks/{playbook}",
			Description: "Change a playbook's name, description or page: YAML text (data and runs, no result) checked as a definition's page, issues under /page with lines; null removes it. A page save records playbook_page_saved. Commits."}, (*Ledger).updatePlaybook),
		// runs.go
		op(Op{Name: "run_definition", Scope: ScopeWrite, Method: "POST", Path: "/playbooks/{playbook}/definitions/{type}/{name}/runs",
			Description: "Start a run of a definition at its current version: makes playbook-runs/<name>-<run_id>-<date>/ (definition.md pinning the version, context.md, thread.md, run.jsonl, run.state.json, artifacts/), indexes and commits it. Refuses an unknown member_of (/member_of), an input over 512 levels (/input), an unknown (not_found) or retired (conflict) definition."}, (*Ledger).runDefinition),
		op(Op{Name: "record_event", Scope: ScopeWrite, StatePath: "/event", Method: "POST", Path: "/playbooks/{playbook}/runs/{run_id}/events",
			Description: "Append an event to a run's run.jsonl, numbered in the playbook's history; a boundary (step end, pause, resume, milestone, receipt, compensation) updates run.state.json and commits. Refuses unknown types, those other ops record, an archived run, a pause or resume by anyone but executor or authorized_by (rule 4), a time before the last event or over 5 minutes ahead."}, (*Ledger).recordEvent),
		op(Op{Name: "append_thread", Scope: ScopeWrite, Method: "POST", Path: "/playbooks/{playbook}/runs/{run_id}/thread",
			Description: "Append text to a run's thread.md (append-only working memory for whoever continues it), committed at the next boundary, or at once for an ended run. Refuses an archived run."}, (*Ledger).appendThread),
		op(Op{Name: "put_artifact", Scope: ScopeWrite, Method: "PUT", Path: "/playbooks/{playbook}/runs/{run_id}/artifacts/{name...}",
			Description: "Write a file into a run's artifacts/ (replacing one of that name), committed at the next boundary, or at once for an ended run. Refuses a name leaving artifacts/ (.., absolute, symbolic links) and an archived run."}, (*Ledger).putArtifact),
		op(Op{Name: "end_run", Scope: ScopeWrite, StatePath: "/status", Method: "POST", Path: "/playbooks/{playbook}/runs/{run_id}/end",
			Description: "End a run: succeeded (with output) completes it; rejected (reason, optional kind, detail) or failed fails it. An output missing its shape or schema ends it rejected (conflict, unworkable; a reasoning function's output_invalid) with its issues; one over 256 KiB is kept in artifacts/output.json. Commits. Refuses anyone but the executor or authorized_by (rule 4), an ended or archived run."}, (*Ledger).endRun),
		op(Op{Name: "cancel_run", Scope: ScopeWrite, StatePath: "/run_id", Method: "POST", Path: "/playbooks/{playbook}/runs/{run_id}/cancel",
			Description: "Cancel an active run: run_failed of the kind cancelled makes it failed. Commits. Refuses anyone but the executor or authorized_by (rule 4), a paused run (resume it first), an ended or archived run."}, (*Ledger).cancelRun),
		op(Op{Name: "transition_run", Scope: ScopeWrite, StatePath: "/to", Method: "POST", Path: "/playbooks/{playbook}/runs/{run_id}/transition",
			Description: "Move a run to paused (pause_started), active (pause_resumed) or archived (its archived event with the reason first; then read-only). Only the executor or authorized_by may (rule 4). Runs end through end_run."}, (*Ledger).transitionRun),
		op(Op{Name: "get_run", Scope: ScopeRead, Method: "GET", Path: "/playbooks/{playbook}/runs/{run_id}", ReadOnly: true, Idempotent: true,
			Description: "Read a run: its input, status, state, pinned version, started and ended, output, current step, what a paused run waits for (paused), its folder; and page.result, the run rendered through its definition's page (first line the headline). With blocks, page.blocks lists the result's blocks with their addresses."}, (*Ledger).getRun),
		// ops_runfiles.go
		op(Op{Name: "get_run_files", Scope: ScopeRead, Method: "GET", Path: "/playbooks/{playbook}/runs/{run_id}/files", ReadOnly: true, Idempotent: true,
			Description: "Read a run's context.md, thread.md, run.state.json (as JSON) and its artifacts' names and sizes. Refuses an unknown run (not_found)."}, (*Ledger).getRunFiles),
		op(Op{Name: "list_run_commits", Scope: ScopeRead, Method: "GET", Path: "/playbooks/{playbook}/runs/{run_id}/commits", ReadOnly: true, Idempotent: true,
			Description: "List a run's git commits (those whose Run-Id trailer names it), newest first, a page at a time (cursor); with commit, that one and what it changed in the run's folder (events added, thread appended, state fields before/after, files). Refuses an unknown run or commit (not_found)."}, (*Ledger).listRunCommits),
		// list.go
		op(Op{Name: "list_runs", Scope: ScopeRead, Method: "GET", Path: "/playbooks/{playbook}/runs", ReadOnly: true, Idempotent: true,
			Description: "List a playbook's runs, newest first, filtered by definition type and name, status, state, executor, the dates they started (since, until) and words of their headline (search), a page at a time (cursor)."}, (*Ledger).listRuns),
		// events.go
		op(Op{Name: "list_playbook_events", Scope: ScopeRead, Method: "GET", Path: "/playbooks/{playbook}/events", ReadOnly: true, Idempotent: true,
			Description: "Read a playbook's history in CloudEvents form, in the order the playbook recorded it (by seq), a page at a time from after; with run_id, that run's events alone."}, (*Ledger).listPlaybookEvents),
		op(Op{Name: "get_event", Scope: ScopeRead, Method: "GET", Path: "/playbooks/{playbook}/events/{event_id}", ReadOnly: true, Idempotent: true,
			Description: "Read one event by its id, in CloudEvents form: <run_id>_<n> for a run's nth event, <playbook uid>_<n> for a hand-written line of events.jsonl."}, (*Ledger).getEvent),
		// pages.go
		op(Op{Name: "render_page", Scope: ScopeRead, Method: "POST", Path: "/playbooks/{playbook}/definitions/{type}/{name}/render", ReadOnly: true, Idempotent: true,
			Description: "Preview a definition's page as get_definition answers it, with page.result (over sample_output or the latest run) and page.runs. run_id: as it stood when that run ended, folded again (out_of_reach past 10,000 records); at: as of a commit. Refuses a definition without a page (not_found), a retired one (conflict), a run of another definition, run_id with sample_output."}, (*Ledger).renderPage),
		// pagesat.go
		op(Op{Name: "diff_page", Scope: ScopeRead, Method: "GET", Path: "/playbooks/{playbook}/definitions/{type}/{name}/diff", ReadOnly: true, Idempotent: true,
			Description: "Diff a page rendered at commit old and at new (default: now): its Markdown's lines, and each view's changed values by JSON pointer."}, (*Ledger).diffPage),
		op(Op{Name: "render_playbook_page", Scope: ScopeRead, Method: "POST", Path: "/playbooks/{playbook}/render", ReadOnly: true, Idempotent: true,
			Description: "Render the playbook's own page: {page: {runs, standing}}. Refuses a playbook without a page (not_found)."}, (*Ledger).renderPlaybookPage),
		// trypage.go
		op(Op{Name: "try_page", Scope: ScopeWrite, Method: "POST", Path: "/playbooks/{playbook}/definitions/{type}/{name}/try", ReadOnly: true, Idempotent: true,
			Description: "Dry run of a page: a new document (source) checked as a save checks it, folded over the whole history (out_of_reach past 10,000 records) and rendered, saving nothing: page, views, each view's changes from today's."}, (*Ledger).tryPage),
		// verify.go
		op(Op{Name: "verify_page", Scope: ScopeRead, Method: "POST", Path: "/playbooks/{playbook}/verify", ReadOnly: true, Idempotent: true,
			Description: "Check a page.receipt (the page's own if none): fold the views anew over the history here with its document's module, read from git. verdict: verified, out_of_reach (past 10,000 records) or differs, with difference {seq, record, view, pointer, receipt_value, refolded_value}: the first record where the views differ."}, (*Ledger).verifyPage),
		// comments.go
		op(Op{Name: "make_comment", Scope: ScopeWrite, Method: "POST", Path: "/comments",
			Description: "Comment on an address: with playbook, one of its things (playbook, definition version, step, run, event, result block, request, part); without, the organization's (org, org/connections/<id>, org/members/<id>, org/settings/<page>). A reply comments the same address. Writes comments/<id>.md, commits as the author. Checks the address's form only. Refuses an address no comment takes (/address), a text empty or over 10,000 characters (/text), an unknown playbook."}, (*Ledger).makeComment),
		op(Op{Name: "list_comments", Scope: ScopeRead, Method: "GET", Path: "/comments", ReadOnly: true, Idempotent: true,
			Description: "List a playbook's comments (without playbook, the organization's), oldest first, with text and resolution. under keeps those on an address and what it holds (parts; a run's events and result blocks; a version's steps; every version); address keeps that address alone; resolved keeps resolved or open ones."}, (*Ledger).listComments),
		op(Op{Name: "resolve_comment", Scope: ScopeWrite, Method: "POST", Path: "/comments/{id}/resolve",
			Description: "Resolve a comment, saying how: acted, declined, answered or obsolete. Rewrites its front matter (resolved, how, resolved_at, resolved_by), records comment_resolved and commits as the actor; without playbook, one of the organization's. Refuses an unknown id (not_found), a resolved comment (conflict), another how (/how)."}, (*Ledger).resolveComment),
		// activity.go
		op(Op{Name: "list_activity", Scope: ScopeRead, Method: "GET", Path: "/activity", ReadOnly: true, Idempotent: true,
			Description: "List the organization's activity, newest first, each row by its address: runs started and ended, definitions saved or broken, playbooks created or updated, comments made or resolved; each with kind, playbook, at, actor and summary. playbook, since and limit filter; member marks each row seen or not for that member."}, (*Ledger).listActivity),
		op(Op{Name: "mark_activity_seen", Scope: ScopeWrite, Method: "POST", Path: "/activity/seen",
			Description: "Mark activity rows seen by a member, by their addresses: appends a line to org/members/<member>/seen.jsonl and commits. A row is seen when marked at or after its time. With a token, member is its principal (another is forbidden). Refuses an address the activity does not name (/items/<i>) and a bad member id (/member)."}, (*Ledger).markActivitySeen),
		// address_ops.go
		// The route is GET /explain?address=…: an address holds slashes, so it
		// is a query argument rather than a path segment.
		op(Op{Name: "explain_address", Scope: ScopeRead, Method: "GET", Path: "/explain", ReadOnly: true, Idempotent: true,
			Description: "Explain an address: what it names, its segments, the tool calls that read and act on it with arguments filled in (not_served where this server has none), and the resolve_comment for a comment on it. Checks the form only. Refuses a non-address at /address, naming the segment and rule it breaks."}, (*Ledger).explainAddress),
		// agentrun_ops.go
		op(Op{Name: "inspect_workflow", Scope: ScopeRead, Method: "POST", Path: "/workflows/inspect", ReadOnly: true, Idempotent: true,
			Description: "Inspect an AgentRun workflow (saved, or source) as its save does, running nothing: issues at JSON pointers, nodes' state keys, the final selection, what stays unknown."}, (*Ledger).inspectWorkflow),
		op(Op{Name: "try_code", Scope: ScopeWrite, Method: "POST", Path: "/workflows/try-code", ReadOnly: true, Idempotent: true,
			Description: "Run an AgentRun code node over a state in the sandbox (no Date, Promise, timers, Function, host globals): its value and the state after, or its error and line. Writes nothing but runs code: needs playbook:write. One at a time, 1 s each (error kind time); refused (unavailable) when 2 wait."}, (*Ledger).tryCode),
		// check.go (the checker itself is ledger/checker)
		op(Op{Name: "check_vault", Scope: ScopeAdmin, Method: "GET", Path: "/check", ReadOnly: true, Idempotent: true,
			Description: "Validate the vault against the playbook-run capsule, each problem with its path and line. With history: true, also prove the append-only rules from the git history not proved before (run.jsonl only grew, definition.md and archived runs never changed, lines in seq order), each problem naming its commit."}, (*Ledger).checkVault),
		op(Op{Name: "archive_idle_runs", Scope: ScopeAdmin, Method: "POST", Path: "/janitor",
			Description: "The janitor: commit what earlier writes could not (committed: false), then archive every complete or failed run idle 90 days or more, its archived event with the reason first."}, (*Ledger).archiveIdleRuns),
		// remotes.go
		op(Op{Name: "list_remotes", Scope: ScopeRead, Method: "GET", Path: "/remotes", ReadOnly: true, Idempotent: true,
			Description: "The vault's git remotes: the last commit pushed to each, how many wait, the last push error; on a replica (serve --follow), under follow: the commit last fetched and when, how far behind, the last fetch error."}, (*Ledger).listRemotes),
		op(Op{Name: "repair_vault", Scope: ScopeAdmin, Method: "POST", Path: "/repair",
			Description: "Finish or roll back what a stopped writer left (its git locks, .git/index out of step, staging folders, temp files, a run outside the index, uncommitted changes), rebuild a stale history; says what it did and what needs a person."}, (*Ledger).repairVault),
	}
}

// table is the operations by name, made at the first call (the handlers
// that list the operations refer to it, so it is no package variable
// made before them).
func table() map[string]*Op {
	tableOnce.Do(func() { tableByName = tableOf(operations()...) })
	return tableByName
}

var (
	tableOnce   sync.Once
	tableByName map[string]*Op
)

// enumSets are the closed sets an enum tag names as @name rather than
// listing them, for the sets the code keeps as a list of its own.
var enumSets = map[string]func() []string{
	// A definition's types, and a page (a definition of its own).
	"definition_types": func() []string { return append(address.Types(), TypePage) },
	// The types a run is of: a page is never run.
	"run_types": address.Types,
	// What has a page's views: a definition that is run, or the playbook.
	"page_subjects":     func() []string { return append(address.Types(), "playbook") },
	"comment_hows":      func() []string { return slices.Clone(comments.Hows) },
	"recordable_events": event.Recordable,
}

// enumOf reads an argument's enum tag: `enum:"succeeded,rejected,failed"`
// lists its values, `enum:"@name"` names a set of enumSets. No tag is no
// closed set (nil).
func enumOf(op string, f reflect.StructField) []string {
	tag, ok := f.Tag.Lookup("enum")
	if !ok {
		return nil
	}
	if name, ok := strings.CutPrefix(tag, "@"); ok {
		set, known := enumSets[name]
		if !known {
			panic("ledger: " + op + "." + f.Name + " names the enum set " + name + ", which enumSets does not have")
		}
		return set()
	}
	values := strings.Split(tag, ",")
	if slices.Contains(values, "") {
		panic("ledger: " + op + "." + f.Name + " has an empty value in its enum tag " + tag)
	}
	return values
}

// op makes an operation of the table with typed arguments and answer: h
// is its handler, a method of Ledger named after it.
func op[A any, R any](o Op, h func(l *Ledger, ctx context.Context, a *A) (R, error)) *Op {
	o.Args = reflect.TypeFor[A]()
	o.Result = reflect.TypeFor[R]()
	o.Handler = runtime.FuncForPC(reflect.ValueOf(h).Pointer()).Name()
	for i := 0; i < o.Args.NumField(); i++ {
		f := o.Args.Field(i)
		if values := enumOf(o.Name, f); values != nil {
			if o.Enums == nil {
				o.Enums = map[string][]string{}
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			o.Enums[name] = values
		}
	}
	call := withRequestID(o.Name, func(ctx context.Context, l *Ledger, a *A) (R, error) { return h(l, ctx, a) })
	if pf := playbookField(o.Args); !o.ReadOnly && pf >= 0 {
		// A write to a playbook homed at another node is that node's.
		write := call
		call = func(ctx context.Context, l *Ledger, a *A) (R, error) {
			if err := l.homeHolds(reflect.ValueOf(a).Elem().Field(pf).String()); err != nil {
				var zero R
				return zero, err
			}
			return write(ctx, l, a)
		}
	}
	if o.ReadOnly {
		read := call
		call = func(ctx context.Context, l *Ledger, a *A) (R, error) {
			defer l.holdMoves()()
			l.followGitForRead()
			return read(ctx, l, a)
		}
	}
	o.call = func(ctx context.Context, l *Ledger, args any) (any, error) {
		return call(ctx, l, args.(*A))
	}
	return &o
}

// tableOf indexes the operations by name; a name given twice stops the
// program at its start.
func tableOf(ops ...*Op) map[string]*Op {
	t := make(map[string]*Op, len(ops))
	for _, o := range ops {
		if _, dup := t[o.Name]; dup {
			panic("ledger: operation " + o.Name + " is in the table twice")
		}
		t[o.Name] = o
	}
	return t
}

// Ops lists the operations by name.
func Ops() []*Op {
	out := make([]*Op, 0, len(table()))
	for _, op := range table() {
		out = append(out, op)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup finds an operation by name.
func Lookup(name string) (*Op, bool) {
	op, ok := table()[name]
	return op, ok
}

var rawMessageType = reflect.TypeOf(json.RawMessage(nil))

// Decode reads an operation's arguments from JSON, strictly: an unknown
// field, a value of the wrong type and a missing required field (one whose
// json tag has no omitempty) are refused at their path, and so is a
// number given outside its field's range tag (`range:"1,1000"`): left out
// it takes its default, given as 0 it is refused, not taken as left out.
func (op *Op) Decode(raw json.RawMessage) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, refusal.Invalid("", "the arguments of %s are not a JSON object: %v", op.Name, err)
	}
	known := map[string]bool{}
	var names []string
	for i := 0; i < op.Args.NumField(); i++ {
		f := op.Args.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || name == "" {
			continue
		}
		known[name] = true
		names = append(names, name)
		if !strings.Contains(opts, "omitempty") {
			if v, ok := fields[name]; !ok || string(v) == "null" {
				return nil, refusal.Invalid("/"+name, "%s needs %s", op.Name, name)
			}
		}
	}
	for name := range fields {
		if !known[name] {
			return nil, refusal.Invalid("/"+name, "%s takes no argument %q%s", op.Name, name, near.Suggest(name, names, "its arguments"))
		}
	}
	// Every JSON value an operation takes (data, input, output, ...) is
	// held to the limits of checkData, at its own path.
	for i := 0; i < op.Args.NumField(); i++ {
		f := op.Args.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if v, ok := fields[name]; ok && f.Type == rawMessageType {
			if err := checkData("/"+name, v); err != nil {
				return nil, err
			}
		}
	}
	args := reflect.New(op.Args).Interface()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(args); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, refusal.Invalid("/"+strings.ReplaceAll(te.Field, ".", "/"), "expected %s, not a JSON %s", te.Type, te.Value)
		}
		return nil, refusal.Invalid("", "%v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, refusal.Invalid("", "the arguments hold more than one JSON value")
	}
	v := reflect.ValueOf(args).Elem()
	for i := 0; i < op.Args.NumField(); i++ {
		f := op.Args.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		rng, ok := f.Tag.Lookup("range")
		if raw, given := fields[name]; !ok || !given || string(raw) == "null" || !v.Field(i).CanInt() {
			continue
		}
		var lo, hi int64
		if _, err := fmt.Sscanf(rng, "%d,%d", &lo, &hi); err != nil {
			panic("ledger: " + op.Name + "." + name + " has the range tag " + rng + ", not lo,hi")
		}
		if n := v.Field(i).Int(); n < lo || n > hi {
			return nil, refusal.Invalid("/"+name, "%d is out of range: %s takes %d to %d, or is left out for its default", n, name, lo, hi)
		}
	}
	return args, nil
}

// Call runs one operation with its arguments as JSON.
func (l *Ledger) Call(ctx context.Context, name string, raw json.RawMessage) (any, error) {
	op, ok := Lookup(name)
	if !ok {
		return nil, refusal.New(refusal.NotFound, "no operation %q; quire call --list shows them", name)
	}
	args, err := op.Decode(raw)
	if err != nil {
		return nil, err
	}
	return l.Invoke(ctx, op, args)
}

// Invoke runs an operation with decoded arguments (a pointer to its Args).
func (l *Ledger) Invoke(ctx context.Context, op *Op, args any) (any, error) {
	if reflect.TypeOf(args) != reflect.PointerTo(op.Args) {
		return nil, fmt.Errorf("ledger: %s takes *%s, not %T", op.Name, op.Args, args)
	}
	if !op.ReadOnly {
		if err := l.replicaRefusal(); err != nil {
			return nil, err // a replica takes no write (replica.go)
		}
	}
	res, err := op.call(ctx, l, args)
	if err != nil {
		return nil, refusal.AtPath(err, op.StatePath)
	}
	return res, nil
}
