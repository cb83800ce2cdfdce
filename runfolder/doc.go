// Package runfolder is one run folder as the playbook-run capsule sets it
// out: its six entries, the front matter of definition.md, the event lines
// of run.jsonl, run.state.json, and the state machine and governance rules
// that every write obeys. It writes through the vault's helpers and knows
// nothing of playbooks' histories or of other runs: the caller (ledger)
// holds the vault's lock, numbers the events and commits.
//
// Decisions where the capsule is silent:
//   - definition.md is the run's identity and is written once: state lives in
//     run.state.json, never in definition.md, so rule 2 (the version never
//     changes) holds by construction.
//   - binding is the path of the definition's file in the vault.
//   - artifacts/ holds a .gitkeep so that git keeps the empty folder.
//   - run.state.json carries log_bytes, how much of run.jsonl it reflects; a
//     writer replays only the lines after it (the events since the last
//     boundary), so a crash between an event and its state write loses
//     nothing.
package runfolder
