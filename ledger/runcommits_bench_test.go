package ledger

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"quire/vault"
)

// A run's commits at 50,000 runs and 250,000 commits (issue 23: the run
// page under 50 ms at 50,000 runs). The history is written at object
// level, as cmd/quire-bench's history builder does: every commit, with the
// Run-Id trailer of one of the runs, is one object of a single pack on top
// of the vault's first commit, all sharing its tree (the index of commits
// reads commits, never trees), and the runs are lines of the vault's
// index. ns/op is list_run_commits of a random run with the index warm;
// build-s the first call, which makes the index from the whole history;
// catchup-ms the index's part of a call after 100 commits made beside
// quire (git's), which it adds (the vault's index of runs, which a moved
// HEAD makes check itself once, is not counted).
func BenchmarkListRunCommits50000(b *testing.B) {
	const runs, commits = 50_000, 250_000
	dir := b.TempDir()
	v, err := vault.Init(dir, "acme", time.Now())
	if err != nil {
		b.Fatal(err)
	}
	l := New(v)
	b.Cleanup(func() { l.Close() })
	ids := make([]string, runs)
	var index bytes.Buffer
	for i := range ids {
		ids[i] = fmt.Sprintf("019a4012-7c3e-7d10-9b2a-%012x", i)
		e := vault.Entry{UID: ids[i], Type: "playbook-run", Path: "playbook-runs/close-the-month-" + ids[i] + "-2026-11-01",
			Playbook: "finance", Name: "close-the-month", DefType: "workflow", Created: "2026-11-01T00:00:00.000Z"}
		line, _ := json.Marshal(e)
		index.Write(append(line, '\n'))
	}
	f, err := os.OpenFile(filepath.Join(dir, filepath.FromSlash(vault.IndexFile)), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	f.Write(index.Bytes())
	f.Close()

	head, err := v.HeadCommit()
	if err != nil {
		b.Fatal(err)
	}
	h := v.History()
	tree, _, err := h.Commit(head)
	h.Close()
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewSource(23))
	when := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	commitsOf := func(n int) {
		var c bytes.Buffer
		w := newBenchPack(dir)
		for i := 0; i < n; i++ {
			when = when.Add(time.Minute)
			run := ids[i%runs] // every run started before any has a second
			if i >= runs {
				run = ids[rng.Intn(runs)]
			}
			c.Reset()
			sig := fmt.Sprintf("agent-7 <agent-7@quire.invalid> %d +0000", when.Unix())
			fmt.Fprintf(&c, "tree %s\nparent %s\nauthor %s\ncommitter %s\n\nclose-the-month: step do/%d/review completed\n\n"+
				"Run-Id: %s\nPlaybook: finance\nDefinition: workflow/close-the-month\nEvent: step_completed\n", tree, head, sig, sig, i, run)
			head = w.put("commit", c.Bytes())
		}
		w.finish(head)
	}
	t0 := time.Now()
	commitsOf(commits)
	b.Logf("%d commits written at object level in %.1f s", commits, time.Since(t0).Seconds())

	call := func(run string) *RunCommitPage {
		res, err := l.Call(context.Background(), "list_run_commits", json.RawMessage(`{"playbook":"finance","run_id":"`+run+`"}`))
		if err != nil {
			b.Fatal(err)
		}
		return res.(*RunCommitPage)
	}
	t0 = time.Now()
	if p := call(ids[0]); len(p.Commits) == 0 {
		b.Fatal("the first run has no commits")
	}
	build := time.Since(t0)
	commitsOf(100)
	t0 = time.Now()
	if _, err := l.runCommitsOf(ids[1]); err != nil {
		b.Fatal(err)
	}
	catchUp := time.Since(t0)
	call(ids[1]) // the vault's index of runs takes the moved HEAD in
	if got := l.commitsHead(); got != head {
		b.Fatalf("the index is through %s, HEAD %s", got, head)
	}

	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		call(ids[rng.Intn(runs)])
	}
	b.StopTimer()
	b.ReportMetric(build.Seconds(), "build-s")
	b.ReportMetric(float64(catchUp.Microseconds())/1000, "catchup-ms")
}

// benchPack writes objects into one pack and its index (version 2), and
// points the branch at the last commit.
type benchPack struct {
	dir  string
	f    *os.File
	w    *bufio.Writer
	off  int64
	objs []struct {
		id  vault.Hash
		off int64
		crc uint32
	}
	z   bytes.Buffer
	zw  *zlib.Writer
	crc uint32
}

func newBenchPack(dir string) *benchPack {
	p := &benchPack{dir: dir}
	var err error
	if p.f, err = os.CreateTemp(filepath.Join(dir, ".git", "objects"), "tmp-pack-"); err != nil {
		panic(err)
	}
	p.w = bufio.NewWriterSize(p.f, 1<<20)
	p.zw, _ = zlib.NewWriterLevel(&p.z, zlib.BestSpeed)
	p.raw(make([]byte, 12))
	return p
}

func (p *benchPack) raw(b []byte) {
	p.w.Write(b)
	p.crc = crc32.Update(p.crc, crc32.IEEETable, b)
	p.off += int64(len(b))
}

func (p *benchPack) put(typ string, content []byte) vault.Hash {
	s := sha1.New()
	fmt.Fprintf(s, "%s %d\x00", typ, len(content))
	s.Write(content)
	var id vault.Hash
	copy(id[:], s.Sum(nil))
	start := p.off
	p.crc = 0
	size := len(content)
	c := map[string]byte{"commit": 1, "tree": 2, "blob": 3}[typ]<<4 | byte(size&15)
	size >>= 4
	var hdr []byte
	for size > 0 {
		hdr = append(hdr, c|0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	p.raw(append(hdr, c))
	p.z.Reset()
	p.zw.Reset(&p.z)
	p.zw.Write(content)
	p.zw.Close()
	p.raw(p.z.Bytes())
	p.objs = append(p.objs, struct {
		id  vault.Hash
		off int64
		crc uint32
	}{id, start, p.crc})
	return id
}

func (p *benchPack) finish(head vault.Hash) {
	if err := p.w.Flush(); err != nil {
		panic(err)
	}
	hdr := binary.BigEndian.AppendUint32([]byte("PACK\x00\x00\x00\x02"), uint32(len(p.objs)))
	p.f.WriteAt(hdr, 0)
	p.f.Seek(0, io.SeekStart)
	s := sha1.New()
	io.Copy(s, p.f)
	sum := s.Sum(nil)
	p.f.Write(sum)
	p.f.Close()
	name := filepath.Join(p.dir, ".git", "objects", "pack", "pack-"+hex.EncodeToString(sum))
	os.MkdirAll(filepath.Dir(name), 0o755)
	if err := os.Rename(p.f.Name(), name+".pack"); err != nil {
		panic(err)
	}
	objs := p.objs
	sort.Slice(objs, func(i, j int) bool { return bytes.Compare(objs[i].id[:], objs[j].id[:]) < 0 })
	idx := []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}
	var fan [256]uint32
	for _, o := range objs {
		fan[o.id[0]]++
	}
	var total uint32
	for i := range fan {
		total += fan[i]
		idx = binary.BigEndian.AppendUint32(idx, total)
	}
	for _, o := range objs {
		idx = append(idx, o.id[:]...)
	}
	for _, o := range objs {
		idx = binary.BigEndian.AppendUint32(idx, o.crc)
	}
	for _, o := range objs {
		idx = binary.BigEndian.AppendUint32(idx, uint32(o.off)) // a pack of commits stays under 2 GiB
	}
	idx = append(idx, sum...)
	isum := sha1.Sum(idx)
	idx = append(idx, isum[:]...)
	if err := os.WriteFile(name+".idx", idx, 0o444); err != nil {
		panic(err)
	}
	if err := os.WriteFile(filepath.Join(p.dir, ".git", "refs", "heads", "main"), []byte(head.String()+"\n"), 0o644); err != nil {
		panic(err)
	}
}
