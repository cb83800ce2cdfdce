package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// While another program holds git's index.lock (a person's long git
// command), every boundary waited 3 s for it inside the vault's lock, so
// four agents' boundaries took 12 s and their plain events queued behind
// them. A lock held for long is not waited for: each boundary is
// answered at once, its commit left for the next writer (committed:
// false), and once the lock goes the next write commits them all.
func TestAHeldGitLockSerialisesNoWriter(t *testing.T) {
	t.Parallel()
	dir, v, run := newCloseRun(t)
	_, out, _ := quire(t, "", v, "call", "list_projects", "--args", `{}`)
	var projects []struct{ UID string }
	json.Unmarshal([]byte(out), &projects)
	runs := []string{run}
	for i := 0; i < 3; i++ {
		code, out, errs := quire(t, "", v, "run", "start", "--playbook", "finance", "--name", "close", "--member-of", projects[0].UID,
			"--executor", "agent-7", "--authorized-by", "ana", "--json")
		var r struct {
			RunID string `json:"run_id"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
			t.Fatalf("run start: %s %s", out, errs)
		}
		runs = append(runs, r.RunID)
	}
	lock := filepath.Join(dir, ".git", "index.lock")
	os.WriteFile(lock, nil, 0o644)
	old := time.Now().Add(-time.Minute)
	os.Chtimes(lock, old, old)

	start := time.Now()
	var wg sync.WaitGroup
	outs := make([]string, len(runs))
	for i, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := quireProcess(nil, "--vault", dir, "call", "record_event", "--args",
				fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_completed","step":"do/1/a","actor":"agent-7"}`, r))
			var b bytes.Buffer
			cmd.Stdout, cmd.Stderr = &b, &b
			cmd.Run()
			outs[i] = b.String()
		}()
	}
	wg.Wait()
	took := time.Since(start)
	for _, o := range outs {
		if !strings.Contains(o, `"committed": false`) {
			t.Fatalf("a boundary under another program's git lock: %s", o)
		}
	}
	if took > 2*time.Second {
		t.Fatalf("four boundaries under a held git lock took %v", took)
	}
	os.Remove(lock)
	if code, out, errs := quire(t, "", v, "call", "record_event", "--args",
		fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_started","step":"do/2/b","actor":"agent-7"}`, run)); code != 0 {
		t.Fatalf("after the lock: %s %s", out, errs)
	}
	if code, out, _ := quire(t, "", v, "janitor"); code != 0 {
		t.Fatalf("janitor: %s", out)
	}
	if st := gitIn(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("git status after the lock went:\n%s", st)
	}
}
