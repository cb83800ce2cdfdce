// Package remotestate keeps what a long-lived process knows of a git
// remote it pushes to or follows (ledger/mirror, ledger/follow): one JSON
// file a remote in a folder under .quire/ (derived, never committed),
// written atomically so another process (quire status) reads it whole.
package remotestate

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"quire/internal/atomicfile"
)

func path(dir, name string) string { return filepath.Join(dir, name+".json") }

// Read reads the state kept of the remote name in dir into v.
func Read(dir, name string, v any) error {
	data, err := os.ReadFile(path(dir, name))
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// Write keeps v as the state of the remote name in dir; a write that
// fails leaves the last one (the state is derived).
func Write(dir, name string, v any) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil || os.MkdirAll(dir, 0o755) != nil {
		return
	}
	_ = atomicfile.Write(path(dir, name), append(data, '\n'))
}

// Forget throws away the state of the remote name in dir.
func Forget(dir, name string) { os.Remove(path(dir, name)) }

// Stamp is a time as the states say it.
func Stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// Sleep waits d, or less when ctx ends first; it reports whether ctx is
// still going.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
