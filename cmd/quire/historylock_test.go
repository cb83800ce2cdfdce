package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire/internal/fsys"
)

// A read that finds no history of its playbook (.quire/ removed by hand,
// a history git took lines back from) builds it as a write does, under
// the vault's lock: while another process holds the lock, the read waits
// and writes nothing into .quire/history, and answers once it is free.
// Before, the read rebuilt the history without the lock, beside the
// writes of its own process: quire serve --follow's keeper met a write's
// state made anew under it and the server stopped ("assignment to entry
// in nil map").
func TestAReadBuildsTheHistoryUnderTheLock(t *testing.T) {
	t.Parallel()
	dir, v, _ := newCLIVault(t)
	if code, out, errs := quire(t, "", v, "call", "create_playbook", "--args", `{"playbook":"finance","name":"Finance"}`); code != 0 {
		t.Fatalf("create_playbook: %d %s %s", code, out, errs)
	}
	// The playbook's history is removed, git's stamp kept: the read has
	// nothing of git's to follow first.
	hist := filepath.Join(dir, ".quire", "history")
	built, _ := filepath.Glob(filepath.Join(hist, "finance.*"))
	if len(built) == 0 {
		t.Fatal("create_playbook built no history of finance")
	}
	for _, p := range built {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".git", "quire.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := fsys.Lock(lock); err != nil {
		t.Fatal(err)
	}
	cmd := quireProcess(nil, "--vault", dir, "call", "list_playbook_events", "--args", `{"playbook":"finance"}`)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		t.Fatalf("the read answered while another process held the lock (%v): %s %s", err, out.String(), errb.String())
	case <-time.After(time.Second):
	}
	if now, _ := filepath.Glob(filepath.Join(hist, "finance.*")); len(now) > 0 {
		t.Fatalf("the read wrote %v while another process held the lock", now)
	}
	fsys.Unlock(lock)
	if err := <-done; err != nil {
		t.Fatalf("list_playbook_events: %v %s %s", err, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), `"playbook_created"`) {
		t.Fatalf("list_playbook_events answered %s", out.String())
	}
	if now, _ := filepath.Glob(filepath.Join(hist, "finance.*")); len(now) == 0 {
		t.Fatal("the read built no history")
	}
}
