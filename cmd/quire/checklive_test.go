//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"quire/ledger"
)

// quire check beside writers that keep writing (two ledgers of their
// own, as two served processes would be) reports what is there: never a
// torn line, a gap in the seq or a history past its files that a write
// in the middle shows.
func TestCheckBesideLiveWritersIsExact(t *testing.T) {
	dir, v, runID := newCloseRun(t)
	_, out, _ := quire(t, "", v, "call", "list_projects", "--args", `{}`)
	var projects []struct{ UID string }
	json.Unmarshal([]byte(out), &projects)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := ledger.Open(dir)
			if err != nil {
				errs <- err
				return
			}
			defer l.Close()
			runs := []string{runID}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				var args string
				op := "record_event"
				switch {
				case i%7 == 3:
					op, args = "run_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"close","member_of":[%q],"executor":"agent-7","authorized_by":"ana"}`, projects[0].UID)
				default:
					kind := []string{"step_started", "step_completed", "milestone_fired"}[i%3]
					args = fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":%q,"step":"do/%d","detail":"%s","actor":"agent-7"}`, runs[i%len(runs)], kind, i, strings.Repeat("x", 200+i%300))
				}
				res, err := l.Call(context.Background(), op, json.RawMessage(args))
				if err != nil {
					errs <- fmt.Errorf("%s: %v", op, err)
					return
				}
				if r, ok := res.(*ledger.Run); ok && op == "run_definition" {
					runs = append(runs, r.RunID)
				}
			}
		}()
	}
	deadline := time.Now().Add(3 * time.Second)
	checks := 0
	for time.Now().Before(deadline) || checks < 5 {
		code, out, errout := quire(t, "", v, "check")
		checks++
		if code != 0 || !strings.HasSuffix(out, " 0 problems\n") {
			close(stop)
			wg.Wait()
			t.Fatalf("check %d beside live writers: %d\n%s%s", checks, code, out, errout)
		}
	}
	close(stop)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	if code, out, _ := quire(t, "", v, "check"); code != 0 || !strings.HasSuffix(out, " 0 problems\n") {
		t.Fatalf("check after the writers: %d\n%s", code, out)
	}
}

// quire check answers on a vault this process may not write (its files
// read-only: chmod -R a-w, and, for root, who may write anyway, quire run
// as nobody), with and without --history, and so do reads; a write is
// refused, saying why.
func TestCheckOnAReadOnlyVault(t *testing.T) {
	dir, _, runID := newCloseRun(t)
	top := t.TempDir()
	clone := filepath.Join(top, "clone") // a clone has no .quire/ and no lock file
	gitIn(t, dir, "clone", "-q", dir, clone)
	run := func(args ...string) (int, string, string) {
		if os.Geteuid() != 0 {
			return quire(t, "", args...)
		}
		// root writes whatever the modes say: run quire as nobody, from a
		// copy of this binary nobody can reach.
		exe := filepath.Join(top, "quire.test")
		if _, err := os.Stat(exe); err != nil {
			data, err := os.ReadFile(os.Args[0])
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(exe, data, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		cmd := quireProcess(nil, args...)
		cmd.Path, cmd.Args[0] = exe, exe
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String(), errb.String()
	}
	// nobody must reach the vaults to read them.
	for _, p := range []string{top, dir} {
		for ; strings.HasPrefix(p, os.TempDir()+string(filepath.Separator)); p = filepath.Dir(p) {
			os.Chmod(p, 0o755)
		}
	}
	for _, vault := range []string{dir, clone} {
		filepath.WalkDir(vault, func(p string, d fs.DirEntry, err error) error {
			if err == nil {
				mode := fs.FileMode(0o444)
				if d.IsDir() {
					mode = 0o555
				}
				os.Chmod(p, mode)
			}
			return nil
		})
	}
	t.Cleanup(func() {
		for _, vault := range []string{dir, clone} {
			filepath.WalkDir(vault, func(p string, d fs.DirEntry, err error) error {
				if err == nil {
					os.Chmod(p, 0o755)
				}
				return nil
			})
		}
	})
	for _, vault := range []string{dir, clone} {
		v := "--vault=" + vault
		if code, out, errs := run(v, "check"); code != 0 || out != "1 run, 3 events, 0 problems\n" || errs != "" {
			t.Errorf("check of the read-only %s: %d %q %q", vault, code, out, errs)
		}
		if code, out, errs := run(v, "check", "--history"); code != 0 || !strings.HasSuffix(out, "1 run, 3 events, 0 problems\n") || errs != "" {
			t.Errorf("check --history of the read-only %s: %d %q %q", vault, code, out, errs)
		}
		if code, out, errs := run(v, "call", "get_run", "--args", `{"playbook":"finance","run_id":"`+runID+`"}`); code != 0 || !strings.Contains(out, `"state": "active"`) {
			t.Errorf("get_run on the read-only %s: %d %s %s", vault, code, out, errs)
		}
		code, _, errs := run(v, "run", "event", "step_completed", "--playbook", "finance", "--run", runID, "--step", "do/1", "--actor", "agent-7")
		if code != 1 || !strings.Contains(errs, "this vault is read-only here") || !strings.Contains(errs, "quire writes nothing to it") {
			t.Errorf("a write to the read-only %s: %d %s", vault, code, errs)
		}
	}
}
