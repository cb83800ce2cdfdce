package main

import (
	"context"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"quire/internal/crashpoint"
	"quire/ledger"
)

// Compaction from the CLI. A CLI command is a short-lived process: the
// compaction its commit makes due (vault/compact.go: 64 MiB of loose
// objects written since the last one, by any process, or git's estimate
// of 1,024 loose objects) would hold the command at its end for as long
// as the compaction takes, seconds on a large vault. So the command starts
// quire again, detached (its own session, no standard streams), with
// QUIRE_COMPACT_WORKER naming the vault, and answers at once; that process
// compacts if no other compaction of the vault is under way and leaves,
// as git's gc --auto does in the background. quire serve, quire mcp and
// the resident engine compact in their own background instead.

// compactWorkerEnv names the vault a compaction worker compacts.
const compactWorkerEnv = "QUIRE_COMPACT_WORKER"

// compactIfWorker, first thing in main: started as a compaction worker,
// quire compacts and exits here.
func compactIfWorker() {
	if root := os.Getenv(compactWorkerEnv); root != "" {
		os.Exit(compactWorker(root))
	}
}

func compactWorker(root string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	l, err := ledger.Open(root)
	if err != nil {
		return 1
	}
	defer l.Close()
	l.SetCompactContext(ctx)
	if l.CompactIfDue(ctx) != nil {
		return 1
	}
	return 0
}

// compactElsewhere starts a compaction worker for the vault at root.
func compactElsewhere(root string) func() error {
	return func() error {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		cmd := exec.Command(exe)
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, compactWorkerEnv+"=") && !strings.HasPrefix(kv, crashpoint.Env+"=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, compactWorkerEnv+"="+root)
		cmd.Dir = root
		detach(cmd)
		if err := cmd.Start(); err != nil {
			return err
		}
		if w := workersForTests; w != nil {
			w.Add(1)
			go func() { defer w.Done(); cmd.Wait() }()
			return nil
		}
		return cmd.Process.Release()
	}
}

// workersForTests, set by this package's tests alone, is told of each
// worker started, so that a test waits for it before its vault is
// removed: a worker still packing the vault's loose objects as the test's
// folder was removed made the removal fail (TestVaultOfFormat1OpensAndReads,
// under load).
var workersForTests interface {
	Add(delta int)
	Done()
}
