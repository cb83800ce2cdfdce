package ledger

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"quire/runfolder"
	"quire/vault"
	"quire/words/address"
	"quire/words/event"
	"quire/words/refusal"
)

type RunDefinitionArgs struct {
	Playbook     string          `json:"playbook"`
	Type         string          `json:"type" enum:"@run_types"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input,omitempty" jsonschema:"the run's input, any JSON value"`
	MemberOf     []string        `json:"member_of" jsonschema:"its projects, each by uid or name; at least one"`
	Executor     string          `json:"executor" jsonschema:"the agent that executes the run"`
	AuthorizedBy string          `json:"authorized_by" jsonschema:"the human or agent that authorized it"`
	Actor        string          `json:"actor,omitempty" jsonschema:"who starts it (run_created's actor, its commit's author); authorized_by when left out"`
	Context      string          `json:"context,omitempty" jsonschema:"context.md: who and what this run is for"`
	Time         string          `json:"time,omitempty" jsonschema:"RFC 3339 time the run started, for a backfill; now when left out"`
	RequestID    string          `json:"request_id,omitempty" jsonschema:"makes a retry safe: a call repeating an id answers the first call's answer and writes nothing (HTTP: the Idempotency-Key header)"`
}

type RunArgs struct {
	Playbook string `json:"playbook"`
	RunID    string `json:"run_id"`
}

type GetRunArgs struct {
	Playbook string `json:"playbook"`
	RunID    string `json:"run_id"`
	Blocks   bool   `json:"blocks,omitempty" jsonschema:"list the blocks of page.result, each with its address"`
	Format   string `json:"format,omitempty" enum:"markdown,text" jsonschema:"markdown (default), or text: every chart block printed as its data's table"`
}

func checkFormat(f string) error {
	if f != "" && f != "markdown" && f != "text" {
		return refusal.Invalid("/format", "%q is not markdown or text", f)
	}
	return nil
}

type RecordEventArgs struct {
	Playbook  string          `json:"playbook"`
	RunID     string          `json:"run_id"`
	Event     string          `json:"event" enum:"@recordable_events" jsonschema:"one of the capsule's event types, such as step_started or step_completed"`
	Step      string          `json:"step,omitempty" jsonschema:"the step's reference, such as do/1/review"`
	Detail    string          `json:"detail,omitempty"`
	Data      json.RawMessage `json:"data,omitempty" jsonschema:"a JSON object"`
	Actor     string          `json:"actor" jsonschema:"who records it"`
	Time      string          `json:"time,omitempty" jsonschema:"RFC 3339; not before the run's previous event, at most 5 minutes ahead of the server's clock; the server's clock when left out"`
	RequestID string          `json:"request_id,omitempty" jsonschema:"makes a retry safe: a call repeating an id answers the first call's answer and writes nothing (HTTP: the Idempotency-Key header)"`
}

// A thread takes at most 64 KiB a call and holds at most 16 MiB: git keeps
// the whole file again at each boundary.
const (
	maxThreadAppend = 64 << 10
	maxThread       = 16 << 20
)

type AppendThreadArgs struct {
	Playbook  string `json:"playbook"`
	RunID     string `json:"run_id"`
	Text      string `json:"text"`
	Actor     string `json:"actor"`
	Time      string `json:"time,omitempty" jsonschema:"RFC 3339 time the note heads, for a backfill; now when left out"`
	RequestID string `json:"request_id,omitempty" jsonschema:"makes a retry safe: a call repeating an id answers the first call's answer and writes nothing (HTTP: the Idempotency-Key header)"`
}

// MaxArtifact is the most an artifact holds, through every door: a
// request's body over HTTP and MCP holds at most 1 MiB (serve.MaxBody), so
// the CLI and quire call take no more. git keeps each version whole, and
// a boundary after a 200 MiB artifact took 46.6 s (issue 28).
const MaxArtifact = 1 << 20

// ArtifactTooLarge refuses an artifact of n bytes at path (an argument, or
// the CLI's FILE), named by what.
func ArtifactTooLarge(path, what string, n int64) error {
	return refusal.Invalid(path, "%s is %d bytes; an artifact holds at most 1 MiB (1,048,576 bytes), as a request over HTTP does", what, n)
}

type PutArtifactArgs struct {
	Playbook  string `json:"playbook"`
	RunID     string `json:"run_id"`
	Name      string `json:"name" jsonschema:"path under artifacts/: letters, digits, '.', '_', '-' and '/'"`
	Content   string `json:"content"`
	Encoding  string `json:"encoding,omitempty" enum:"utf-8,base64" jsonschema:"utf-8 (default) or base64"`
	Actor     string `json:"actor,omitempty"`
	RequestID string `json:"request_id,omitempty" jsonschema:"makes a retry safe: a call repeating an id answers the first call's answer and writes nothing (HTTP: the Idempotency-Key header)"`
}

type EndRunArgs struct {
	Playbook  string          `json:"playbook"`
	RunID     string          `json:"run_id"`
	Status    string          `json:"status" enum:"succeeded,rejected,failed" jsonschema:"succeeded, rejected or failed"`
	Output    json.RawMessage `json:"output,omitempty" jsonschema:"the run's output, for succeeded"`
	Reason    string          `json:"reason,omitempty" jsonschema:"why it was rejected"`
	Kind      string          `json:"kind,omitempty"`
	Detail    string          `json:"detail,omitempty"`
	Actor     string          `json:"actor"`
	Time      string          `json:"time,omitempty"`
	RequestID string          `json:"request_id,omitempty" jsonschema:"makes a retry safe: a call repeating an id answers the first call's answer and writes nothing (HTTP: the Idempotency-Key header)"`
}

// CancelRunArgs cancels a run that is started.
type CancelRunArgs struct {
	Playbook string `json:"playbook"`
	RunID    string `json:"run_id"`
	Detail   string `json:"detail,omitempty" jsonschema:"why the run is cancelled"`
	Actor    string `json:"actor"`
	Time     string `json:"time,omitempty"`
}

type TransitionRunArgs struct {
	Playbook  string `json:"playbook"`
	RunID     string `json:"run_id"`
	To        string `json:"to" enum:"paused,active,archived" jsonschema:"paused, active (resume) or archived"`
	Reason    string `json:"reason,omitempty" jsonschema:"required to archive; a pause's is get_run's paused.reason"`
	Actor     string `json:"actor"`
	Time      string `json:"time,omitempty"`
	RequestID string `json:"request_id,omitempty" jsonschema:"makes a retry safe: a call repeating an id answers the first call's answer and writes nothing (HTTP: the Idempotency-Key header)"`
}

// Run is a run as reads answer it.
type Run struct {
	RunID        string          `json:"run_id"`
	Playbook     string          `json:"playbook"`
	Type         string          `json:"type"`
	Name         string          `json:"name"`
	Version      int             `json:"version"`
	Status       string          `json:"status"`
	State        string          `json:"state"`
	Started      string          `json:"started"`
	Ended        string          `json:"ended,omitempty"`
	Input        json.RawMessage `json:"input,omitempty" jsonschema:"get_run: the input the run was started with"`
	Output       json.RawMessage `json:"output,omitempty"`
	OutputShape  string          `json:"output_shape" jsonschema:"the shape the run's output takes: series, categories, table, text or none"`
	Reason       string          `json:"reason,omitempty"`
	Kind         string          `json:"kind,omitempty"`
	Detail       string          `json:"detail,omitempty"`
	Issues       []refusal.Issue `json:"issues,omitempty" jsonschema:"what a rejected run's output got wrong, each at its JSON pointer in the output"`
	Steps        []RunStep       `json:"steps,omitempty" jsonschema:"get_run: the pinned workflow's steps, how far the run got"`
	Executor     string          `json:"executor"`
	AuthorizedBy string          `json:"authorized_by"`
	CurrentStep  *string         `json:"current_step"`
	Paused       json.RawMessage `json:"paused,omitempty" jsonschema:"while paused, its pause_started's data: what it waits for (reason; or kind, stage, summary)"`
	Events       int             `json:"events"`
	LastSeq      int64           `json:"last_seq"`
	Path         string          `json:"path"`
	Address      string          `json:"address"`
	Page         *PageView       `json:"page,omitempty"`
	// Committed is set on a write's answer at a boundary: false when the
	// write is recorded (durably, in the files) but its commit could not be
	// made yet; the next writer's commit or quire janitor makes it.
	Committed *bool `json:"committed,omitempty"`
}

// Pause is what a paused run waits for, as its pause_started's data says
// it: the reason given to transition_run, or an AgentRun escalate's kind,
// stage and summary.
type Pause struct {
	Reason  string `json:"reason,omitempty"`
	Kind    string `json:"kind,omitempty"`
	Stage   string `json:"stage,omitempty"`
	Summary string `json:"summary,omitempty"`
}

// Pause reads r.Paused; nil when the run is not paused, or when its
// pause says nothing of these (the data of a pause_started recorded by
// hand may be any object).
func (r *Run) Pause() *Pause {
	var p Pause
	if json.Unmarshal(r.Paused, &p) != nil || p == (Pause{}) {
		return nil
	}
	return &p
}

// answerRun is the answer of a write that recorded a run's event: the run
// as it now stands, and whether the event's commit was made.
func answerRun(e vault.Entry, st *runfolder.State, committed *bool, err error) (*Run, error) {
	if err != nil {
		return nil, err
	}
	r := runOf(e, st)
	r.Committed = committed
	return r, nil
}

func runOf(e vault.Entry, st *runfolder.State) *Run {
	// A run of a definition that declares no shape says none
	// (output-shapes.md); run.state.json keeps only a shape.
	outputShape := st.OutputShape
	if outputShape == "" {
		outputShape = "none"
	}
	return &Run{RunID: st.RunID, Playbook: e.Playbook, Type: st.Type, Name: st.Name, Version: st.Version,
		Status: st.Status, State: st.State, Started: st.Started, Ended: st.Ended, Output: st.Output,
		OutputShape: outputShape, Reason: st.Reason, Kind: st.Kind, Detail: st.Detail, Issues: st.Issues,
		Executor: st.Executor, AuthorizedBy: st.AuthorizedBy, CurrentStep: st.CurrentStep, Paused: st.Paused, Events: st.Events,
		LastSeq: st.LastSeq, Path: e.Path, Address: e.Playbook + "/runs/" + st.RunID}
}

// runFolder finds a run of a playbook through the index.
func (l *Ledger) runFolder(playbook, runID string) (vault.Entry, runfolder.Folder, error) {
	if err := checkPlaybookID(playbook); err != nil {
		return vault.Entry{}, runfolder.Folder{}, err
	}
	if !address.ValidLowerUUID(runID) {
		return vault.Entry{}, runfolder.Folder{}, refusal.Invalid("/run_id", "%q is not a run id: a UUID in lowercase", runID)
	}
	e, ok, err := l.v.Lookup(runID)
	if err != nil {
		return e, runfolder.Folder{}, err
	}
	if !ok || e.Type != "playbook-run" || e.Playbook != playbook {
		return e, runfolder.Folder{}, refusal.At(refusal.NotFound, "/run_id", "playbook %s has no run %s", playbook, runID)
	}
	if _, err := l.v.Join(e.Path); err != nil {
		return e, runfolder.Folder{}, fmt.Errorf("the index's path for run %s: %v", runID, err)
	}
	return e, runfolder.Folder{V: l.v, Rel: e.Path}, nil
}

// runWrite checks what every write to a run takes: the acting principal,
// the run, and the time the event happened: zero when left out, for
// appendRunWith to take the clock under the lock.
func (l *Ledger) runWrite(playbook, runID, actor, at string) (vault.Entry, runfolder.Folder, time.Time, error) {
	if err := checkActor(actor); err != nil {
		return vault.Entry{}, runfolder.Folder{}, time.Time{}, err
	}
	e, f, err := l.runFolder(playbook, runID)
	if err != nil {
		return e, f, time.Time{}, err
	}
	t, err := l.eventTime(at, "/time")
	return e, f, t, err
}

// appendRun records one event of a run under the lock: it numbers it in
// the playbook's history, appends it and, at a boundary, commits.
func (l *Ledger) appendRun(e vault.Entry, f runfolder.Folder, ln *event.Line) (*runfolder.State, *bool, error) {
	return l.appendRunWith(e, f, ln, nil)
}

// commitRun commits a run's folder and the index after the event ln, and
// says whether it could (see commit).
func (t *tx) commitRun(e vault.Entry, f runfolder.Folder, ln *event.Line) bool {
	when, _ := event.ParseTime(ln.Timestamp)
	m := vault.Message{Subject: runSubject(ln.Subject, ln.Run, eventWords(ln.Event, ln.Step))}
	if ln.Detail != "" {
		m.Body = append(m.Body, ln.Detail)
	}
	if ln.Reason != "" {
		m.Body = append(m.Body, "Reason: "+ln.Reason)
	}
	step := ""
	if ln.Step != nil {
		step = *ln.Step
	}
	m.Trailers = append(runTrailers(e.Playbook, ln.Subject, ln.Run, f.Rel),
		vault.Trailer{Key: "Event", Value: ln.Event}, vault.Trailer{Key: "Step", Value: step},
		vault.Trailer{Key: "Event-Id", Value: ln.ID}, vault.Trailer{Key: "Event-Seq", Value: strconv.FormatInt(ln.Seq, 10)})
	return t.commit([]string{f.Rel, vault.IndexFile}, vault.Signature{Name: ln.Actor, When: when}, m)
}

// runSubject is the subject of a commit of a run: the definition's name
// (of its "type/name") and the run's handle, then what happened, as in
// "close-the-month 5e4f60a1: step do/1/review completed", so that the
// commits of thirty runs of one definition are told apart in git log
// --oneline. The run's whole id and the rest are the trailers'
// (runTrailers).
func runSubject(definition, runID, what string) string {
	return path.Base(definition) + " " + runHandle(runID) + ": " + what
}

// runHandle is a run's id made short for people: its last 8 hex digits.
// A run id is a UUID of version 7, whose first digits are the time it was
// made, so runs started in one minute share them; the last ones are
// random, and git log --grep finds the run by them.
func runHandle(runID string) string {
	return runID[max(0, len(runID)-8):]
}

// eventWords says an event type in words, its step in place:
// step_completed of do/1/review is "step do/1/review completed",
// run_created is "run created".
func eventWords(typ string, step *string) string {
	words := strings.ReplaceAll(typ, "_", " ")
	if step != nil && *step != "" {
		if rest, ok := strings.CutPrefix(words, "step "); ok {
			return "step " + *step + " " + rest
		}
		return words + " at " + *step
	}
	return words
}

// runTrailers name the run a commit is of.
func runTrailers(playbook, definition, runID, folder string) []vault.Trailer {
	return []vault.Trailer{{Key: "Run-Id", Value: runID}, {Key: "Playbook", Value: playbook},
		{Key: "Definition", Value: definition}, {Key: "Run-Folder", Value: folder}}
}

// keepIfEnded checks, for a write that commits at once because the run
// has ended (commitIfEnded), that what was committed of the run's folder
// still holds, before it writes.
func (t *tx) keepIfEnded(f runfolder.Folder) error {
	st, err := f.LoadState()
	if err != nil || (st.State != runfolder.Complete && st.State != runfolder.Failed) {
		return err
	}
	return t.keep(f.Rel)
}

// commitIfEnded commits a write to a run that has ended (complete or
// failed): no boundary of the run follows but its archive, which may be 90
// days off, so the write is its own boundary and is committed before the
// call returns. A write to a run still going waits for the run's next
// boundary. The caller holds the lock.
func (t *tx) commitIfEnded(e vault.Entry, f runfolder.Folder, actor string, at time.Time, what string) error {
	st, err := f.LoadState()
	if err != nil {
		return err
	}
	if st.State != runfolder.Complete && st.State != runfolder.Failed {
		return nil
	}
	if actor == "" {
		actor = st.Executor
	}
	m := vault.Message{Subject: runSubject(st.Name, st.RunID, what+" after the end"),
		Body:     []string{fmt.Sprintf("The run is %s; this write is its own boundary.", st.State)},
		Trailers: runTrailers(e.Playbook, st.Type+"/"+st.Name, st.RunID, f.Rel)}
	t.commit([]string{f.Rel}, vault.Signature{Name: actor, When: at}, m) // durable either way; a commit not made is finished by the next writer
	return nil
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// projectUIDs answers the uids of the projects member_of names, each by
// its uid or by its name: a person and an agent know a project by its name
// ("Operations"), and one more call to find its uid is one too many. A
// name is matched by its slug, as create_project made the project's file
// (projects/<slug>.md), so case and punctuation do not matter and no two
// projects share one. The run's folder keeps the uids, as the capsule's
// member_of does.
func (l *Ledger) projectUIDs(given []string) ([]string, error) {
	projects, err := l.v.FindType("project", func(*vault.Entry) bool { return true })
	if err != nil {
		return nil, err
	}
	bySlug := map[string]string{}
	byUID := map[string]bool{}
	names := make([]string, len(projects))
	for i, p := range projects {
		bySlug[strings.TrimSuffix(path.Base(p.Path), ".md")] = p.UID
		byUID[p.UID] = true
		names[i] = fmt.Sprintf("%q", p.Name)
	}
	out := make([]string, len(given))
	for i, g := range given {
		switch uid, byName := bySlug[slugOf(g)]; {
		case byUID[g]:
			out[i] = g
		case byName:
			out[i] = uid
		case len(projects) == 0:
			return nil, refusal.Invalid(fmt.Sprintf("/member_of/%d", i), "rule 1: %q is not a project: the vault has none yet; create_project makes one", g)
		default:
			return nil, refusal.Invalid(fmt.Sprintf("/member_of/%d", i), "rule 1: %q is not a project's uid or name; the projects are %s", g, strings.Join(names, ", "))
		}
	}
	return out, nil
}

// runDefinition is the operation run_definition (ops.go).
func (l *Ledger) runDefinition(ctx context.Context, a *RunDefinitionArgs) (*Run, error) {
	if len(a.MemberOf) == 0 {
		return nil, refusal.Invalid("/member_of", "rule 1: every run has at least one parent project; member_of is empty")
	}
	members, err := l.projectUIDs(a.MemberOf)
	if err != nil {
		return nil, err
	}
	a.MemberOf = members
	for field, v := range map[string]string{"/executor": a.Executor, "/authorized_by": a.AuthorizedBy} {
		if !event.IsPrincipal(v) {
			return nil, refusal.Invalid(field, "a principal is 1 to 200 characters on one line")
		}
	}
	starter := a.Actor
	if starter == "" {
		starter = a.AuthorizedBy
	} else if err := checkActor(starter); err != nil {
		return nil, err
	}
	if len(a.Input) > 0 && !json.Valid(a.Input) {
		return nil, refusal.Invalid("/input", "not JSON")
	}
	if d := event.Depth(a.Input); d > event.MaxDepth {
		return nil, refusal.Invalid("/input", "the input nests %d levels; a run's input may nest at most %d", d, event.MaxDepth)
	}
	started, err := l.eventTime(a.Time, "/time")
	if err != nil {
		return nil, err
	}
	if started.IsZero() {
		started = l.Now().UTC()
	}
	runID := newID()
	var out *Run
	err = l.write(writeArgs{Playbook: a.Playbook, RequestID: a.RequestID}, func(t *tx) error {
		d, err := l.definition(a.Playbook, a.Type, a.Name)
		if err != nil {
			return err
		}
		if d.Retired {
			return refusal.At(refusal.Conflict, "/name", "the %s %q is retired and takes no new runs", a.Type, a.Name)
		}
		v := d.latest()
		rel := runfolder.Dir(a.Name, runID, started)
		front := runfolder.Front{UID: runID, Type: "playbook-run", Name: a.Name + " " + runID, Created: event.FormatTime(started),
			Playbook: d.UID, PlaybookVersion: fmt.Sprint(v.Version), MemberOf: a.MemberOf, Binding: v.Path,
			Started: event.FormatTime(started), Executor: a.Executor, AuthorizedBy: a.AuthorizedBy,
			QuirePlaybook: a.Playbook, DefinitionType: a.Type, DefinitionName: a.Name}
		if a.Type == "prediction" {
			front.OutputShape = predictionShape(a.Input)
		} else if info, err := l.document(a.Type, v); err == nil {
			if err := checkInput(info, a.Input); err != nil {
				return err
			}
			front.OutputShape = info.Shape
		}
		data := map[string]any{"run_id": runID}
		if len(a.Input) > 0 {
			data["input"] = a.Input
		}
		ln := &event.Line{Event: event.RunCreated, Timestamp: event.FormatTime(started), Playbook: d.UID,
			AuthorizedBy: a.AuthorizedBy, Detail: "Run initialized", ID: runID + "_1", Subject: a.Type + "/" + a.Name,
			Version: v.Version, Actor: starter, Run: runID, RequestID: a.RequestID, Data: mustJSON(data)}
		if ln.Seq, err = t.nextSeq(a.Playbook); err != nil {
			return err
		}
		raw, err := ln.Marshal()
		if err != nil {
			return err
		}
		if len(raw) > event.MaxLine {
			return refusal.Invalid("/input", "the input makes the run_created line %d bytes; a line holds at most %d", len(raw), event.MaxLine)
		}
		ctxText := a.Context
		if ctxText == "" {
			ctxText = fmt.Sprintf("# Context\n\nRun of %s/%s, authorized by %s.\n", a.Type, a.Name, a.AuthorizedBy)
		}
		var st *runfolder.State
		seq, err := t.appendEvent(a.Playbook, func(reserve func(string, int64, int) error) error {
			if err := reserve(path.Join(rel, runfolder.LogFile), 0, len(raw)); err != nil {
				return err
			}
			st, err = runfolder.Create(l.v, rel, front, ctxText, ln)
			return err
		})
		if err != nil {
			return err
		}
		e := vault.Entry{UID: runID, Type: "playbook-run", Path: rel, Playbook: a.Playbook, Name: a.Name, DefType: a.Type, Created: event.FormatTime(started)}
		if err := l.v.Register(e); err != nil {
			// Without its index line the run is not made: take the
			// folder back, so the refusal is true and a retry makes
			// one run. (The history drops the reservation whose
			// line is gone.)
			os.RemoveAll(l.v.Abs(rel))
			return err
		}
		// The run is made: from here the answer is a success, and a
		// commit that fails is finished by the next writer.
		out = runOf(e, st)
		out.Committed = boolPtr(t.commitRun(e, runfolder.Folder{V: l.v, Rel: rel}, ln))
		t.notify(a.Playbook, seq)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// recordEvent is the operation record_event (ops.go).
func (l *Ledger) recordEvent(ctx context.Context, a *RecordEventArgs) (*RecordedEvent, error) {
	switch a.Event {
	case event.RunCreated:
		return nil, refusal.Invalid("/event", "run_created is written by run_definition alone")
	case event.Archived:
		return nil, refusal.Invalid("/event", "an archive goes through transition_run with to: archived and its reason")
	case event.RunSucceeded, event.RunRejected, event.RunFailed:
		return nil, refusal.Invalid("/event", "a run's end goes through end_run")
	}
	if !event.IsRunType(a.Event) {
		return nil, refusal.Invalid("/event", "%q is not an event type of the capsule; the types are %s", a.Event, strings.Join(event.Recordable(), ", "))
	}
	if strings.HasPrefix(a.Event, "step_") && a.Step == "" {
		return nil, refusal.Invalid("/step", "a %s event names its step", a.Event)
	}
	if len(a.Step) > 256 {
		return nil, refusal.Invalid("/step", "a step's reference is at most 256 bytes")
	}
	if len(a.Data) > 0 && (!json.Valid(a.Data) || strings.TrimSpace(string(a.Data))[0] != '{') {
		return nil, refusal.Invalid("/data", "data is a JSON object")
	}
	e, f, t, err := l.runWrite(a.Playbook, a.RunID, a.Actor, a.Time)
	if err != nil {
		return nil, err
	}
	ln := &event.Line{Event: a.Event, Timestamp: stamp(t), Step: strPtr(a.Step), Detail: a.Detail, Actor: a.Actor, Data: compact(a.Data), RequestID: a.RequestID}
	st, committed, err := l.appendRun(e, f, ln)
	if err != nil {
		return nil, err
	}
	out := &RecordedEvent{Event: eventOf(a.Playbook, ln)}
	out.Committed = committed
	// A step the document does not have is recorded all the same (the
	// log is the agent's account of what it did), and warned of, from
	// the state the append left (not read again: a third of an
	// append's reads of the run folder).
	if info, err := l.pinnedDocument(e, st); err == nil && info != nil {
		out.Warnings = stepWarning(info.Steps, a.Step)
	}
	return out, nil
}

// RecordedEvent is record_event's answer: the event, and what the caller
// should know of it.
type RecordedEvent struct {
	Event
	Warnings []refusal.Issue `json:"warnings,omitempty" jsonschema:"a step the pinned document does not have"`
}

// appendThread is the operation append_thread (ops.go).
func (l *Ledger) appendThread(ctx context.Context, a *AppendThreadArgs) (*Run, error) {
	if err := checkActor(a.Actor); err != nil {
		return nil, err
	}
	if strings.TrimSpace(a.Text) == "" {
		return nil, refusal.Invalid("/text", "the text is empty")
	}
	// A note's time is the one given, as an event's is (a backfilled
	// run's notes are dated with its events, not after its end); the
	// order of a thread is the order it was written, so no time is
	// refused for being before the last note's.
	e, f, err := l.runFolder(a.Playbook, a.RunID)
	if err != nil {
		return nil, err
	}
	at, err := l.eventTime(a.Time, "/time")
	if err != nil {
		return nil, err
	}
	if len(a.Text) > maxThreadAppend {
		return nil, refusal.Invalid("/text", "the text is %d bytes; append_thread takes at most 64 KiB a call", len(a.Text))
	}
	err = l.write(writeArgs{Request: requestIn(ctx)}, func(t *tx) error {
		t.answerWith(func() (any, error) { return l.readRun(e, f) })
		if err := t.keepIfEnded(f); err != nil {
			return err
		}
		now := at
		if now.IsZero() {
			now = l.Now()
		}
		entry := fmt.Sprintf("## %s, %s\n\n%s", a.Actor, event.FormatTime(now), a.Text)
		if fi, err := os.Stat(l.v.Abs(path.Join(e.Path, runfolder.ThreadFile))); err == nil && fi.Size()+int64(len(entry))+2 > maxThread {
			return refusal.Invalid("/text", "thread.md holds %d bytes and may hold at most 16 MiB; this text would pass it", fi.Size())
		}
		if err := t.touch(path.Join(e.Path, runfolder.ThreadFile), true); err != nil {
			return err
		}
		if err := f.AppendThread(entry); err != nil {
			return err
		}
		return t.commitIfEnded(e, f, a.Actor, now, "thread appended")
	})
	if err != nil {
		return nil, err
	}
	return l.readRun(e, f)
}

// putArtifact is the operation put_artifact (ops.go).
func (l *Ledger) putArtifact(ctx context.Context, a *PutArtifactArgs) (map[string]any, error) {
	content := []byte(a.Content)
	switch a.Encoding {
	case "", "utf-8":
	case "base64":
		var err error
		if content, err = base64.StdEncoding.DecodeString(a.Content); err != nil {
			return nil, refusal.Invalid("/content", "not base64: %v", err)
		}
	default:
		return nil, refusal.Invalid("/encoding", "%q is not utf-8 or base64", a.Encoding)
	}
	if len(content) > MaxArtifact {
		return nil, ArtifactTooLarge("/content", "the artifact", int64(len(content)))
	}
	e, f, err := l.runFolder(a.Playbook, a.RunID)
	if err != nil {
		return nil, err
	}
	// The name is judged before the folder: a name that leads through a
	// link is a bad name (checked again under the lock, as it is written).
	if _, err := f.ArtifactPath(a.Name); err != nil {
		return nil, err
	}
	var rel string
	err = l.write(writeArgs{}, func(t *tx) error {
		if err := t.keepIfEnded(f); err != nil {
			return err
		}
		if rel, err = f.PutArtifact(a.Name, content); err != nil {
			return err
		}
		return t.commitIfEnded(e, f, a.Actor, l.Now(), "artifact "+strings.TrimPrefix(rel, f.Rel+"/artifacts/")+" written")
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"path": rel, "bytes": len(content)}, nil
}

// endRun is the operation end_run (ops.go).
func (l *Ledger) endRun(ctx context.Context, a *EndRunArgs) (*Run, error) {
	e, f, t, err := l.runWrite(a.Playbook, a.RunID, a.Actor, a.Time)
	if err != nil {
		return nil, err
	}
	ln := &event.Line{Timestamp: stamp(t), Actor: a.Actor, Detail: a.Detail, RequestID: a.RequestID}
	var output json.RawMessage
	switch a.Status {
	case "succeeded":
		if len(a.Output) > 0 && !json.Valid(a.Output) {
			return nil, refusal.Invalid("/output", "not JSON")
		}
		if a.Reason != "" || a.Kind != "" {
			return nil, refusal.Invalid("/reason", "reason and kind are for a rejected run")
		}
		output = compact(a.Output)
		misfit, err := l.checkOutput(e, f, output)
		if err != nil {
			return nil, err
		}
		if misfit != nil {
			// An output that does not match its shape (or the
			// definition's output.schema) ends the run rejected.
			output = nil
			ln.Event, ln.Detail = event.RunRejected, "Run rejected: its output does not match the output schema"
			if misfit["kind"] == "not_in_order" {
				ln.Detail = "Run rejected: its answer is not in order"
			}
			ln.Data = mustJSON(misfit)
			break
		}
		ln.Event = event.RunSucceeded
		ln.Detail = "Run succeeded"
		if len(output) > 0 {
			ln.Data = mustJSON(map[string]json.RawMessage{"output": output})
		}
	case "rejected":
		if strings.TrimSpace(a.Reason) == "" {
			return nil, refusal.Invalid("/reason", "a rejected run says why: reason")
		}
		if len(a.Output) > 0 {
			return nil, refusal.Invalid("/output", "only a run that succeeded has an output")
		}
		ln.Event = event.RunRejected
		d := map[string]string{"reason": a.Reason}
		if a.Kind != "" {
			d["kind"] = a.Kind
		}
		if a.Detail != "" {
			d["detail"] = a.Detail
		}
		ln.Data = mustJSON(d)
	case "failed":
		if len(a.Output) > 0 || a.Reason != "" || a.Kind != "" {
			return nil, refusal.Invalid("/status", "a failed run takes no output, reason or kind; detail says what went wrong")
		}
		ln.Event = event.RunFailed
	default:
		return nil, refusal.Invalid("/status", "%q is not succeeded, rejected or failed", a.Status)
	}
	big := false
	if raw, _ := ln.Marshal(); len(raw) > event.MaxLine-1024 {
		// Too large for its event: keep it whole beside the log.
		big = true
		ln.Data = mustJSON(map[string]any{"output_size": len(output), "output_ref": runfolder.ArtifactsDir + "/" + runfolder.OutputArtifact})
	}
	var st *runfolder.State
	if big {
		err = l.write(writeArgs{Keeps: []string{e.Path}}, func(*tx) error {
			cur, err := f.LoadState()
			if err != nil {
				return err
			}
			if err := cur.Check(ln); err != nil {
				return err
			}
			_, err = f.PutArtifact(runfolder.OutputArtifact, output)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	st, committed, err := l.appendRunWith(e, f, ln, func(st *runfolder.State) error {
		if big {
			st.Output = output
			return f.WriteState(st)
		}
		return nil
	})
	return answerRun(e, st, committed, err)
}

// cancelRun is the operation cancel_run (ops.go).
func (l *Ledger) cancelRun(ctx context.Context, a *CancelRunArgs) (*Run, error) {
	e, f, t, err := l.runWrite(a.Playbook, a.RunID, a.Actor, a.Time)
	if err != nil {
		return nil, err
	}
	d := map[string]string{"kind": "cancelled"}
	if a.Detail != "" {
		d["detail"] = a.Detail
	}
	ln := &event.Line{Event: event.RunFailed, Timestamp: stamp(t), Actor: a.Actor, Detail: "Run cancelled", Data: mustJSON(d)}
	st, committed, err := l.appendRun(e, f, ln)
	return answerRun(e, st, committed, err)
}

// transitionRun is the operation transition_run (ops.go).
func (l *Ledger) transitionRun(ctx context.Context, a *TransitionRunArgs) (*Run, error) {
	if a.Actor == janitor {
		return nil, refusal.Invalid("/actor", "%s is reserved for quire janitor", janitor)
	}
	e, f, t, err := l.runWrite(a.Playbook, a.RunID, a.Actor, a.Time)
	if err != nil {
		return nil, err
	}
	ln := &event.Line{Timestamp: stamp(t), Actor: a.Actor, RequestID: a.RequestID}
	switch a.To {
	case runfolder.Paused:
		ln.Event, ln.Detail = event.PauseStarted, "Paused"
		// The reason is the pause's data, as an escalate's kind, stage
		// and summary are, so that get_run's paused says it.
		if a.Reason != "" {
			ln.Data = mustJSON(Pause{Reason: a.Reason})
		}
	case runfolder.Active:
		ln.Event, ln.Detail = event.PauseResumed, "Resumed"
	case runfolder.Archived:
		if st, err := f.LoadState(); err == nil && st.State == runfolder.Archived {
			// Said before the missing reason: a second archive has
			// nothing to give one for.
			return nil, refusal.New(refusal.Conflict, "run %s is already archived", a.RunID)
		}
		if strings.TrimSpace(a.Reason) == "" {
			return nil, refusal.Invalid("/reason", "an archive needs its reason, written to run.jsonl first")
		}
		ln.Event, ln.Detail, ln.Reason = event.Archived, "Archived: "+a.Reason, a.Reason
	case runfolder.Complete, runfolder.Failed:
		return nil, refusal.Invalid("/to", "a run completes or fails through end_run, which records its output or reason")
	default:
		return nil, refusal.Invalid("/to", "%q is not paused, active or archived", a.To)
	}
	if a.Reason != "" && ln.Reason == "" {
		ln.Detail += ": " + a.Reason
	}
	st, committed, err := l.appendRun(e, f, ln)
	return answerRun(e, st, committed, err)
}

// getRun is the operation get_run (ops.go).
func (l *Ledger) getRun(ctx context.Context, a *GetRunArgs) (*Run, error) {
	if err := checkFormat(a.Format); err != nil {
		return nil, err
	}
	e, f, err := l.runFolder(a.Playbook, a.RunID)
	if err != nil {
		return nil, err
	}
	st, err := f.LoadState()
	if err != nil {
		return nil, err
	}
	r := runOf(e, st)
	if r.Input, err = f.Input(); err != nil {
		return nil, err
	}
	if info, err := l.pinnedDocument(e, st); err == nil && info != nil {
		if r.Steps, err = runSteps(info.Steps, f); err != nil {
			return nil, err
		}
	}
	if r.Page, err = l.runPage(e, st, a.Blocks, a.Format); err != nil {
		return nil, err
	}
	return r, nil
}

// appendRunWith is appendRun with a step, after, run under the same lock
// once the event is written and before the commit.
//
// Once the line is durable it returns the state and, at a boundary,
// whether the commit was made; an error means the event was not recorded.
func (l *Ledger) appendRunWith(e vault.Entry, f runfolder.Folder, ln *event.Line, after func(*runfolder.State) error) (*runfolder.State, *bool, error) {
	var st *runfolder.State
	var committed *bool
	// A boundary commits the run's folder: what was committed of it must
	// still hold. An event between boundaries commits nothing, and is not
	// made to read the whole log (its boundary checks it).
	var keeps []string
	if event.IsBoundary(ln.Event) {
		keeps = []string{f.Rel}
	}
	err := l.write(writeArgs{Playbook: e.Playbook, RequestID: ln.RequestID, Keeps: keeps}, func(t *tx) error {
		// Lines written by hand at the end of the log are numbered first.
		if err := t.adoptLines(e.Playbook, path.Join(f.Rel, runfolder.LogFile)); err != nil {
			return err
		}
		var err error
		if ln.Seq, err = t.nextSeq(e.Playbook); err != nil {
			return err
		}
		cur, err := f.LoadState()
		if err != nil {
			return err
		}
		if ln.Timestamp == "" {
			// No time given: the clock, read under the lock, so writers
			// queued on it stay in order. A previous event timed ahead of
			// the clock (by MaxAhead at most) is not gone back from.
			now := l.Now()
			if prev, ok := cur.PreviousTime(now); ok && now.Before(prev) {
				now = prev
			}
			ln.Timestamp = event.FormatTime(now)
		}
		ln.ID = fmt.Sprintf("%s_%d", cur.RunID, cur.Events+1)
		ln.Run, ln.Subject, ln.Version = cur.RunID, cur.Type+"/"+cur.Name, cur.Version
		file := path.Join(f.Rel, runfolder.LogFile)
		seq, err := t.appendEvent(e.Playbook, func(reserve func(string, int64, int) error) error {
			var err error
			st, err = f.AppendTo(cur, ln, l.Now(), func(off int64, n int) error { return reserve(file, off, n) })
			return err
		})
		if err != nil {
			return err
		}
		// The line is durable: the event happened, and the answer says so
		// whatever follows (run.state.json is derived from run.jsonl and a
		// commit that fails is finished by the next writer).
		t.notify(e.Playbook, seq)
		if after != nil {
			if err := after(st); err != nil {
				// The event is recorded all the same; what after wrote is
				// derived (run.state.json), made again at the next boundary.
				l.v.Logf("%s: after %s: %v", f.Rel, ln.ID, err)
			}
		}
		if event.IsBoundary(ln.Event) {
			committed = boolPtr(t.commitRun(e, f, ln))
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return st, committed, nil
}

func boolPtr(b bool) *bool { return &b }

// runState finds a run of a playbook and reads where it stands.
func (l *Ledger) runState(playbook, runID string) (vault.Entry, *runfolder.State, error) {
	e, f, err := l.runFolder(playbook, runID)
	if err != nil {
		return e, nil, err
	}
	st, err := f.LoadState()
	return e, st, err
}

func (l *Ledger) readRun(e vault.Entry, f runfolder.Folder) (*Run, error) {
	st, err := f.LoadState()
	if err != nil {
		return nil, err
	}
	return runOf(e, st), nil
}

// predictionShape is the shape of a run of a prediction function: a
// question answers a series, a build (an input object with "build": true,
// whose output is { version, winner, candidates }) answers none.
func predictionShape(input json.RawMessage) string {
	var in struct {
		Build bool `json:"build"`
	}
	if json.Unmarshal(input, &in) == nil && in.Build {
		return ""
	}
	return "series"
}

// checkOutput checks a succeeded run's output against the shape (or the
// output.schema) of the version the run pinned. A misfit comes back as the
// data of the run_rejected that ends the run, as output-shapes.md says: a
// computation function's or a workflow's is conflict of the kind
// unworkable with at most three issues, a reasoning function's is
// output_invalid with at most 20; each issue at its JSON pointer in the
// output.
//
// A question to a prediction function (its run says series) declares no
// shape and answers a series all the same: checked against the shape as a
// computation's output is, except that a point whose low is above its
// likely value or whose high is below it ends the run unavailable, because
// not_in_order (output-shapes.md). A build answers no shape.
func (l *Ledger) checkOutput(e vault.Entry, f runfolder.Folder, output json.RawMessage) (map[string]any, error) {
	st, err := f.LoadState()
	if err != nil {
		return nil, err
	}
	var info *docInfo
	if st.Type == "prediction" {
		if st.OutputShape != "series" {
			return nil, nil
		}
		info = &docInfo{Shape: "series"}
	} else if info, err = l.pinnedDocument(e, st); err != nil || info == nil || (info.Shape == "" && info.Schema == nil) {
		return nil, err
	}
	if len(output) == 0 {
		output = json.RawMessage("null")
	}
	max, reason, kind, whose := 3, "conflict", "unworkable", "The program's output"
	switch st.Type {
	case "reasoning":
		max, reason, kind, whose = 20, "output_invalid", "", "The model's answer"
	case "workflow":
		whose = "The workflow's output"
	}
	if st.Type == "prediction" {
		// Out of order is the prediction's own end (the shape's check
		// would call it a misfit): unavailable, because not_in_order.
		if at := outOfOrder(output); at != "" {
			return map[string]any{"reason": "unavailable", "kind": "not_in_order",
				"detail": "The prediction's answer is not in order: at " + at + " the low is above the likely value or the high below it.",
				"issues": []refusal.Issue{{Path: at, Message: "Expected low <= value <= high."}}}, nil
		}
	}
	issues := checkAgainst(info, output, max)
	if len(issues) == 0 {
		return nil, nil
	}
	words := make([]string, len(issues))
	for i, is := range issues {
		words[i] = strings.TrimSuffix(is.Message, ".")
		if is.Path != "" {
			words[i] = is.Path + ": " + words[i]
		}
	}
	misfit := map[string]any{"reason": reason,
		"detail": whose + " does not match the output schema: " + strings.Join(words, "; ") + ".", "issues": issues}
	if kind != "" {
		misfit["kind"] = kind
	}
	return misfit, nil
}

// outOfOrder answers the pointer of the first point of a series whose low
// is above its value or whose high is below it, or "".
func outOfOrder(series json.RawMessage) string {
	var s struct {
		Lines []struct {
			Points []struct {
				Value float64  `json:"value"`
				Low   *float64 `json:"low"`
				High  *float64 `json:"high"`
			} `json:"points"`
		} `json:"lines"`
	}
	if json.Unmarshal(series, &s) != nil {
		return ""
	}
	for i, ln := range s.Lines {
		for j, p := range ln.Points {
			if p.Low != nil && *p.Low > p.Value || p.High != nil && *p.High < p.Value {
				return fmt.Sprintf("/lines/%d/points/%d", i, j)
			}
		}
	}
	return ""
}

// pinnedDocument reads the document of the version a run pinned.
func (l *Ledger) pinnedDocument(e vault.Entry, st *runfolder.State) (*docInfo, error) {
	defs, err := l.definitions(e.Playbook)
	if err != nil {
		return nil, err
	}
	d := defs[st.Type+"/"+st.Name]
	if d == nil || st.Version < 1 || st.Version > len(d.Versions) {
		return nil, nil
	}
	return l.document(st.Type, d.Versions[st.Version-1])
}

const janitor = runfolder.Janitor

func checkActor(a string) error {
	if !event.IsPrincipal(a) {
		return refusal.Invalid("/actor", "the acting principal is 1 to 200 characters on one line")
	}
	return nil
}

// compact removes insignificant white space from JSON, so a line stays one line.
func compact(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return raw
	}
	return buf.Bytes()
}
