// Package ledger is the runtime: the one table of operations that every
// interface (CLI, HTTP, MCP) calls, over definitions, runs, the playbook's
// history, comments and activity. It reads and writes through runfolder and
// vault, and hands plain values to fold and render.
package ledger
