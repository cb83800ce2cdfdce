package main

import (
	"os"
	"path/filepath"
	"runtime/debug"
)

// serveMemoryFloor is the least soft memory limit quire serve sets
// (servedMemoryLimit).
const serveMemoryFloor = 224 << 20

// setServeMemoryLimit gives quire serve a soft memory limit
// (debug.SetMemoryLimit) sized from what it holds, unless GOMEMLIMIT
// sets one: three times the files it reads into its heap, and never under
// 224 MiB. Those files are .git/index (whole when git wrote it whole; a
// split index's own file may hold git's untracked cache, which stays in
// the file, so it is counted over) and the vault's index of runs: about
// 33 MB at 100,000 runs with a split index. A split index's shared index
// is not counted: it is mapped, its pages out of the resident set
// (vault/gitindex.go), and counting it (47 MB at 100,000 runs) let the
// heap grow past what the 300 MB target leaves it. Go's collector
// otherwise lets the heap grow to twice what is live (GOGC=100) before it
// collects, and what a boundary allocates and drops at 100,000 runs (a 10
// MB tree written whole, a compaction's window) took the server to
// 700-1,000 MB resident over a live heap of 300 MB (issue 28). Below the
// limit the collector behaves as without it; near it, it collects more
// often, and it lets the heap pass it rather than stall (a soft limit).
// docs/architecture.md, "What quire serve keeps in memory", has the
// figures. It answers the limit set, 0 when none.
func setServeMemoryLimit(root string) int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	limit := servedMemoryLimit(root)
	debug.SetMemoryLimit(limit)
	return limit
}

// servedMemoryLimit is the limit setServeMemoryLimit sets for the vault at
// root.
func servedMemoryLimit(root string) int64 {
	size := func(p string) int64 {
		if fi, err := os.Stat(p); err == nil {
			return fi.Size()
		}
		return 0
	}
	held := size(filepath.Join(root, ".git", "index")) + size(filepath.Join(root, "vault", "00-index.jsonl") /* vault.IndexFile */)
	return max(serveMemoryFloor, 3*held)
}
