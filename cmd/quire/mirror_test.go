package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// remoteStatus is quire remote list --json's line for name.
func remoteStatus(t *testing.T, v, name string) map[string]any {
	t.Helper()
	code, out, errs := quire(t, "", v, "remote", "list", "--json")
	var rs []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &rs) != nil {
		t.Fatalf("remote list: %d %s %s", code, out, errs)
	}
	for _, r := range rs {
		if r["remote"] == name {
			return r
		}
	}
	t.Fatalf("remote list lacks %s: %s", name, out)
	return nil
}

// waitFor polls cond for up to d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not within %v", what, d)
}

// quire serve --push origin pushes every boundary to a bare repository in
// the background: the remote follows the vault's branch within seconds,
// while the remote is gone the writes go on and quire remote list says
// what waits and why, and once it is back everything reaches it.
func TestServePushesEveryBoundaryToItsRemote(t *testing.T) {
	t.Parallel()
	dir, v, run := newCloseRun(t)
	bare := filepath.Join(t.TempDir(), "remote.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v %s", err, out)
	}
	if code, out, errs := quire(t, "", v, "remote", "add", "origin", "file://"+bare); code != 0 || !strings.Contains(out, "Added the remote origin") {
		t.Fatalf("remote add: %d %s %s", code, out, errs)
	}
	if code, _, errs := quire(t, "", v, "remote", "add", "origin", "file://"+bare); code == 0 || !strings.Contains(errs, `the vault has a remote "origin" already`) {
		t.Fatalf("remote add twice: %d %s", code, errs)
	}
	if code, _, errs := quire(t, "", v, "remote", "add", "-x", "file://"+bare); code == 0 {
		t.Fatalf("a bad remote name was taken: %s", errs)
	}
	if got := gitIn(t, dir, "remote", "get-url", "origin"); got != "file://"+bare {
		t.Fatalf("git does not see the remote: %q", got)
	}
	base := startServe(t, dir, "--push", "origin")
	remoteHead := func() string {
		out, _ := exec.Command("git", "--git-dir", bare, "rev-parse", "--verify", "-q", "refs/heads/main").Output()
		return strings.TrimSpace(string(out))
	}
	boundary := func(step string) {
		t.Helper()
		body := fmt.Sprintf(`{"event":"step_completed","step":%q,"actor":"agent-7"}`, step)
		resp, err := http.Post(base+"/v1/orgs/acme/playbooks/finance/runs/"+run+"/events", "application/json", strings.NewReader(body))
		if err != nil || resp.StatusCode != 201 && resp.StatusCode != 200 {
			t.Fatalf("record_event over HTTP: %v %v", err, resp)
		}
		resp.Body.Close()
	}
	// make test-long records 1,000 boundaries on each side of the outage.
	before, during := 20, 5
	if os.Getenv("QUIRE_TEST_LONG") != "" {
		before, during = 1000, 1000
	}
	for i := range before {
		boundary(fmt.Sprintf("do/%d/a", i+1))
	}
	waitFor(t, 10*time.Second, "the remote has the vault's branch", func() bool { return remoteHead() == gitIn(t, dir, "rev-parse", "HEAD") })
	// The status is written once the push has returned.
	waitFor(t, 5*time.Second, "the status says nothing waits", func() bool {
		st := remoteStatus(t, v, "origin")
		return st["waiting"].(float64) == 0 && st["last_error"] == nil
	})

	// The remote goes away: writes go on, and the status says why.
	os.Rename(bare, bare+".away")
	start := time.Now()
	for i := range during {
		boundary(fmt.Sprintf("do/%d/b", i+1))
	}
	// No boundary waits for the remote: a boundary's own cost, not a push's.
	if took := time.Since(start); took > time.Duration(during)*100*time.Millisecond+time.Second {
		t.Fatalf("%d boundaries took %v while the remote was down", during, took)
	}
	waitFor(t, 10*time.Second, "the status names the failed push", func() bool {
		st := remoteStatus(t, v, "origin")
		return st["last_error"] != nil && st["waiting"].(float64) == float64(during)
	})
	os.Rename(bare+".away", bare)
	waitFor(t, 40*time.Second, "the remote has every commit once it is back", func() bool { return remoteHead() == gitIn(t, dir, "rev-parse", "HEAD") })
	waitFor(t, 5*time.Second, "the status once the remote is back says nothing waits", func() bool {
		st := remoteStatus(t, v, "origin")
		return st["waiting"].(float64) == 0 && st["last_error"] == nil
	})
	if out, err := exec.Command("git", "--git-dir", bare, "fsck", "--strict").CombinedOutput(); err != nil {
		t.Fatalf("git fsck of the remote: %v %s", err, out)
	}
	if code, out, _ := quire(t, "", v, "status"); code != 0 || !strings.Contains(out, "origin") || !strings.Contains(out, "file://"+bare) {
		t.Fatalf("status: %s", out)
	}
	if code, out, errs := quire(t, "", v, "remote", "remove", "origin"); code != 0 || !strings.Contains(out, "Removed the remote origin") {
		t.Fatalf("remote remove: %s %s", out, errs)
	}
	if code, out, _ := quire(t, "", v, "status"); code != 0 || !strings.Contains(out, "no remote") {
		t.Fatalf("status without remotes: %s", out)
	}
}

// A boundary reaches the remote as soon as it is answered, once the
// pusher's gap between two pushes (a second) has passed: not at the
// pusher's next look at the branch (every 2 s). The pusher was told of a
// commit while its write was still under way, before the branch showed
// it, so it looked, found nothing new and slept until its next look: a
// replica saw a run's end 1.1 s late at the median (make bench's replica
// lag with POST .../sync; 95 ms when the mirror was made), and runs
// started and ended over HTTP here reached the remote 34-1,577 ms after
// their answers. The median of eight is held under 300 ms (a git push of
// one commit to a folder takes some 30 ms).
func TestABoundaryIsPushedOnceAnswered(t *testing.T) {
	t.Parallel()
	dir, v, project := newCLIVault(t)
	quire(t, "", v, "call", "create_playbook", "--args", `{"playbook":"finance","name":"Finance"}`)
	def, _ := json.Marshal(map[string]string{"playbook": "finance", "type": "workflow", "name": "close", "source": "document:\n  name: close\n"})
	if code, out, errs := quire(t, "", v, "call", "create_definition", "--args", string(def)); code != 0 {
		t.Fatalf("create_definition: %d %s %s", code, out, errs)
	}
	bare := filepath.Join(t.TempDir(), "remote.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v %s", err, out)
	}
	if code, _, errs := quire(t, "", v, "remote", "add", "origin", "file://"+bare); code != 0 {
		t.Fatalf("remote add: %d %s", code, errs)
	}
	base := startServe(t, dir, "--push", "origin")
	remoteHead := func() string {
		out, _ := exec.Command("git", "--git-dir", bare, "rev-parse", "--verify", "-q", "refs/heads/main").Output()
		return strings.TrimSpace(string(out))
	}
	waitFor(t, 10*time.Second, "the remote has the vault's branch", func() bool { return remoteHead() == gitIn(t, dir, "rev-parse", "HEAD") })
	var lags []time.Duration
	post := func(path, body string) []byte {
		t.Helper()
		time.Sleep(1200 * time.Millisecond) // past the gap between two pushes
		resp, err := http.Post(base+"/v1/orgs/acme/playbooks/finance"+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			t.Fatalf("POST %s: %s %s", path, resp.Status, out)
		}
		answered, head := time.Now(), gitIn(t, dir, "rev-parse", "HEAD")
		for remoteHead() != head && time.Since(answered) < 5*time.Second {
			time.Sleep(5 * time.Millisecond)
		}
		lags = append(lags, time.Since(answered))
		return out
	}
	for range 4 {
		var r struct {
			RunID string `json:"run_id"`
		}
		json.Unmarshal(post("/definitions/workflow/close/runs", fmt.Sprintf(`{"member_of":[%q],"executor":"agent-7","authorized_by":"ana"}`, project)), &r)
		post("/runs/"+r.RunID+"/end", `{"status":"succeeded","actor":"agent-7"}`)
	}
	slices.Sort(lags)
	if lags[len(lags)/2] > 300*time.Millisecond {
		t.Fatalf("runs started and ended reached the remote %v after their answers (sorted)", lags)
	}
}

// Two writers push to one remote, each recording boundaries of its own
// run at once: a push refused as not a fast-forward fetches, merges the
// other's commits (each writes its own run folder) and pushes again, and
// once they settle a clone of the remote holds every event of both runs
// once, with quire check --history and git fsck --strict clean.
func TestTwoWritersMeetAtTheirRemote(t *testing.T) {
	t.Parallel()
	dirA, vA, runA := newCloseRun(t)
	bare := filepath.Join(t.TempDir(), "remote.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v %s", err, out)
	}
	quire(t, "", vA, "remote", "add", "origin", "file://"+bare)
	gitIn(t, dirA, "push", "-q", "origin", "HEAD:refs/heads/main")
	dirB := filepath.Join(t.TempDir(), "b")
	if out, err := exec.Command("git", "clone", "-q", "-b", "main", bare, dirB).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v %s", err, out)
	}
	vB := "--vault=" + dirB
	code, out, errs := quire(t, "", vB, "call", "list_projects", "--args", `{}`)
	var projects []struct{ UID string }
	if code != 0 || json.Unmarshal([]byte(out), &projects) != nil || len(projects) == 0 {
		t.Fatalf("list_projects on the clone: %s %s", out, errs)
	}
	code, out, errs = quire(t, "", vB, "run", "start", "--playbook", "finance", "--name", "close", "--member-of", projects[0].UID,
		"--executor", "agent-9", "--authorized-by", "ana", "--json")
	var rb struct {
		RunID string `json:"run_id"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rb) != nil {
		t.Fatalf("run start on B: %s %s", out, errs)
	}
	baseA, baseB := startServe(t, dirA, "--push", "origin"), startServe(t, dirB, "--push", "origin")
	const n = 15
	done := make(chan error, 2)
	for _, w := range []struct{ base, run string }{{baseA, runA}, {baseB, rb.RunID}} {
		go func() {
			for i := range n {
				body := fmt.Sprintf(`{"event":"step_completed","step":"do/%d/x","actor":"agent-7"}`, i+1)
				resp, err := http.Post(w.base+"/v1/orgs/acme/playbooks/finance/runs/"+w.run+"/events", "application/json", strings.NewReader(body))
				if err != nil {
					done <- err
					return
				}
				resp.Body.Close()
				if resp.StatusCode >= 300 {
					done <- fmt.Errorf("record_event: %s", resp.Status)
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
			done <- nil
		}()
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	// Settled: both writers have pushed all they hold, and the remote holds both.
	settled := func() bool {
		for _, d := range []string{dirA, dirB} {
			head := gitIn(t, d, "rev-parse", "HEAD")
			if exec.Command("git", "--git-dir", bare, "merge-base", "--is-ancestor", head, "refs/heads/main").Run() != nil {
				return false
			}
		}
		return true
	}
	waitFor(t, 60*time.Second, "both writers' commits in the remote", settled)
	if merges, _ := exec.Command("git", "--git-dir", bare, "log", "--merges", "--format=%s", "refs/heads/main").Output(); !strings.Contains(string(merges), "Merge what origin holds") {
		t.Fatalf("no writer met the other: %s", merges)
	}
	dirC := filepath.Join(t.TempDir(), "c")
	if out, err := exec.Command("git", "clone", "-q", "-b", "main", bare, dirC).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v %s", err, out)
	}
	vC := "--vault=" + dirC
	for _, r := range []string{runA, rb.RunID} {
		code, out, errs := quire(t, "", vC, "call", "list_playbook_events", "--args", `{"playbook":"finance","run_id":"`+r+`","limit":1000}`)
		if code != 0 {
			t.Fatalf("list on the clone: %s %s", out, errs)
		}
		for i := range n {
			if c := strings.Count(out, fmt.Sprintf(`"step": "do/%d/x"`, i+1)); c != 1 {
				t.Fatalf("run %s: step do/%d/x is on the clone %d times", r, i+1, c)
			}
		}
	}
	if code, out, _ := quire(t, "", vC, "check", "--history"); code != 0 {
		t.Fatalf("check --history on the clone: %s", out)
	}
	if out, err := exec.Command("git", "--git-dir", bare, "fsck", "--strict").CombinedOutput(); err != nil {
		t.Fatalf("git fsck: %v %s", err, out)
	}
}

// A playbook's home is the one node that writes it: a write at another
// node is refused naming the home, the move to a node that lacks the
// remote's commits is refused, and once moved the new home writes and
// the old one refuses.
func TestAPlaybookIsWrittenAtItsHome(t *testing.T) {
	t.Parallel()
	dirA, vA, run := newCloseRun(t)
	bare := filepath.Join(t.TempDir(), "remote.git")
	exec.Command("git", "init", "-q", "--bare", bare).Run()
	quire(t, "", vA, "remote", "add", "origin", "file://"+bare)
	if code, out, errs := quire(t, "", vA, "node", "set", "alpha"); code != 0 || !strings.Contains(out, "This vault is the node alpha") {
		t.Fatalf("node set: %s %s", out, errs)
	}
	gitIn(t, dirA, "push", "-q", "origin", "HEAD:refs/heads/main")
	if code, out, errs := quire(t, "", vA, "playbook", "move", "finance", "--home", "alpha"); code != 0 || !strings.Contains(out, "finance is written at alpha from now on") {
		t.Fatalf("move to alpha: %s %s", out, errs)
	}
	gitIn(t, dirA, "push", "-q", "origin", "HEAD:refs/heads/main")
	dirB := filepath.Join(t.TempDir(), "b")
	exec.Command("git", "clone", "-q", "-b", "main", bare, dirB).Run()
	vB := "--vault=" + dirB
	quire(t, "", vB, "node", "set", "beta")
	event := func(v string) (int, string) {
		code, out, errs := quire(t, "", v, "call", "record_event", "--args", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_started","step":"do/1/a","actor":"agent-7"}`, run))
		return code, out + errs
	}
	if code, out := event(vB); code == 0 || !strings.Contains(out, "playbook finance is written at its home, the node alpha, and this is beta: send its writes to alpha") {
		t.Fatalf("a write at beta: %d %s", code, out)
	}
	if code, out := event(vA); code != 0 {
		t.Fatalf("a write at alpha: %s", out)
	}
	gitIn(t, dirA, "commit", "-qam", "a boundary by hand") // alpha has a commit the remote…
	gitIn(t, dirA, "push", "-q", "origin", "HEAD:refs/heads/main")
	// …and beta lacks it: the move is refused.
	if code, _, errs := quire(t, "", vB, "playbook", "move", "finance", "--home", "beta"); code == 0 || !strings.Contains(errs, "the remote origin holds commits this vault lacks") {
		t.Fatalf("a move to a home behind the remote: %d %s", code, errs)
	}
	gitIn(t, dirB, "pull", "-q", "--no-rebase", "origin", "main")
	if code, out, errs := quire(t, "", vB, "playbook", "move", "finance", "--home", "beta"); code != 0 {
		t.Fatalf("move to beta: %s %s", out, errs)
	}
	if code, out := event(vB); code != 0 {
		t.Fatalf("a write at the new home: %s", out)
	}
	gitIn(t, dirB, "push", "-q", "origin", "HEAD:refs/heads/main")
	gitIn(t, dirA, "pull", "-q", "--no-rebase", "origin", "main")
	if code, out := event(vA); code == 0 || !strings.Contains(out, "the node beta, and this is alpha") {
		t.Fatalf("a write at the old home: %d %s", code, out)
	}
}

// freePort is a TCP port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// The pushes go over git's own transports: to a repository served by git
// daemon (git://) and by git http-backend (http://, served here through
// net/http/cgi). The server is killed (SIGKILL) while the writer records
// boundaries, in the middle of a push (its receive-pack killed as it
// takes the pack), and started again: the remote ends with every commit
// and a clean git fsck --strict.
func TestMirrorOverGitDaemonAndHTTP(t *testing.T) {
	t.Parallel()
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	gitCore := strings.TrimSpace(string(execPath))
	for _, transport := range []string{"git daemon", "http-backend"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			dir, v, run := newCloseRun(t)
			root := t.TempDir()
			bare := filepath.Join(root, "vault.git")
			if out, err := exec.Command("git", "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
				t.Fatalf("git init --bare: %v %s", err, out)
			}
			gitIn(t, bare, "config", "http.receivepack", "true")
			port := freePort(t)
			var url string
			var start func() (stop func())
			switch transport {
			case "git daemon":
				url = fmt.Sprintf("git://127.0.0.1:%d/vault.git", port)
				start = func() func() {
					// git-daemon itself, not through git: git runs a
					// dashed command as its child, and killing git left
					// the daemon running after the test.
					d := exec.Command(filepath.Join(gitCore, "git-daemon"), "--reuseaddr", "--export-all", "--enable=receive-pack", "--listen=127.0.0.1",
						fmt.Sprintf("--port=%d", port), "--base-path="+root, root)
					if err := d.Start(); err != nil {
						t.Fatalf("git daemon: %v", err)
					}
					return func() { d.Process.Kill(); d.Wait() }
				}
			default:
				url = fmt.Sprintf("http://127.0.0.1:%d/vault.git", port)
				start = func() func() {
					h := &cgi.Handler{Path: filepath.Join(gitCore, "git-http-backend"),
						Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
					var l net.Listener
					for i := 0; i < 50; i++ {
						if l, err = net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
							break
						}
						time.Sleep(20 * time.Millisecond)
					}
					if l == nil {
						t.Fatalf("listen: %v", err)
					}
					srv := &http.Server{Handler: h}
					go srv.Serve(l)
					return func() { srv.Close() }
				}
			}
			stop := start()
			quire(t, "", v, "remote", "add", "origin", url)
			base := startServe(t, dir, "--push", "origin")
			remoteHead := func() string {
				out, _ := exec.Command("git", "--git-dir", bare, "rev-parse", "--verify", "-q", "refs/heads/main").Output()
				return strings.TrimSpace(string(out))
			}
			// The remote dies in the middle of a push: its receive-pack is
			// killed (SIGKILL) as it takes the pack, and the server with it.
			killed := make(chan bool, 1)
			var records int
			for i := 0; i < 30 || i < records; i++ {
				if i == 10 {
					go func() { ok := killReceivePack(bare, 10*time.Second); stop(); killed <- ok }()
					records = 1 << 30 // record until it is dead
				}
				if records > 30 {
					select {
					case ok := <-killed:
						if !ok {
							t.Fatal("no push was in flight in 10 s to kill (killReceivePack reads /proc: Linux only)")
						}
						// A receive-pack killed while it moved the branch
						// leaves the branch's lock in the remote, which
						// refuses every push after it ("cannot lock
						// ref") until its keeper removes it, as one
						// does after a server's crash.
						locks, _ := filepath.Glob(filepath.Join(bare, "refs", "heads", "*.lock"))
						for _, l := range append(locks, filepath.Join(bare, "packed-refs.lock")) {
							os.Remove(l)
						}
						records = i + 10
						stop = start()
					default:
					}
				}
				body := fmt.Sprintf(`{"event":"step_completed","step":"do/%d/a","actor":"agent-7"}`, i+1)
				resp, err := http.Post(base+"/v1/orgs/acme/playbooks/finance/runs/"+run+"/events", "application/json", strings.NewReader(body))
				if err != nil || resp.StatusCode >= 300 {
					t.Fatalf("record_event: %v %v", err, resp)
				}
				resp.Body.Close()
				time.Sleep(30 * time.Millisecond)
			}
			defer stop()
			for end := time.Now().Add(45 * time.Second); remoteHead() != gitIn(t, dir, "rev-parse", "HEAD"); time.Sleep(50 * time.Millisecond) {
				if time.Now().After(end) {
					t.Fatalf("the remote has not every commit within 45 s; the pusher's status: %v", remoteStatus(t, v, "origin"))
				}
			}
			if out, err := exec.Command("git", "--git-dir", bare, "fsck", "--strict").CombinedOutput(); err != nil {
				t.Fatalf("git fsck: %v %s", err, out)
			}
		})
	}
}

// The old home is gone: a replica made by quire clone, which refused
// writes while it followed, is made the playbook's home and takes its
// writes, pushed to the remote; the old home, started again with --push,
// meets what the remote took meanwhile at once and refuses writes to the
// playbook, naming its new home.
func TestAHomeMovedToAReplicaTakesItsWrites(t *testing.T) {
	t.Parallel()
	dirA, vA, run := newCloseRun(t)
	bare := homeWithRemote(t, dirA, "alpha", "finance")
	post := func(base, step string) (int, string) {
		body := fmt.Sprintf(`{"event":"step_completed","step":%q,"actor":"agent-7"}`, step)
		resp, err := http.Post(base+"/v1/orgs/acme/playbooks/finance/runs/"+run+"/events", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	remoteHead := func() string {
		out, _ := exec.Command("git", "--git-dir", bare, "rev-parse", "--verify", "-q", "refs/heads/main").Output()
		return strings.TrimSpace(string(out))
	}
	baseA, stopA := startServeStop(t, dirA, "--push", "origin")
	for i := range 5 {
		if code, out := post(baseA, fmt.Sprintf("do/%d/a", i+1)); code >= 300 {
			t.Fatalf("a write at alpha: %d %s", code, out)
		}
	}
	waitFor(t, 30*time.Second, "alpha's boundaries in the remote", func() bool { return remoteHead() == gitIn(t, dirA, "rev-parse", "HEAD") })

	dirR := filepath.Join(t.TempDir(), "replica")
	if code, out, errs := quire(t, "", "clone", "file://"+bare, dirR); code != 0 {
		t.Fatalf("quire clone: %s %s", out, errs)
	}
	vR := "--vault=" + dirR
	baseR, stopR := startServeStop(t, dirR, "--follow", "origin")
	if code, out := post(baseR, "do/9/r"); code != http.StatusConflict || !strings.Contains(out, "this server follows origin") {
		t.Fatalf("a write at the replica while it follows: %d %s", code, out)
	}
	stopR()
	stopA() // the old home is gone
	quire(t, "", vR, "node", "set", "beta")
	if code, out, errs := quire(t, "", vR, "playbook", "move", "finance", "--home", "beta"); code != 0 || !strings.Contains(out, "finance is written at beta from now on") {
		t.Fatalf("move to the replica: %s %s", out, errs)
	}
	baseR = startServe(t, dirR, "--push", "origin")
	for i := range 5 {
		if code, out := post(baseR, fmt.Sprintf("do/%d/b", i+1)); code >= 300 {
			t.Fatalf("a write at the new home: %d %s", code, out)
		}
	}
	waitFor(t, 30*time.Second, "beta's boundaries in the remote", func() bool { return remoteHead() == gitIn(t, dirR, "rev-parse", "HEAD") })

	// The old home comes back, and learns of the move before any write.
	baseA = startServe(t, dirA, "--push", "origin")
	waitFor(t, 30*time.Second, "alpha meets the remote", func() bool { return gitIn(t, dirA, "rev-parse", "HEAD") == remoteHead() })
	if code, out := post(baseA, "do/7/a"); code != http.StatusConflict || !strings.Contains(out, "the node beta, and this is alpha") {
		t.Fatalf("a write at the old home: %d %s", code, out)
	}
	code, out, errs := quire(t, "", vA, "call", "list_playbook_events", "--args", `{"playbook":"finance","run_id":"`+run+`","limit":1000}`)
	if code != 0 {
		t.Fatalf("list at alpha: %s %s", out, errs)
	}
	for i := range 5 {
		for _, side := range []string{"a", "b"} {
			if c := strings.Count(out, fmt.Sprintf(`"step": "do/%d/%s"`, i+1, side)); c != 1 {
				t.Fatalf("step do/%d/%s is at alpha %d times", i+1, side, c)
			}
		}
	}
	if code, out, _ := quire(t, "", vA, "check", "--history"); code != 0 {
		t.Fatalf("check --history at alpha: %s", out)
	}
}
