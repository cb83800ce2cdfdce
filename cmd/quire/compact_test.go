package main

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
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

// seedLoose writes loose objects into the vault's repository as git would:
// versions of a large blob, each the one before with a few bytes changed,
// as a boundary's trees are, and small blobs chosen to fall in objects/17,
// where the estimate of git's auto-gc (and the vault's) counts, so that it
// passes the vault's threshold (1,024, four objects there) without the
// thousands of files that would take seconds to make. It answers how many
// it wrote.
func seedLoose(t *testing.T, dir string, large, size int) int {
	t.Helper()
	id := func(content []byte) string {
		h := sha1.New()
		fmt.Fprintf(h, "blob %d\x00", len(content))
		h.Write(content)
		return hex.EncodeToString(h.Sum(nil))
	}
	write := func(content []byte) {
		id := id(content)
		var buf bytes.Buffer
		zw, _ := zlib.NewWriterLevel(&buf, zlib.BestSpeed)
		fmt.Fprintf(zw, "blob %d\x00", len(content))
		zw.Write(content)
		zw.Close()
		p := filepath.Join(dir, ".git", "objects", id[:2], id[2:])
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, buf.Bytes(), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	small := 0
	for i := 0; small < 4; i++ {
		if c := []byte(fmt.Sprintf("small object %d\n", i)); strings.HasPrefix(id(c), "17") {
			write(c)
			small++
		}
	}
	var b strings.Builder
	for b.Len() < size {
		fmt.Fprintf(&b, `{"event":"step_completed","step":"do/%d/review","seq":%d}`+"\n", b.Len()%977, b.Len())
	}
	big := []byte(b.String()[:size])
	for i := 0; i < large; i++ {
		copy(big[(i*7919)%(size-16):], fmt.Sprintf("v%015d", i))
		write(big)
	}
	return small + large
}

func looseCount(dir string) int {
	n := 0
	ents, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "??", "*"))
	for _, e := range ents {
		if !strings.HasPrefix(filepath.Base(e), "tmp_") {
			n++
		}
	}
	return n
}

// quire serve on SIGTERM stops within 5 seconds though a compaction of
// the vault's objects is under way: the calls in hand finish, the
// compaction is abandoned (every loose object still there, no temporary
// pack left), git fsck and quire check find the vault whole, and every
// acknowledged write is in it. make test: 40 versions of a 256 KB object
// (10 MB); make test-long: 300 (75 MB).
func TestServeStopsDuringCompaction(t *testing.T) {
	t.Parallel()
	large := 40
	if os.Getenv("QUIRE_TEST_LONG") != "" {
		large = 300
	}
	cv := newCrashVault(t)
	dir := cv.dir
	seeded := seedLoose(t, dir, large, 256<<10)
	before := looseCount(dir)

	cmd := quireProcess(nil, "--vault", dir, "serve", "--addr", "127.0.0.1:0")
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	i := strings.Index(line, "http://")
	if i < 0 {
		t.Fatalf("serve said %q %s", line, stderr.String())
	}
	url := strings.Fields(line[i:])[0] + "orgs/acme/playbooks/finance/runs/" + cv.run + "/events"
	var (
		mu    sync.Mutex
		acked []string
	)
	post := func(n int) bool {
		ev := "step_started"
		if n%2 == 1 {
			ev = "step_completed"
		}
		body := fmt.Sprintf(`{"event":%q,"step":"do/%d/s","actor":"agent-7"}`, ev, 10+n/2)
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var e struct{ ID string }
		json.NewDecoder(resp.Body).Decode(&e)
		if resp.StatusCode != 200 || e.ID == "" {
			return false
		}
		mu.Lock()
		acked = append(acked, e.ID)
		mu.Unlock()
		return true
	}
	// A boundary commits, and the commit starts the compaction.
	if !post(0) || !post(1) {
		t.Fatalf("the first events were refused: %s", stderr.String())
	}
	// Writes go on while the server is told to stop.
	writing := make(chan struct{})
	go func() {
		defer close(writing)
		for n := 2; post(n); n++ {
		}
	}()
	time.Sleep(20 * time.Millisecond)
	t0 := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v %s", err, stderr.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("serve still running 5 s after SIGTERM")
	}
	took := time.Since(t0)
	<-writing
	after := looseCount(dir)
	t.Logf("%d objects seeded; serve stopped %v after SIGTERM; %d loose objects before, %d after; %d events acknowledged", seeded, took, before, after, len(acked))
	if after < before {
		t.Fatalf("the compaction went on after SIGTERM: %d loose objects of %d", after, before)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "tmp_*")); len(tmps) > 0 {
		t.Fatalf("left %v", tmps)
	}
	g := exec.Command("git", "fsck", "--no-dangling")
	g.Dir = dir
	if out, err := g.CombinedOutput(); err != nil {
		t.Fatalf("git fsck: %v %s", err, out)
	}
	if code, out, errs := quire(t, "", "--vault", dir, "check"); code != 0 {
		t.Fatalf("quire check: %d %s %s", code, out, errs)
	}
	l, err := ledger.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	res, err := l.Call(context.Background(), "list_playbook_events", json.RawMessage(`{"playbook":"finance","limit":1000}`))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, ev := range res.(*ledger.EventPage).Events {
		seen[ev.ID]++
	}
	for _, id := range append(cv.acked, acked...) {
		if seen[id] != 1 {
			t.Fatalf("acknowledged event %s is in the history %d times", id, seen[id])
		}
	}
	// The next compaction packs what the abandoned one left.
	if err := l.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := looseCount(dir); n != 0 {
		t.Fatalf("%d loose objects after a whole compaction", n)
	}
}
