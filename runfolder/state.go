package runfolder

import (
	"encoding/json"
	"fmt"
	"time"

	"quire/words/event"
	"quire/words/refusal"
)

// Janitor is the principal of quire janitor.
const Janitor = "vault-janitor"

// States of the capsule's state machine.
const (
	Active   = "active"
	Paused   = "paused"
	Complete = "complete"
	Failed   = "failed"
	Archived = "archived"
)

// State is run.state.json: the typed resumption anchor.
type State struct {
	RunID        string          `json:"run_id"`
	Playbook     string          `json:"playbook"`
	Type         string          `json:"type"`
	Name         string          `json:"name"`
	Version      int             `json:"playbook_version"`
	State        string          `json:"state"`
	Status       string          `json:"status"`
	Executor     string          `json:"executor"`
	AuthorizedBy string          `json:"authorized_by"`
	CurrentStep  *string         `json:"current_step"`
	StepsSeen    []string        `json:"steps_seen"`
	Events       int             `json:"events"`
	LastSeq      int64           `json:"last_seq"`
	LastEventAt  string          `json:"last_event_at"`
	LogBytes     int64           `json:"log_bytes"`
	Started      string          `json:"started"`
	Ended        string          `json:"ended,omitempty"`
	Output       json.RawMessage `json:"output,omitempty"`
	OutputShape  string          `json:"output_shape,omitempty"`
	Reason       string          `json:"reason,omitempty"`
	Kind         string          `json:"kind,omitempty"`
	Detail       string          `json:"detail,omitempty"`
	// Issues are what a rejected run's output got wrong, at their JSON
	// pointers in the output (an output that does not match its shape).
	Issues      []refusal.Issue `json:"issues,omitempty"`
	ArchivedWhy string          `json:"archived_reason,omitempty"`
	// Paused is, while the run is paused, the data of the pause_started
	// that paused it: what it waits for (an AgentRun escalate's kind,
	// stage and summary).
	Paused json.RawMessage `json:"paused,omitempty"`
}

// StatusOf maps a state to the run status of DESIGN.md; archived keeps the
// status it had.
func statusOf(state, prev string) string {
	switch state {
	case Active, Paused:
		return "started"
	case Complete:
		return "succeeded"
	}
	return prev
}

// Check says whether the line may follow the run's state, by the state
// machine and rule 4 (only the executor or authorized_by transitions). It
// does not change s.
func (s *State) Check(l *event.Line) error {
	if s.State == Archived {
		return refusal.At(refusal.Conflict, "/run_id", "rule 5: run %s is archived, and archived runs are read-only: to go on with the work, start a new run", s.RunID)
	}
	transition := ""
	switch l.Event {
	case event.RunCreated:
		return refusal.At(refusal.Conflict, "/event", "run %s already has its run_created event", s.RunID)
	case event.PauseStarted:
		if s.State != Active {
			return refusal.New(refusal.Conflict, "run %s is %s; only an active run can pause", s.RunID, s.State)
		}
		transition = Paused
	case event.PauseResumed:
		if s.State != Paused {
			return refusal.New(refusal.Conflict, "run %s is %s; only a paused run can resume", s.RunID, s.State)
		}
		transition = Active
	case event.RunSucceeded:
		if s.State != Active && s.State != Paused {
			return refusal.New(refusal.Conflict, "run %s is %s; only an active or paused run can complete", s.RunID, s.State)
		}
		transition = Complete
	case event.RunFailed, event.RunRejected:
		if s.State != Active {
			return refusal.New(refusal.Conflict, "run %s is %s; only an active run can fail (resume a paused run first)", s.RunID, s.State)
		}
		transition = Failed
	case event.Archived:
		if l.Reason == "" {
			return refusal.Invalid("/reason", "an archive needs its reason, written to run.jsonl first")
		}
		transition = Archived
	default:
		if !event.IsRunType(l.Event) {
			return refusal.Invalid("/event", "%q is not an event type of a run; the types are %v", l.Event, event.RunTypes)
		}
		if s.State != Active {
			return refusal.New(refusal.Conflict, "run %s is %s; step events need an active run", s.RunID, s.State)
		}
	}
	// The capsule's vault-janitor archives complete and failed runs idle
	// for 90 days; the ledger reserves that name for it.
	janitor := l.Event == event.Archived && l.Actor == Janitor && (s.State == Complete || s.State == Failed)
	if transition != "" && !janitor && l.Actor != s.Executor && l.Actor != s.AuthorizedBy {
		return refusal.At(refusal.Forbidden, "/actor",
			"rule 4: only the executor (%s) or authorized_by (%s) may move run %s to %s; %q may not",
			s.Executor, s.AuthorizedBy, s.RunID, transition, l.Actor)
	}
	return nil
}

// Apply folds one line of run.jsonl into the state. size is the line's
// length in bytes.
func (s *State) Apply(l *event.Line, size int) {
	s.Events++
	if l.Seq > 0 {
		s.LastSeq = l.Seq
	}
	s.LastEventAt = l.Timestamp
	s.LogBytes += int64(size)
	if l.Step != nil && *l.Step != "" {
		step := *l.Step
		s.CurrentStep = &step
		seen := false
		for _, x := range s.StepsSeen {
			if x == step {
				seen = true
				break
			}
		}
		if !seen {
			s.StepsSeen = append(s.StepsSeen, step)
		}
	}
	var d struct {
		Output json.RawMessage `json:"output"`
		Reason string          `json:"reason"`
		Kind   string          `json:"kind"`
		Detail string          `json:"detail"`
		Issues []refusal.Issue `json:"issues"`
	}
	if len(l.Data) > 0 {
		_ = json.Unmarshal(l.Data, &d)
	}
	switch l.Event {
	case event.RunCreated:
		s.State, s.Status = Active, "started"
		s.Started = l.Timestamp
	case event.PauseStarted:
		s.State = Paused
		if len(l.Data) > 0 && string(l.Data) != "{}" && string(l.Data) != "null" {
			s.Paused = l.Data
		}
	case event.PauseResumed:
		s.State = Active
	case event.RunSucceeded:
		s.State, s.Status, s.Ended = Complete, "succeeded", l.Timestamp
		if len(d.Output) > 0 {
			s.Output = d.Output
		}
	case event.RunFailed:
		s.State, s.Status, s.Ended = Failed, "failed", l.Timestamp
		// A failure may say its kind, such as cancelled (cancel_run).
		s.Kind, s.Detail = d.Kind, d.Detail
	case event.RunRejected:
		s.State, s.Status, s.Ended = Failed, "rejected", l.Timestamp
		s.Reason, s.Kind, s.Detail, s.Issues = d.Reason, d.Kind, d.Detail, d.Issues
	case event.Archived:
		s.State = Archived
		s.ArchivedWhy = l.Reason
	}
	if s.State != Paused {
		s.Paused = nil
	}
	s.Status = statusOf(s.State, s.Status)
}

// initial is the state a run starts from, before its first line: who it
// is, from definition.md's front matter.
func initial(fr Front) *State {
	st := &State{RunID: fr.UID, Playbook: fr.QuirePlaybook, Type: fr.DefinitionType, Name: fr.DefinitionName,
		Executor: fr.Executor, AuthorizedBy: fr.AuthorizedBy, StepsSeen: []string{}}
	fmt.Sscan(fr.PlaybookVersion, &st.Version)
	return st
}

// agrees says how s disagrees with what definition.md says of the run, or
// "" when it does not.
func (s *State) agrees(fr Front) string {
	want := initial(fr)
	switch {
	case s.RunID != want.RunID:
		return fmt.Sprintf("names run %s; definition.md names %s", s.RunID, want.RunID)
	case s.Executor != want.Executor || s.AuthorizedBy != want.AuthorizedBy:
		return fmt.Sprintf("says executor %s, authorized_by %s; definition.md says %s, %s", s.Executor, s.AuthorizedBy, want.Executor, want.AuthorizedBy)
	case s.Type != want.Type || s.Name != want.Name || s.Version != want.Version:
		return fmt.Sprintf("says %s/%s at version %d; definition.md says %s/%s at version %d", s.Type, s.Name, s.Version, want.Type, want.Name, want.Version)
	}
	return ""
}

// PreviousTime is the time of the run's last event as it binds the next
// one (which may not go back from it), and false when there is none: a
// last event dated more than event.MaxAhead after now (a line written by
// hand, or on a clock far ahead) does not bind, so the events after it
// are timed by the clock and a true time is not refused.
func (s *State) PreviousTime(now time.Time) (time.Time, bool) {
	prev, err := event.ParseTime(s.LastEventAt)
	if s.LastEventAt == "" || err != nil || prev.Sub(now) > event.MaxAhead {
		return time.Time{}, false
	}
	return prev, true
}
