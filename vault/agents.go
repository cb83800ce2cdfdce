package vault

// agentsMD is playbook-runs/AGENTS.md, the governance an agent reads before
// it writes a run folder.
const agentsMD = `# Run folders: read this before you write one

Every folder here is one run: one execution of one definition of a playbook,
at the version it pinned when it started. People review this history in git,
so it has to stay exactly as the runs wrote it.

## What a run folder holds

    definition.md    who and what: YAML front matter (playbook, playbook_version,
                     member_of, binding, started, executor, authorized_by), then notes
    context.md       what this run is for, written when it was authorized
    thread.md        working memory for whoever continues the run; append only
    run.jsonl        the event log, one JSON object per line; append only
    run.state.json   where the run stands, rewritten whole at every boundary
    artifacts/       the files the run produced

A folder is named <definition>-<run_id>-<YYYY-MM-DD>, and vault/00-index.jsonl
lists it with type playbook-run.

## The rules, which quire enforces on every write

1. Every run belongs to at least one project: member_of is never empty, and
   each entry is a project in vault/00-index.jsonl.
2. playbook_version is fixed when the run starts. The run finishes on the
   version it started with, whatever is saved afterwards.
3. run.jsonl and thread.md are only ever appended to. Never edit or remove a
   line; to correct one, append an event that says so. run.state.json is
   rewritten at boundaries and never trimmed.
4. Only the run's executor or the principal who authorized it may move it from
   one state to another (pause, resume, complete, fail, archive).
5. An archived run is read-only. To go on with the work, start a new run.

States: active -> paused -> active; active -> complete; active -> failed;
paused -> complete; complete or failed -> archived; any -> archived with a
reason, written to run.jsonl as an archived event first.

## How to write

Write through quire, not by hand: quire run start, quire run event,
quire run thread, quire run artifact, quire run end (or the same operations
over HTTP and MCP; quire call lists them). quire numbers every event, fsyncs
it before it answers, and commits the folder to git at every boundary (a step
completed, failed, skipped or dead-lettered, a pause, a resume, a milestone, a
verification receipt, compensation, the run's end, an archive).

With only files, append one line to run.jsonl in the capsule's minimal form,
{"event": "<type>", "timestamp": "YYYY-MM-DDTHH:MM", "step": "<step or null>",
"detail": "<text>"}, ending in a newline. quire gives it its place in the
playbook's history (its seq) and its id, <run_id>_<n> for the nth event of
run.jsonl, when it next writes or reads the run.

A step is named as the workflow's document names it: get_definition answers
the steps (do/0/work in a YAML workflow), and get_run which of them the run
has done. A step the pinned document does not have is recorded with a warning.

To resume a run: read definition.md, then run.state.json, then the events of
run.jsonl after its last_seq, then thread.md. Check your work with quire check.

## Recording a run of an AgentRun workflow

An AgentRun workflow (a definition/workflow/<name>.json with "v": 2) is
executed by an agent host, not by quire; you record what it did. Before you
start, quire definition inspect FILE (or inspect_workflow) shows the state
keys each node produces; try_code runs one code node over a state you give.

- Start with run_definition, its input the workflow's input.
- Each node is a step named by its label path: the labels from root down,
  joined by /, such as evidence-gate/check-support. Record step_started when
  it begins, step_completed (data: what it stored, under which key) or
  step_failed (data: the error) when it ends.
- Record call_record for each tool call (data: the tool, its arguments, how
  long it took, its result or a reference to an artifact).
- An escalate that fires pauses the run: record pause_started with its step
  and data {"kind", "stage", "summary"}; get_run then answers them as paused.
  Whoever settles it records pause_resumed.
- End with end_run: succeeded with the value at output.path as output. It is
  checked against output.schemaId's schema; a value that does not match ends
  the run rejected (conflict, unworkable) with each issue at its pointer.

For example, the evidence gate whose judge is not sure enough (then the
events as record_event, or quire run event, records them):

    quire run start --playbook finance --name evidence-gate --input '{"record": {...}}' \
      --member-of <project> --executor agent-7 --authorized-by ana
    {"event":"step_started","step":"evidence-gate/check-support"}
    {"event":"call_record","step":"evidence-gate/check-support","data":{"tool":"jev.judge","duration_ms":812}}
    {"event":"step_completed","step":"evidence-gate/check-support","data":{"as":"check","value":{"supported":true}}}
    {"event":"step_completed","step":"evidence-gate/gate-probability","data":{"as":"gate","value":{"accepted":false}}}
    {"event":"pause_started","step":"evidence-gate/evidence-not-supported",
     "data":{"kind":"needs_review","stage":"evidence","summary":"The evidence does not clearly support the claim."}}
`
