package event

// The capsule's standard event types, and the ends of a run (DESIGN.md).
const (
	RunCreated                = "run_created"
	StepStarted               = "step_started"
	StepCompleted             = "step_completed"
	StepFailed                = "step_failed"
	StepRetrying              = "step_retrying"
	StepDeadLetter            = "step_dead_letter"
	StepInDoubt               = "step_in_doubt"
	StepSkipped               = "step_skipped"
	PauseStarted              = "pause_started"
	PauseResumed              = "pause_resumed"
	MilestoneFired            = "milestone_fired"
	CallRecord                = "call_record"
	VerificationReceipt       = "verification_receipt"
	CompensationStarted       = "compensation_started"
	CompensationStepCompleted = "compensation_step_completed"
	CompensationStepFailed    = "compensation_step_failed"
	Archived                  = "archived"
	RunSucceeded              = "run_succeeded"
	RunRejected               = "run_rejected"
	RunFailed                 = "run_failed"

	// The playbook's own events, in playbooks/<playbook>/events.jsonl.
	DefinitionSaved   = "definition_saved"
	DefinitionRetired = "definition_retired"
	PlaybookCreated   = "playbook_created"
	PlaybookUpdated   = "playbook_updated"
	PlaybookPageSaved = "playbook_page_saved"
	CommentMade       = "comment_made"
	CommentResolved   = "comment_resolved"
)

// RunTypes are the types a run's log holds, in the capsule's order.
var RunTypes = []string{
	RunCreated, StepStarted, StepCompleted, StepFailed, StepRetrying, StepDeadLetter,
	StepInDoubt, StepSkipped, PauseStarted, PauseResumed, MilestoneFired, CallRecord,
	VerificationReceipt, CompensationStarted, CompensationStepCompleted,
	CompensationStepFailed, Archived, RunSucceeded, RunRejected, RunFailed,
}

// Recordable are the types record_event takes, in the capsule's order: a
// run's types but those that create, archive or end a run, which go
// through operations of their own (run_definition, transition_run,
// end_run). Its refusal and the schemas of its event argument list these.
func Recordable() []string {
	var out []string
	for _, t := range RunTypes {
		switch t {
		case RunCreated, Archived, RunSucceeded, RunRejected, RunFailed:
		default:
			out = append(out, t)
		}
	}
	return out
}

var boundary = map[string]bool{
	RunCreated: true, StepCompleted: true, StepFailed: true, StepSkipped: true,
	StepDeadLetter: true, PauseStarted: true, PauseResumed: true, MilestoneFired: true,
	VerificationReceipt: true, CompensationStarted: true, CompensationStepCompleted: true,
	CompensationStepFailed: true, RunSucceeded: true, RunRejected: true, RunFailed: true,
	Archived: true,
}

// IsBoundary reports whether an event of this type ends a group: the run's
// state is written and the vault committed after it.
func IsBoundary(typ string) bool { return boundary[typ] }

// IsRunType reports whether typ is a type a run's log may hold.
func IsRunType(typ string) bool {
	for _, t := range RunTypes {
		if t == typ {
			return true
		}
	}
	return false
}
