package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"quire/internal/fsys"
	"quire/ledger"
)

// Writers in processes of their own (quire call) and a serving process
// (quire serve, written to over HTTP by three clients at once), each
// SIGKILLed at random times and the server started again: afterwards quire
// janitor leaves quire check clean and git fsck content, and every write
// that was acknowledged is in the vault once. make test-long: 8 writers and the server for 30 seconds;
// make test: 2 writers and the server for 2.
func TestRandomKillsLoseNothing(t *testing.T) {
	t.Parallel()
	writers, length := 2, 2*time.Second
	if os.Getenv("QUIRE_TEST_LONG") != "" {
		writers, length = 8, 30*time.Second
	}
	cv := newCrashVault(t)
	dir := cv.dir
	var (
		mu    sync.Mutex
		procs = map[*os.Process]bool{}
		acked []string // event ids
	)
	track := func(p *os.Process, on bool) {
		mu.Lock()
		defer mu.Unlock()
		if on {
			procs[p] = true
		} else {
			delete(procs, p)
		}
	}
	ack := func(id string) {
		mu.Lock()
		acked = append(acked, id)
		mu.Unlock()
	}
	ctx, cancel := context.WithTimeout(context.Background(), length)
	defer cancel()
	var wg sync.WaitGroup

	// quire call writers, each on a run of its own.
	call := func(op, args string) (map[string]any, bool) {
		cmd := quireProcess(nil, "--vault", dir, "call", op, "--args", args)
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Start(); err != nil {
			t.Error(err)
			return nil, false
		}
		track(cmd.Process, true)
		err := cmd.Wait()
		track(cmd.Process, false)
		if err != nil {
			if !killed(err) && !strings.Contains(out.String(), `"code"`) {
				t.Errorf("%s: %v %s", op, err, out.String())
			}
			return nil, false
		}
		var m map[string]any
		if json.Unmarshal(out.Bytes(), &m) != nil {
			t.Errorf("%s: not JSON: %s", op, out.String())
			return nil, false
		}
		return m, true
	}
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var run string
			for run == "" && ctx.Err() == nil {
				if r, ok := call("run_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"close","member_of":[%q],"executor":"agent-%d","authorized_by":"ana"}`, cv.project, w)); ok {
					run = r["run_id"].(string)
					ack(run + "_1")
				}
			}
			for i := 0; ctx.Err() == nil; i++ {
				ev := "step_started"
				if i%2 == 1 {
					ev = "step_completed"
				}
				if r, ok := call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":%q,"step":"do/%d/s","actor":"agent-%d"}`, run, ev, i/2, w)); ok {
					ack(r["id"].(string))
				}
			}
		}(w)
	}

	// The serving process, written to over HTTP, started again when killed.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			cmd := quireProcess(nil, "--vault", dir, "serve", "--addr", "127.0.0.1:0")
			stdout, _ := cmd.StdoutPipe()
			cmd.Stderr = io.Discard
			if err := cmd.Start(); err != nil {
				t.Error(err)
				return
			}
			track(cmd.Process, true)
			line, _ := bufio.NewReader(stdout).ReadString('\n')
			base := ""
			if i := strings.Index(line, "http://"); i >= 0 {
				base = strings.Fields(line[i:])[0]
			}
			// Three clients at once, so that the server groups the
			// boundaries that wait on the lock (vault/group.go) and is
			// killed inside groups too.
			var clients sync.WaitGroup
			for c := 0; c < 3; c++ {
				clients.Add(1)
				go func() {
					defer clients.Done()
					for n := 0; base != "" && ctx.Err() == nil; n++ {
						body := fmt.Sprintf(`{"event":"milestone_fired","detail":"served %d.%d.%d","actor":"agent-7"}`, i, c, n)
						resp, err := http.Post(base+"orgs/acme/playbooks/finance/runs/"+cv.run+"/events", "application/json", strings.NewReader(body))
						if err != nil {
							return // killed
						}
						var ev struct{ ID string }
						json.NewDecoder(resp.Body).Decode(&ev)
						resp.Body.Close()
						if resp.StatusCode == 200 && ev.ID != "" {
							ack(ev.ID)
						}
					}
				}()
			}
			clients.Wait()
			cmd.Process.Kill()
			cmd.Wait()
			track(cmd.Process, false)
		}
	}()

	// The killer.
	kills := 0
	for ctx.Err() == nil {
		time.Sleep(time.Duration(100+rand.Intn(300)) * time.Millisecond)
		mu.Lock()
		var ps []*os.Process
		for p := range procs {
			ps = append(ps, p)
		}
		mu.Unlock()
		if len(ps) > 0 {
			ps[rand.Intn(len(ps))].Signal(syscall.SIGKILL)
			kills++
		}
	}
	wg.Wait()

	l, err := ledger.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rep, err := l.Repair()
	if err != nil || len(rep.Left) > 0 {
		t.Fatalf("janitor: %v, left %v", err, rep.Left)
	}
	check, err := l.Check()
	if err != nil || len(check.Problems) > 0 {
		t.Fatalf("check after janitor: %v %v", err, check.Problems)
	}
	// git status may show a run's log changed since its last boundary, by
	// design; git itself must find the repository whole. A compaction
	// the writes started (detached) may still run: fsck reads the loose
	// objects it packs and removes, as beside git gc, so it waits for it
	// and holds off another (.git/quire-compact.lock).
	lock, err := os.OpenFile(filepath.Join(dir, ".git", "quire-compact.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := fsys.Lock(lock); err != nil {
		t.Fatal(err)
	}
	g := exec.Command("git", "fsck", "--no-dangling")
	g.Dir = dir
	out, err := g.CombinedOutput()
	fsys.Unlock(lock)
	lock.Close()
	if err != nil {
		t.Fatalf("git fsck: %v %s", err, out)
	}
	seen := map[string]int{}
	for after := int64(0); ; {
		res, err := l.Call(context.Background(), "list_playbook_events", json.RawMessage(fmt.Sprintf(`{"playbook":"finance","limit":1000,"after":%d}`, after)))
		if err != nil {
			t.Fatal(err)
		}
		page := res.(*ledger.EventPage)
		for _, ev := range page.Events {
			seen[ev.ID]++
		}
		if page.Next == 0 {
			break
		}
		after = page.Next
	}
	for _, id := range append(cv.acked, acked...) {
		if seen[id] != 1 {
			t.Fatalf("acknowledged event %s is in the history %d times", id, seen[id])
		}
	}
	t.Logf("%d kills, %d acknowledged writes, janitor: %v", kills, len(acked), rep.Repaired)
}
