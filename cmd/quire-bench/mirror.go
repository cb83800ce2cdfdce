package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// benchMirror measures quire serve --push (here quire mcp --push, the same
// pusher) against a bare repository on this disk: a boundary's cost with
// the pushes running beside it and without (blocks taking turns, one
// server each), and, with the writer recording boundaries at rate a
// second, how long each takes to reach the remote; git push of one commit
// beside it.
func benchMirror(bin string, runs, rounds, rate int, secs int) {
	if bin == "" {
		bin = buildQuire()
	}
	src, ids := doorVault(runs)
	dir := filepath.Join(os.TempDir(), "quire-bench-mirror")
	must(os.RemoveAll(dir))
	must(exec.Command("cp", "-a", src, dir).Run())
	defer os.RemoveAll(dir)
	bare := dir + ".remote.git"
	must(os.RemoveAll(bare))
	defer os.RemoveAll(bare)
	must(exec.Command("git", "init", "-q", "--bare", bare).Run())
	git(dir, "remote", "add", "origin", "file://"+bare)
	git(dir, "push", "-q", "origin", "HEAD:refs/heads/main")

	rng := rand.New(rand.NewSource(int64(runs)))
	boundary := func(m *mcpClient) time.Duration {
		return m.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_completed","step":"bench/%d","actor":"agent-7"}`, ids[rng.Intn(len(ids))], rng.Intn(1000)))
	}
	plain := startMCPWith(bin, dir)
	pushing := startMCPWith(bin, dir, "--push", "origin")
	var with, without []time.Duration
	const block = 10
	for b := 0; b < (rounds+block-1)/block; b++ {
		for i := 0; i < block; i++ {
			without = append(without, boundary(plain))
		}
		for i := 0; i < block; i++ {
			with = append(with, boundary(pushing))
		}
	}
	plain.close()

	// Throughput: boundaries at rate a second for secs seconds; each one's
	// lag is from its answer to the first look at the remote that finds a
	// commit count that holds it.
	remoteCount := func() int {
		out, err := exec.Command("git", "--git-dir", bare, "rev-list", "--count", "refs/heads/main").Output()
		if err != nil {
			return 0
		}
		var n int
		fmt.Sscan(strings.TrimSpace(string(out)), &n)
		return n
	}
	localCount := func() int {
		out, _ := exec.Command("git", "-C", dir, "rev-list", "--count", "HEAD").Output()
		var n int
		fmt.Sscan(strings.TrimSpace(string(out)), &n)
		return n
	}
	waitCaught := func() {
		for want := localCount(); remoteCount() < want; {
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitCaught()
	base := localCount()
	total := rate * secs
	answered := make([]time.Time, total)
	done := make(chan struct{})
	type seen struct {
		at    time.Time
		count int
	}
	var looks []seen
	stop := make(chan struct{})
	go func() {
		defer close(done)
		for {
			n := remoteCount()
			looks = append(looks, seen{time.Now(), n})
			if n >= base+total {
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	t0 := time.Now()
	for i := 0; i < total; i++ {
		if wait := time.Until(t0.Add(time.Duration(i) * time.Second / time.Duration(rate))); wait > 0 {
			time.Sleep(wait)
		}
		boundary(pushing)
		answered[i] = time.Now()
	}
	recorded := time.Since(t0)
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		close(stop)
		<-done
	}
	pushing.close()
	var lags []time.Duration
	k := 0
	for i := 0; i < total; i++ {
		for k < len(looks) && looks[k].count < base+i+1 {
			k++
		}
		if k == len(looks) {
			break // never reached the remote while it was watched
		}
		lags = append(lags, max(looks[k].at.Sub(answered[i]), 0))
	}
	sort.Slice(lags, func(a, b int) bool { return lags[a] < lags[b] })
	within2 := sort.Search(len(lags), func(i int) bool { return lags[i] > 2*time.Second })

	// git push of one commit, beside it.
	var gitPush []time.Duration
	for i := 0; i < 10; i++ {
		rel := runFolderOf(dir, ids[rng.Intn(len(ids))]) + "/thread.md"
		fh, err := os.OpenFile(filepath.Join(dir, rel), os.O_APPEND|os.O_WRONLY, 0)
		must(err)
		fmt.Fprintf(fh, "A note at %s.\n", time.Now().Format(time.RFC3339Nano))
		fh.Close()
		git(dir, "commit", "-q", "-am", "a note")
		gitPush = append(gitPush, gitTimed(dir, "push", "-q", "origin", "HEAD:refs/heads/main"))
	}

	fmt.Printf("== Mirror (issue 25): quire mcp --push origin to a bare repository on this disk, %d runs\n", runs)
	p50w, p50o := pct(with, 50), pct(without, 50)
	fmt.Printf("boundary with --push   p50 %s p99 %s; without p50 %s p99 %s: %.2fx %s (target within 10%%)\n",
		ms(p50w), ms(pct(with, 99)), ms(p50o), ms(pct(without, 99)), float64(p50w)/float64(p50o), targetText(1.10/(float64(p50w)/float64(p50o)), 1))
	fmt.Printf("%d boundaries at %d a second (recorded in %s): %d reached the remote, %d of them within 2 s %s; lag p50 %s p99 %s max %s\n",
		total, rate, secs2(recorded), len(lags), within2, targetText(float64(within2)/float64(total), 1), ms(pct(lags, 50)), ms(pct(lags, 99)), ms(pct(lags, 100)))
	fmt.Printf("push throughput %.0f boundaries a second; git push of one commit p50 %s p99 %s\n",
		float64(len(lags))/max(recorded.Seconds(), 1e-9), ms(pct(gitPush, 50)), ms(pct(gitPush, 99)))
}

func secs2(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// startMCPWith is startMCP with flags for quire mcp.
func startMCPWith(bin, dir string, flags ...string) *mcpClient {
	cmd := exec.Command(bin, append([]string{"--vault", dir, "mcp"}, flags...)...)
	in, err := cmd.StdinPipe()
	must(err)
	out, err := cmd.StdoutPipe()
	must(err)
	cmd.Stderr = os.Stderr
	must(cmd.Start())
	m := &mcpClient{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	m.rpc("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"quire-bench","version":"1"}}`)
	fmt.Fprintln(m.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return m
}

// benchReplicaLag measures how long a boundary on a writer (quire serve
// --push origin) takes to be read on a replica (quire clone, quire serve
// --follow origin): polling at the default 2 s, and with POST .../sync
// sent as a forge's push webhook would, once the remote's branch moved.
func benchReplicaLag(bin string, rounds int) {
	if bin == "" {
		bin = buildQuire()
	}
	root, err := os.MkdirTemp("", "quire-bench-replica")
	must(err)
	defer os.RemoveAll(root)
	bare := filepath.Join(root, "remote.git")
	must(exec.Command("git", "init", "-q", "--bare", bare).Run())
	writer := filepath.Join(root, "writer")
	must(exec.Command(bin, "init", writer, "--org", "bench").Run())
	call := func(dir, op, args string) []byte {
		out, err := exec.Command(bin, "--vault", dir, "call", op, "--args", args).Output()
		must(err)
		return out
	}
	var p struct{ UID string }
	must(json.Unmarshal(call(writer, "create_project", `{"name":"Operations"}`), &p))
	call(writer, "create_playbook", `{"playbook":"finance","name":"Finance"}`)
	// The page of testdata's close-the-month, whose views show each
	// closed month: the lag is to the same page's views on the replica.
	if out, err := exec.Command(bin, "--vault", writer, "definition", "save", "testdata/vault/close-the-month.yaml", "--playbook", "finance").CombinedOutput(); err != nil {
		must(fmt.Errorf("definition save: %v %s", err, out))
	}
	git(writer, "remote", "add", "origin", "file://"+bare)
	git(writer, "push", "-q", "origin", "HEAD:refs/heads/main")
	replica := filepath.Join(root, "replica")
	must(exec.Command(bin, "clone", "file://"+bare, replica).Run())

	wbase, stopW := serveAt(bin, writer, "--push", "origin")
	defer stopW()
	pbase, stopP := serveAt(bin, replica, "--follow", "origin")
	defer stopP()
	hooked := filepath.Join(root, "hooked")
	must(exec.Command(bin, "clone", "file://"+bare, hooked).Run())
	hbase, stopH := serveAt(bin, hooked, "--follow", "origin", "--follow-interval", "1h")
	defer stopH()

	// The webhook: the remote's branch moved, so the forge would tell the
	// replica.
	stopHook := make(chan struct{})
	defer close(stopHook)
	go func() {
		last := ""
		for {
			select {
			case <-stopHook:
				return
			case <-time.After(20 * time.Millisecond):
			}
			out, _ := exec.Command("git", "--git-dir", bare, "rev-parse", "-q", "--verify", "refs/heads/main").Output()
			if h := strings.TrimSpace(string(out)); h != last {
				last = h
				if resp, err := http.Post(hbase+"/v1/orgs/bench/sync", "application/json", nil); err == nil {
					resp.Body.Close()
				}
			}
		}
	}()
	const pb = "/v1/orgs/bench/playbooks/finance/definitions/workflow/close-the-month"
	post := func(url, body string) []byte {
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		must(err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		must(err)
		if resp.StatusCode >= 300 {
			must(fmt.Errorf("POST %s: %s %s", url, resp.Status, b))
		}
		return b
	}
	sees := func(base, month string) bool {
		resp, err := http.Post(base+pb+"/render", "application/json", strings.NewReader(`{}`))
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == 200 && bytes.Contains(b, []byte(month))
	}
	plain := filepath.Join(root, "plain")
	must(exec.Command("git", "clone", "-q", "file://"+bare, plain).Run())
	var polled, synced, fetched []time.Duration
	for i := 0; i < rounds; i++ {
		// A run of close-the-month closes a month: its end is the
		// boundary whose views are waited for.
		month := time.Date(2020, time.Month(1+i), 1, 0, 0, 0, 0, time.UTC).Format("2006-01")
		var r struct {
			RunID string `json:"run_id"`
		}
		must(json.Unmarshal(post(wbase+pb+"/runs", fmt.Sprintf(`{"member_of":[%q],"executor":"agent-7","authorized_by":"ana"}`, p.UID)), &r))
		// The run's start is pushed, and the push gap (one a second) has
		// passed before its end: the lag of one boundary, not of a
		// boundary waiting behind the pusher's throttle.
		rev := func(dir, ref string) string {
			out, _ := exec.Command("git", "-C", dir, "rev-parse", "-q", "--verify", ref).Output()
			return strings.TrimSpace(string(out))
		}
		for head, end := rev(writer, "HEAD"), time.Now().Add(30*time.Second); rev(bare, "refs/heads/main") != head && time.Now().Before(end); {
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(time.Second + time.Duration(rand.Intn(2000))*time.Millisecond) // and at no fixed phase of the replica's polling
		post(wbase+"/v1/orgs/bench/playbooks/finance/runs/"+r.RunID+"/end", fmt.Sprintf(`{"status":"succeeded","output":{"month":%q,"revenue":%d},"actor":"agent-7"}`, month, 1000+i))
		t0 := time.Now()
		var gotP, gotH time.Duration
		for (gotP == 0 || gotH == 0) && time.Since(t0) < 30*time.Second {
			if gotP == 0 && sees(pbase, month) {
				gotP = time.Since(t0)
			}
			if gotH == 0 && sees(hbase, month) {
				gotH = time.Since(t0)
			}
			time.Sleep(10 * time.Millisecond)
		}
		polled, synced = append(polled, gotP), append(synced, gotH)
		// Beside it, git's own fetch of the same commits into a plain clone.
		t1 := time.Now()
		git(plain, "fetch", "-q", "origin", "main")
		fetched = append(fetched, time.Since(t1))
	}
	fmt.Printf("replica lag, a run's end on the writer to the same page's views on a replica (render_page, %d runs): polling every 2 s p50 %s p99 %s %s (target p50 at most 2.5 s); with POST .../sync p50 %s p99 %s %s (target p50 at most 0.5 s); git fetch of the same commits p50 %s p99 %s\n",
		rounds, ms(pct(polled, 50)), ms(pct(polled, 99)), targetText(2.5/pct(polled, 50).Seconds(), 1), ms(pct(synced, 50)), ms(pct(synced, 99)), targetText(0.5/pct(synced, 50).Seconds(), 1),
		ms(pct(fetched, 50)), ms(pct(fetched, 99)))
}

// serveAt starts quire serve on a free loopback port and answers its base
// URL and how to stop it.
func serveAt(bin, dir string, flags ...string) (string, func()) {
	cmd := exec.Command(bin, append([]string{"--vault", dir, "serve", "--addr", "127.0.0.1:0"}, flags...)...)
	out, err := cmd.StdoutPipe()
	must(err)
	must(cmd.Start())
	line, _ := bufio.NewReader(out).ReadString('\n')
	i := strings.Index(line, "http://")
	if i < 0 {
		cmd.Process.Kill()
		must(fmt.Errorf("quire serve said %q", line))
	}
	base := line[i:]
	base = base[:strings.Index(base[len("http://"):], "/")+len("http://")]
	return base, func() { cmd.Process.Kill(); cmd.Wait() }
}
