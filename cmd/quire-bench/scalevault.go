package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"quire/internal/fsys"
	"quire/ledger"
	"quire/vault"
	"quire/vault/git/index"
	"quire/vault/git/object"
)

// The scale section's vaults (issue 28): up to 100,000 runs of two
// definitions in every state, made at object level. The doors' builder
// (doorVault) commits its copies with git add -A, git gc and quire reindex,
// which takes minutes at 20,000 runs and grows past what make bench can
// wait for at 100,000. This one makes ten runs through the operations
// (close and pay, each active, succeeded, failed, paused and archived),
// copies them with their own ids, times (9 s apart: 100,000 runs end
// within 11 days of the first, before the clock, as quire check wants an
// event no later than 5 minutes ahead of it), executors (agent-0
// to agent-7) and seqs, writes every file of the work tree into one pack
// as one commit on top of the operations' history, and writes .git/index
// from the files' stats, so git status finds the work tree clean without
// hashing it (version 4, as quire init's settings make it, with the
// cache-tree quire's commits write). The vault is
// kept under the temporary folder, keyed by scaleVaultVersion and the
// size, and used as it is left.

const scaleVaultVersion = "v3"

// scaleTime is the time the template runs are recorded at; a copy's
// events take its own time in its place.
const scaleTime = "2026-11-01T07:00:00.000Z"

// scaleTemplate is one run made through the operations, as its files say.
type scaleTemplate struct {
	id, folder string
	files      map[string]string // name in the folder → content
	indexLine  string
}

func scaleVault(n int) (string, []string) {
	dir := filepath.Join(os.TempDir(), "quire-bench-vaults", fmt.Sprintf("scale-%s-%d", scaleVaultVersion, n))
	ready := dir + ".ready"
	ids := make([]string, 0, n)
	if data, err := os.ReadFile(ready); err == nil && json.Unmarshal(data, &ids) == nil && len(ids) == n {
		return dir, ids
	}
	t0, c0 := time.Now(), cpuTime()
	must(os.RemoveAll(dir))
	os.Remove(ready)
	must(os.MkdirAll(filepath.Dir(dir), 0o755))
	tmpls, seq := scaleTemplates(dir)
	for _, t := range tmpls {
		ids = append(ids, t.id)
	}
	idx, err := os.OpenFile(filepath.Join(dir, vault.IndexFile), os.O_WRONLY|os.O_APPEND, 0)
	must(err)
	base, _ := time.Parse(time.RFC3339, scaleTime)
	for i := len(tmpls); i < n; i++ {
		id := fmt.Sprintf("019a4012-7c3e-7d10-9b2a-%012x", i)
		at := base.Add(time.Duration(i) * 9 * time.Second)
		var line string
		line, seq = scaleCopy(dir, tmpls[i%len(tmpls)], id, fmt.Sprintf("agent-%d", i%8), at, seq)
		_, err := idx.WriteString(line)
		must(err)
		ids = append(ids, id)
	}
	must(idx.Close())
	scaleCommit(dir, fmt.Sprintf("bench: %d runs", n))
	must(os.RemoveAll(filepath.Join(dir, vault.QuireDir)))
	l, err := ledger.Open(dir)
	must(err)
	must(l.Reindex())
	l.Close()
	data, _ := json.Marshal(ids)
	must(os.WriteFile(ready, data, 0o644))
	fmt.Printf("   made the vault of %d runs in %.1f s (CPU %.1f s; kept in %s)\n", n, time.Since(t0).Seconds(), (cpuTime() - c0).Seconds(), dir)
	return dir, ids
}

// scaleTemplates makes the vault and its ten template runs through the
// operations, and answers them and the last seq of the playbook.
func scaleTemplates(dir string) ([]*scaleTemplate, int64) {
	v, err := vault.Init(dir, "bench", time.Now())
	must(err)
	l := ledger.New(v)
	defer l.Close()
	call := func(op, args string, a ...any) any {
		res, err := l.Call(context.Background(), op, json.RawMessage(fmt.Sprintf(args, a...)))
		must(err)
		return res
	}
	p := call("create_project", `{"name":"Operations"}`).(*ledger.Project)
	call("create_playbook", `{"playbook":"finance","name":"Finance"}`)
	var out []*scaleTemplate
	var last int64
	for _, def := range []string{"close", "pay"} {
		call("create_definition", `{"playbook":"finance","type":"workflow","name":%q,"source":"document:\n  name: %s\n"}`, def, def)
		for _, end := range []string{"active", "succeeded", "failed", "paused", "archived"} {
			r := call("run_definition", `{"playbook":"finance","type":"workflow","name":%q,"member_of":[%q],"executor":"agent-7","authorized_by":"ana","time":%q}`, def, p.UID, scaleTime).(*ledger.Run)
			on := fmt.Sprintf(`"playbook":"finance","run_id":%q,"actor":"agent-7","time":%q`, r.RunID, scaleTime)
			switch end {
			case "succeeded", "archived":
				r = call("end_run", `{%s,"status":"succeeded","output":{"total":12}}`, on).(*ledger.Run)
			case "failed":
				r = call("end_run", `{%s,"status":"failed","detail":"the bank was closed"}`, on).(*ledger.Run)
			case "paused":
				r = call("transition_run", `{%s,"to":"paused","reason":"waits for ana"}`, on).(*ledger.Run)
			}
			if end == "archived" {
				r = call("transition_run", `{%s,"to":"archived","reason":"done"}`, on).(*ledger.Run)
			}
			last = r.LastSeq
			t := &scaleTemplate{id: r.RunID, folder: r.Path, files: map[string]string{}}
			for _, name := range []string{"definition.md", "context.md", "thread.md", "run.jsonl", "run.state.json", "artifacts/.gitkeep"} {
				data, err := os.ReadFile(filepath.Join(dir, r.Path, name))
				must(err)
				t.files[name] = string(data)
			}
			out = append(out, t)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, vault.IndexFile))
	must(err)
	for _, ln := range strings.SplitAfter(string(data), "\n") {
		for _, t := range out {
			if strings.Contains(ln, `"uid":"`+t.id+`"`) {
				t.indexLine = ln
			}
		}
	}
	return out, last
}

var seqField = regexp.MustCompile(`"seq":\d+`)

// scaleCopy writes a copy of t as the run id, with its executor, time and
// seqs from seq on; it answers its index line and the last seq.
func scaleCopy(dir string, t *scaleTemplate, id, executor string, at time.Time, seq int64) (string, int64) {
	when := at.UTC().Format("2006-01-02T15:04:05.000Z")
	oldBase := path.Base(t.folder)
	newBase := strings.Replace(strings.Replace(oldBase, t.id, id, 1), scaleTime[:10], when[:10], 1)
	folder := path.Join(path.Dir(t.folder), newBase)
	swap := strings.NewReplacer(t.id, id, scaleTime, when, "agent-7", executor, oldBase, newBase)
	log := seqField.ReplaceAllStringFunc(swap.Replace(t.files["run.jsonl"]), func(string) string {
		seq++
		return `"seq":` + strconv.FormatInt(seq, 10)
	})
	abs := filepath.Join(dir, filepath.FromSlash(folder))
	must(os.MkdirAll(filepath.Join(abs, "artifacts"), 0o755))
	for name, text := range t.files {
		switch name {
		case "run.jsonl":
			text = log
		case "run.state.json":
			var st map[string]any
			must(json.Unmarshal([]byte(swap.Replace(text)), &st))
			st["last_seq"], st["log_bytes"] = seq, len(log)
			b, err := json.MarshalIndent(st, "", "  ")
			must(err)
			text = string(b) + "\n"
		default:
			text = swap.Replace(text)
		}
		must(os.WriteFile(filepath.Join(abs, filepath.FromSlash(name)), []byte(text), 0o644))
	}
	return swap.Replace(t.indexLine), seq
}

// scaleCommit writes the work tree (all but .git and .quire) into one new
// pack as a commit on HEAD, moves the branch to it and writes .git/index
// from the files' stats.
func scaleCommit(dir, msg string) {
	v, err := vault.Open(dir)
	must(err)
	parent, err := v.HeadCommit()
	must(err)
	v.Close()
	b := newHistoryBuilder(dir)
	packDir := filepath.Join(dir, ".git", "objects", "pack")
	must(os.MkdirAll(packDir, 0o755))
	tmp := filepath.Join(packDir, "tmp-scale.pack")
	b.f, err = os.Create(tmp)
	must(err)
	b.w = bufio.NewWriterSize(b.f, 1<<20)
	b.raw(make([]byte, 12))
	var entries []*index.Entry
	var top []index.TreeNode
	root := b.putDir(dir, "", &entries, &top)
	var c strings.Builder
	fmt.Fprintf(&c, "tree %s\nparent %s\n", root, parent)
	sig := fmt.Sprintf("bench <bench@quire.invalid> %d +0000", time.Now().Unix())
	fmt.Fprintf(&c, "author %s\ncommitter %s\n\n%s\n", sig, sig, msg)
	head, _ := b.put("commit", []byte(c.String()))
	b.finish(packDir, tmp, head)
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	for i := range top {
		prefix := top[i].Name + "/"
		for _, e := range entries {
			if strings.HasPrefix(e.Name, prefix) {
				top[i].Count++
			}
		}
	}
	// The index is written after every file, so that no entry is as new
	// as the index itself (git reads such a "racy" entry's file again),
	// with the cache-tree quire's commits write (vault/gitindex.go): the
	// root and its folders, the trees just made.
	time.Sleep(10 * time.Millisecond)
	ext := index.AppendExtension(nil, "TREE", index.AppendCacheTree(nil, root, len(entries), top))
	must(os.WriteFile(filepath.Join(dir, ".git", "index"), index.EncodeExt(nil, entries, true, ext), 0o644))
}

// putDir stores the folder rel of the work tree as a tree (its files as
// blobs) and adds its files' index entries, and, for the root, its
// folders' trees to top.
func (b *historyBuilder) putDir(dir, rel string, entries *[]*index.Entry, top *[]index.TreeNode) vault.Hash {
	des, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(rel)))
	must(err)
	var es []entry
	for _, de := range des {
		name := path.Join(rel, de.Name())
		if name == ".git" || name == vault.QuireDir {
			continue
		}
		if de.IsDir() {
			id := b.putDir(dir, name, entries, nil)
			es = append(es, entry{"40000", de.Name(), id})
			if rel == "" {
				*top = append(*top, index.TreeNode{Name: de.Name(), Tree: id})
			}
			continue
		}
		abs := filepath.Join(dir, filepath.FromSlash(name))
		data, err := os.ReadFile(abs)
		must(err)
		id, _ := b.put("blob", data)
		fi, err := os.Lstat(abs)
		must(err)
		e := &index.Entry{Name: name, Hash: id, Mode: object.Regular, ModifiedAt: fi.ModTime(), Size: uint32(fi.Size())}
		if st, ok := fsys.Stat(fi); ok {
			e.CreatedAt, e.Dev, e.Inode, e.UID, e.GID = st.Ctime, uint32(st.Dev), uint32(st.Ino), st.UID, st.GID
		}
		*entries = append(*entries, e)
		es = append(es, entry{"100644", de.Name(), id})
	}
	id, _ := b.put("tree", treeBytes(es))
	return id
}
