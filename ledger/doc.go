// Package ledger is the runtime: the one table of operations that every
// door (the CLI, HTTP, MCP, the browser's pages) calls, and the one write
// transaction every write goes through. It reads and writes the vault
// through runfolder and vault, and hands plain values to fold and render.
//
// Where things are:
//
//   - ops.go: the table, operations() listing every operation with its
//     scope, HTTP route, description and hints beside its handler, a
//     method of Ledger spelled as the operation (run_definition:
//     runDefinition) in the file of its noun: runs.go (a run's life),
//     definitions.go (projects, playbooks, definitions), documents.go (a
//     definition's document and a playbook's page), events.go (the
//     playbook's events), list.go (list_runs), pages.go (render_page and
//     the keeper's pages), comments.go and activity.go (their handlers),
//     agentrun_ops.go (inspect_workflow, try_code), address_ops.go,
//     ops_runfiles.go (a run's files and commits), check.go (check_vault,
//     repair_vault, archive_idle_runs).
//   - tx.go: the write transaction (the lock, the request id under it, the
//     check that what was committed still holds, numbering, commit or
//     pending, notify). Everything that needs the lock takes a *tx; no
//     other code takes it (onelock_test.go).
//   - requests.go: request ids, so that a retry answers the first answer.
//   - histories.go, views.go: the ledger's side of the playbook's history
//     (package ledger/history) and of the pages' views (package fold's
//     keeper).
//   - doors.go: the little the doors may ask of the vault besides the
//     operations (its folder, quire.yaml, a run's file for a download).
//
// The rooms below it, each importing nothing of the ledger (the ledger
// implements the interfaces they define): ledger/history (the playbook's
// sequence, hand-written lines, git stamp, pending commits),
// ledger/checker (check, check --history, the janitor's repair),
// ledger/comments and ledger/activity, ledger/pagecheck (a page's check
// at save). The words every layer shares are under words/.
// docs/architecture.md draws it and says where a change goes.
package ledger
