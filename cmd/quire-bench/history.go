package main

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"quire/ledger"
	"quire/vault"
)

// The history check (quire check --history) at 5,000 runs and 50,000
// commits. Making such a vault through quire's operations is slow (each
// boundary fsyncs its line and state, rewrites and hashes the 450 KB tree
// of playbook-runs/ as a loose object, and the loose objects are compacted
// into a new pack every few hundred commits), so the bench writes it at
// object level, straight into one pack, as git's
// own repack would leave it: every version of the large objects (the tree
// of playbook-runs/ and the index) is a delta of the version before, in
// chains of at most 50 like git's, made from what the commit changed
// (a run's entry, patched in place, or an entry appended), never by a
// search; everything else is whole. Then it writes the pack's index, the
// branch and quire.yaml: a vault quire opens as any other. Then it times
// the full walk (no .quire/check-history.json) and the incremental one
// after 10 new boundaries committed by quire's committer, medians of
// several rounds.

func benchHistory(runs, commits, rounds int) {
	dir, err := os.MkdirTemp("", "quire-bench-history-")
	must(err)
	defer os.RemoveAll(dir)
	t0, c0 := time.Now(), cpuTime()
	b := newHistoryBuilder(dir)
	names := b.build(runs, commits)
	fi, _ := os.Stat(b.packPath)
	fmt.Printf("   made at object level in %.1f s (CPU %.1f s): %d runs, %d commits, one pack of %.0f MB\n",
		time.Since(t0).Seconds(), (cpuTime() - c0).Seconds(), runs, commits, float64(fi.Size())/1e6)

	l, err := ledger.Open(dir)
	must(err)
	// The boundaries below are made beside the ledger, on a vault of their
	// own, as another quire process would make them.
	bv, err := vault.Open(dir)
	must(err)
	defer bv.Close()
	statePath := filepath.Join(dir, ".quire", "check-history.json")
	var full, fullCPU []time.Duration
	var rep *ledger.HistoryReport
	for r := 0; r < rounds; r++ {
		os.Remove(statePath)
		t, c := time.Now(), cpuTime()
		var problems []ledger.Problem
		rep, problems, err = l.CheckHistory()
		must(err)
		full, fullCPU = append(full, time.Since(t)), append(fullCPU, cpuTime()-c)
		if len(problems) > 0 || rep.Commits != commits {
			must(fmt.Errorf("the full walk proved %d of %d commits and found %d problems (first: %v)", rep.Commits, commits, len(problems), problems[0]))
		}
	}
	fmt.Printf("   full walk (%d commits, %d objects read): median %s of %d (CPU %s)\n", rep.Commits, rep.Reads, secs(pct(full, 50)), len(full), secs(pct(fullCPU, 50)))

	// The second check: nothing new, then 10 boundaries made by quire.
	var none, ten, noneCPU, tenCPU []time.Duration
	var reads int
	for r := 0; r < 5; r++ {
		t, c := time.Now(), cpuTime()
		_, _, err = l.CheckHistory()
		must(err)
		none, noneCPU = append(none, time.Since(t)), append(noneCPU, cpuTime()-c)
		for i := 0; i < 10; i++ {
			b.boundaryOnDisk(bv, names[rand.Intn(len(names))])
		}
		t, c = time.Now(), cpuTime()
		rep, _, err = l.CheckHistory()
		must(err)
		ten, tenCPU = append(ten, time.Since(t)), append(tenCPU, cpuTime()-c)
		reads = rep.Reads
		if rep.Commits != 10 {
			must(fmt.Errorf("the incremental walk proved %d commits, not the 10 new", rep.Commits))
		}
	}
	fmt.Printf("   incremental second check: nothing new %s (CPU %s), 10 new boundaries %s (CPU %s, %d objects read) (medians of 5)\n",
		ms(pct(none, 50)), ms(pct(noneCPU, 50)), ms(pct(ten, 50)), ms(pct(tenCPU, 50)), reads)
	l.Close()
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

// historyBuilder writes one pack of a vault's whole history.
type historyBuilder struct {
	dir, packPath string
	f             *os.File
	w             *bufio.Writer
	off           int64
	crc           uint32
	objs          []packed
	have          map[vault.Hash]bool
	zbuf          bytes.Buffer
	zw            *zlib.Writer

	// The large objects, each a delta of its last version.
	runsTree, index chain
	// The runs, for boundaries after the build: folder → last seq and log.
	logs map[string][]byte
	seq  int64
}

type packed struct {
	id  vault.Hash
	off int64
	crc uint32
}

// chain is the last version of an object stored as deltas.
type chain struct {
	off   int64 // where the last version is in the pack
	size  int
	depth int
}

func newHistoryBuilder(dir string) *historyBuilder {
	b := &historyBuilder{dir: dir, have: map[vault.Hash]bool{}, logs: map[string][]byte{}}
	b.zw, _ = zlib.NewWriterLevel(&b.zbuf, zlib.BestSpeed)
	return b
}

func objectID(typ string, content []byte) vault.Hash {
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", typ, len(content))
	h.Write(content)
	var id vault.Hash
	copy(id[:], h.Sum(nil))
	return id
}

var packTypes = map[string]byte{"commit": 1, "tree": 2, "blob": 3}

func (b *historyBuilder) raw(p []byte) {
	b.w.Write(p)
	b.crc = crc32.Update(b.crc, crc32.IEEETable, p)
	b.off += int64(len(p))
}

func (b *historyBuilder) header(t byte, size int) {
	c := t<<4 | byte(size&15)
	size >>= 4
	var h []byte
	for size > 0 {
		h = append(h, c|0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	b.raw(append(h, c))
}

func (b *historyBuilder) deflate(p []byte) {
	b.zbuf.Reset()
	b.zw.Reset(&b.zbuf)
	b.zw.Write(p)
	b.zw.Close()
	b.raw(b.zbuf.Bytes())
}

// put stores an object whole, unless the pack has it; it answers its id
// and where it is.
func (b *historyBuilder) put(typ string, content []byte) (vault.Hash, int64) {
	id := objectID(typ, content)
	if b.have[id] {
		return id, -1
	}
	b.have[id] = true
	start := b.off
	b.crc = 0
	b.header(packTypes[typ], len(content))
	b.deflate(content)
	b.objs = append(b.objs, packed{id: id, off: start, crc: b.crc})
	return id, start
}

// putVersion stores the next version of a chained object: a delta of the
// last one that copies its first keep bytes and its last tail bytes, or the
// whole object when the chain is 50 long.
func (b *historyBuilder) putVersion(c *chain, typ string, content []byte, keep, tail int) vault.Hash {
	if c.size == 0 || c.depth >= 50 {
		id, off := b.put(typ, content)
		if off >= 0 {
			*c = chain{off: off, size: len(content)}
		}
		return id
	}
	id := objectID(typ, content)
	if b.have[id] {
		return id
	}
	b.have[id] = true
	var d []byte
	d = binary.AppendUvarint(d, uint64(c.size))
	d = binary.AppendUvarint(d, uint64(len(content)))
	cp := func(off, n int) {
		for n > 0 {
			m := min(n, 0xffffff)
			cmd := byte(0x80)
			var args []byte
			for i := 0; i < 4; i++ {
				if v := byte(off >> (8 * i)); v != 0 {
					cmd |= 1 << i
					args = append(args, v)
				}
			}
			for i := 0; i < 3; i++ {
				if v := byte(m >> (8 * i)); v != 0 {
					cmd |= 0x10 << i
					args = append(args, v)
				}
			}
			d = append(append(d, cmd), args...)
			off, n = off+m, n-m
		}
	}
	cp(0, keep)
	for ins := content[keep : len(content)-tail]; len(ins) > 0; {
		n := min(len(ins), 127)
		d = append(append(d, byte(n)), ins[:n]...)
		ins = ins[n:]
	}
	cp(c.size-tail, tail)
	start := b.off
	b.crc = 0
	b.header(6, len(d)) // OFS_DELTA
	rel := start - c.off
	ofs := []byte{byte(rel & 127)}
	for rel >>= 7; rel > 0; rel >>= 7 {
		rel--
		ofs = append([]byte{byte(0x80 | rel&127)}, ofs...)
	}
	b.raw(ofs)
	b.deflate(d)
	b.objs = append(b.objs, packed{id: id, off: start, crc: b.crc})
	*c = chain{off: start, size: len(content), depth: c.depth + 1}
	return id
}

type entry struct {
	mode string
	name string
	id   vault.Hash
}

func treeBytes(es []entry) []byte {
	sort.Slice(es, func(i, j int) bool {
		a, b := es[i].name, es[j].name
		if es[i].mode == "40000" {
			a += "/"
		}
		if es[j].mode == "40000" {
			b += "/"
		}
		return a < b
	})
	var out []byte
	for _, e := range es {
		out = append(out, e.mode...)
		out = append(out, ' ')
		out = append(out, e.name...)
		out = append(out, 0)
		out = append(out, e.id[:]...)
	}
	return out
}

// build writes the history: the vault's first commit, then runs started
// evenly over the commits and boundaries (a step appended, the state
// rewritten) on random runs between, a run ending and being archived now
// and then. It answers the run folders' paths.
func (b *historyBuilder) build(runs, commits int) []string {
	rng := rand.New(rand.NewSource(7))
	packDir := filepath.Join(b.dir, ".git", "objects", "pack")
	must(os.MkdirAll(packDir, 0o755))
	for _, d := range []string{"refs/heads", "refs/tags"} {
		must(os.MkdirAll(filepath.Join(b.dir, ".git", d), 0o755))
	}
	must(os.WriteFile(filepath.Join(b.dir, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	must(os.WriteFile(filepath.Join(b.dir, ".git", "config"), []byte("[core]\n\trepositoryformatversion = 0\n\tbare = false\n"), 0o644))
	tmp := filepath.Join(packDir, "tmp.pack")
	var err error
	b.f, err = os.Create(tmp)
	must(err)
	b.w = bufio.NewWriterSize(b.f, 1<<20)
	b.raw(make([]byte, 12)) // the header, written last

	config := []byte("org: bench\n")
	gitignore := []byte(".quire/\n")
	must(os.WriteFile(filepath.Join(b.dir, "quire.yaml"), config, 0o644))
	must(os.WriteFile(filepath.Join(b.dir, ".gitignore"), gitignore, 0o644))
	cfgID, _ := b.put("blob", config)
	ignID, _ := b.put("blob", gitignore)
	agentsID, _ := b.put("blob", []byte("# Agents\n\nRead the capsule before writing to a run folder.\n"))
	emptyID, _ := b.put("blob", nil)
	keepTree, _ := b.put("tree", treeBytes([]entry{{"100644", ".gitkeep", emptyID}}))

	var runsTree []byte // playbook-runs/, patched in place
	runsTree = treeBytes([]entry{{"100644", "AGENTS.md", agentsID}})
	var index []byte
	type run struct {
		name        string
		at          int // where its entry's id is in runsTree
		def, ctx    vault.Hash
		thread, log []byte
		lines       int
		archived    bool
	}
	var live []*run
	var all []*run
	parent := vault.ZeroHash
	when := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	folder := func(r *run, state []byte) vault.Hash {
		threadID, _ := b.put("blob", r.thread)
		logID, _ := b.put("blob", r.log)
		stateID, _ := b.put("blob", state)
		id, _ := b.put("tree", treeBytes([]entry{{"40000", "artifacts", keepTree}, {"100644", "context.md", r.ctx},
			{"100644", "definition.md", r.def}, {"100644", "run.jsonl", logID}, {"100644", "run.state.json", stateID}, {"100644", "thread.md", threadID}}))
		return id
	}
	line := func(ev, step string) []byte {
		b.seq++
		return []byte(fmt.Sprintf(`{"event":%q,"timestamp":%q,"step":%q,"detail":"Reviewed %d entries","seq":%d,"subject":"workflow/close-the-month","actor":"agent-7","data":{}}`+"\n",
			ev, when.Format("2006-01-02T15:04:05.000Z"), step, rng.Intn(100), b.seq))
	}
	for i := 0; i < commits; i++ {
		when = when.Add(time.Minute)
		var msg string
		keep, tail := 0, 0 // what of runsTree's last version this one keeps
		indexKeep := len(index)
		switch {
		case i == 0:
			msg = "Make the vault of bench"
		case len(all) < runs && i >= len(all)*(commits-1)/runs+1:
			uid := fmt.Sprintf("019a4012-7c3e-7d10-9b2a-%012x", len(all))
			r := &run{name: "close-the-month-" + uid + "-2026-11-01"}
			r.def, _ = b.put("blob", []byte("---\nuid: "+uid+"\ntype: playbook-run\nplaybook: 5e1c0a77\nplaybook_version: \"1\"\nmember_of:\n  - 0c1d2e3f\nexecutor: agent-7\nauthorized_by: ana\n---\n\n# close-the-month run "+uid+"\n"))
			r.ctx, _ = b.put("blob", []byte("Close the month of October for "+uid+".\n"))
			r.thread = []byte("# Thread of run " + uid + "\n\n")
			r.log = line("run_created", "")
			r.lines = 1
			id := folder(r, []byte(fmt.Sprintf(`{"run_id":%q,"events":1,"last_seq":%d}`, uid, b.seq)))
			keep = len(runsTree)
			runsTree = append(runsTree, "40000 "+r.name+"\x00"...)
			r.at = len(runsTree)
			runsTree = append(runsTree, id[:]...)
			live, all = append(live, r), append(all, r)
			index = append(index, fmt.Sprintf(`{"uid":%q,"type":"playbook-run","path":"playbook-runs/%s","playbook":"finance","name":"close-the-month"}`+"\n", uid, r.name)...)
			msg = "finance: start run " + uid
		default:
			k := rng.Intn(len(live))
			r := live[k]
			switch {
			case r.lines >= 12 && rng.Intn(3) == 0 && !bytes.Contains(r.log, []byte(`"run_succeeded"`)):
				r.log = append(r.log, line("run_succeeded", "")...)
				msg = "finance: run ended"
			case bytes.Contains(r.log, []byte(`"run_succeeded"`)):
				r.log = append(r.log, line("archived", "")...)
				r.archived = true
				live = append(live[:k], live[k+1:]...)
				msg = "finance: run archived"
			default:
				r.log = append(r.log, line("step_completed", fmt.Sprintf("do/%d/review", r.lines))...)
				r.thread = append(r.thread, fmt.Sprintf("Step %d done.\n", r.lines)...)
				msg = "finance: step_completed"
			}
			r.lines++
			id := folder(r, []byte(fmt.Sprintf(`{"events":%d,"last_seq":%d}`, r.lines, b.seq)))
			copy(runsTree[r.at:], id[:])
			keep, tail = r.at, len(runsTree)-r.at-20
		}
		runsID := b.putVersion(&b.runsTree, "tree", runsTree, keep, tail)
		indexID := b.putVersion(&b.index, "blob", index, indexKeep, 0)
		vaultTree, _ := b.put("tree", treeBytes([]entry{{"100644", "00-index.jsonl", indexID}}))
		root, _ := b.put("tree", treeBytes([]entry{{"100644", ".gitignore", ignID}, {"40000", "playbook-runs", runsID},
			{"100644", "quire.yaml", cfgID}, {"40000", "vault", vaultTree}}))
		var c bytes.Buffer
		fmt.Fprintf(&c, "tree %s\n", root)
		if !parent.IsZero() {
			fmt.Fprintf(&c, "parent %s\n", parent)
		}
		sig := fmt.Sprintf("agent-7 <agent-7@quire.invalid> %d +0000", when.Unix())
		fmt.Fprintf(&c, "author %s\ncommitter %s\n\n%s\n", sig, sig, msg)
		parent, _ = b.put("commit", c.Bytes())
	}
	b.finish(packDir, tmp, parent)
	// Leave the live runs' logs on disk for the boundaries after the build.
	var names []string
	for _, r := range live {
		rel := "playbook-runs/" + r.name
		must(os.MkdirAll(filepath.Join(b.dir, rel), 0o755))
		must(os.WriteFile(filepath.Join(b.dir, rel, "run.jsonl"), r.log, 0o644))
		names = append(names, rel)
	}
	return names
}

// finish writes the pack's header and checksum, its index (version 2) and
// the branch.
func (b *historyBuilder) finish(packDir, tmp string, head vault.Hash) {
	must(b.w.Flush())
	hdr := []byte("PACK\x00\x00\x00\x02")
	hdr = binary.BigEndian.AppendUint32(hdr, uint32(len(b.objs)))
	_, err := b.f.WriteAt(hdr, 0)
	must(err)
	_, err = b.f.Seek(0, io.SeekStart)
	must(err)
	h := sha1.New()
	_, err = io.Copy(h, b.f)
	must(err)
	sum := h.Sum(nil)
	_, err = b.f.Write(sum)
	must(err)
	must(b.f.Close())
	name := "pack-" + hex.EncodeToString(sum)
	must(os.Rename(tmp, filepath.Join(packDir, name+".pack")))
	b.packPath = filepath.Join(packDir, name+".pack")

	objs := b.objs
	sort.Slice(objs, func(i, j int) bool { return bytes.Compare(objs[i].id[:], objs[j].id[:]) < 0 })
	var idx []byte
	idx = append(idx, 0xff, 't', 'O', 'c', 0, 0, 0, 2)
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
	var large []uint64
	for _, o := range objs {
		if o.off < 1<<31 {
			idx = binary.BigEndian.AppendUint32(idx, uint32(o.off))
		} else {
			idx = binary.BigEndian.AppendUint32(idx, 1<<31|uint32(len(large)))
			large = append(large, uint64(o.off))
		}
	}
	for _, o := range large {
		idx = binary.BigEndian.AppendUint64(idx, o)
	}
	idx = append(idx, sum...)
	isum := sha1.Sum(idx)
	idx = append(idx, isum[:]...)
	must(os.WriteFile(filepath.Join(packDir, name+".idx"), idx, 0o444))
	must(os.WriteFile(filepath.Join(b.dir, ".git", "refs", "heads", "main"), []byte(head.String()+"\n"), 0o644))
}

// boundaryOnDisk appends a step to a run's log on disk and commits it with
// quire's committer, as a boundary does.
func (b *historyBuilder) boundaryOnDisk(v *vault.Vault, rel string) {
	b.seq++
	ln := `{"event":"step_completed","timestamp":"2026-12-01T00:00:00.000Z","step":"do/99/more","detail":"more","seq":` + strconv.FormatInt(b.seq, 10) + "}\n"
	_, err := vault.AppendLine(filepath.Join(b.dir, rel, "run.jsonl"), []byte(ln))
	must(err)
	must(v.Locked(func() error {
		_, err := v.Commit([]string{rel + "/run.jsonl"}, vault.Signature{Name: "agent-7", When: time.Now()}, "bench: step_completed")
		return err
	}))
}
