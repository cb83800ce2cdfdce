package main

import (
	"bufio"
	"fmt"
	"math/rand"
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
