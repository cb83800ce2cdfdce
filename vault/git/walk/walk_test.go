package walk

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"quire/vault/git/object"
)

func rawTree(entries map[string]Entry) []byte {
	list := make([]object.TreeEntry, 0, len(entries))
	for _, e := range entries {
		m := object.Regular
		if e.Dir {
			m = object.Dir
		}
		list = append(list, object.TreeEntry{Name: e.Name, Mode: m, Hash: e.Hash})
	}
	object.SortTree(list)
	return object.AppendTree(nil, list)
}

// naiveDiff compares two trees decoded whole, entry by entry.
func naiveDiff(ea, eb []Entry) []string {
	var want []string
	i, j := 0, 0
	for i < len(ea) || j < len(eb) {
		switch {
		case i < len(ea) && j < len(eb) && ea[i].Name == eb[j].Name:
			if ea[i] != eb[j] {
				want = append(want, "~"+ea[i].Name)
			}
			i, j = i+1, j+1
		case j == len(eb) || (i < len(ea) && gitLess(ea[i], eb[j])):
			want = append(want, "-"+ea[i].Name)
			i++
		default:
			want = append(want, "+"+eb[j].Name)
			j++
		}
	}
	return want
}

// DiffTrees finds exactly the entries a naive comparison of the two trees
// decoded whole finds, in git's order, whatever changed where.
func TestDiffTreesIsTheNaiveDiff(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	randHash := func() (h object.Hash) { rng.Read(h[:]); return h }
	for round := 0; round < 300; round++ {
		old := map[string]Entry{}
		n := rng.Intn(60)
		for i := 0; i < n; i++ {
			name := fmt.Sprintf("run-%d", rng.Intn(100))
			if rng.Intn(7) == 0 {
				name = name + ".md"
			}
			old[name] = Entry{Name: name, Dir: rng.Intn(4) > 0, Hash: randHash()}
		}
		cur := map[string]Entry{}
		for k, v := range old {
			cur[k] = v
		}
		for c := rng.Intn(5); c > 0; c-- {
			name := fmt.Sprintf("run-%d", rng.Intn(100))
			switch rng.Intn(3) {
			case 0:
				delete(cur, name)
			case 1:
				e := cur[name]
				e.Name, e.Hash = name, randHash()
				cur[name] = e
			default:
				cur[name] = Entry{Name: name, Dir: rng.Intn(2) == 0, Hash: randHash()}
			}
		}
		a, b := rawTree(old), rawTree(cur)
		var got []string
		if err := DiffTrees(a, b, func(o, n *Entry) error {
			switch {
			case o == nil:
				got = append(got, "+"+n.Name)
			case n == nil:
				got = append(got, "-"+o.Name)
			default:
				got = append(got, "~"+o.Name)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		ea, _ := TreeEntries(a)
		eb, _ := TreeEntries(b)
		if want := naiveDiff(ea, eb); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("round %d: DiffTrees %v, naive %v", round, got, want)
		}
	}
}

// git runs the git CLI in dir and answers its output.
func git(tb testing.TB, dir string, args ...string) []byte {
	tb.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=p", "-c", "user.email=p@x"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// gitHistory makes a history with the git CLI: a dozen commits to run
// folders, a merge, the first half packed by git repack and the rest
// loose. It answers the repository and its commits, oldest first.
func gitHistory(tb testing.TB) (string, []string) {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("git is not installed")
	}
	dir := tb.TempDir()
	git(tb, dir, "init", "-q", "-b", "main")
	step := func(i int) {
		p := filepath.Join(dir, "playbook-runs", fmt.Sprintf("run-%02d", i%5), "run.jsonl")
		os.MkdirAll(filepath.Dir(p), 0o755)
		f, _ := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		fmt.Fprintf(f, `{"event":"step_completed","n":%d}`+"\n", i)
		f.Close()
		os.WriteFile(filepath.Join(dir, "playbook-runs", fmt.Sprintf("run-%02d.md", i%3)), []byte(fmt.Sprint(i)), 0o644)
		git(tb, dir, "add", "-A")
		git(tb, dir, "commit", "-q", "-m", fmt.Sprintf("step %d", i))
	}
	for i := 0; i < 6; i++ {
		step(i)
	}
	git(tb, dir, "repack", "-adq")
	git(tb, dir, "checkout", "-q", "-b", "side")
	os.MkdirAll(filepath.Join(dir, "playbook-runs", "run-side"), 0o755)
	os.WriteFile(filepath.Join(dir, "playbook-runs", "run-side", "run.jsonl"), []byte("{}\n"), 0o644)
	git(tb, dir, "add", "-A")
	git(tb, dir, "commit", "-q", "-m", "a run on a side branch")
	git(tb, dir, "checkout", "-q", "main")
	for i := 6; i < 12; i++ {
		step(i)
	}
	git(tb, dir, "merge", "-q", "--no-edit", "side")
	os.RemoveAll(filepath.Join(dir, "playbook-runs", "run-01"))
	git(tb, dir, "add", "-A")
	git(tb, dir, "commit", "-q", "-m", "a run folder removed")
	return dir, strings.Fields(string(git(tb, dir, "rev-list", "--reverse", "--topo-order", "HEAD")))
}

// The walk reads every object of a history git wrote, packed and loose, as
// git reads it, and as go-git does.
func TestHistoryReadsWhatGitWrites(t *testing.T) {
	dir, commits := gitHistory(t)
	h := Open(filepath.Join(dir, ".git"))
	defer h.Close()
	out := git(t, dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)")
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		hex, typ, _ := strings.Cut(line, " ")
		id, _ := object.ParseHash(hex)
		var got []byte
		var err error
		switch typ {
		case "tree":
			got, err = h.Tree(id)
		case "blob":
			got, err = h.Blob(id)
		case "commit":
			tree, parents, err := h.Commit(id)
			if want := strings.TrimSpace(string(git(t, dir, "show", "-s", "--format=%T %P", hex))); err != nil || strings.TrimSpace(fmt.Sprint(tree, " ", strings.Trim(fmt.Sprint(parents), "[]"))) != want {
				t.Fatalf("commit %s: %s %v (%v), git %s", hex, tree, parents, err, want)
			}
			continue
		}
		if err != nil || !bytes.Equal(got, git(t, dir, "cat-file", typ, hex)) {
			t.Fatalf("%s %s: read %q (%v)", typ, hex, got, err)
		}
		goGit, err := h.fromGoGit(object.Type(map[string]plumbing.ObjectType{"tree": plumbing.TreeObject, "blob": plumbing.BlobObject}[typ]), id)
		if err != nil || !bytes.Equal(goGit, got) {
			t.Fatalf("%s %s: go-git reads %q (%v)", typ, hex, goGit, err)
		}
	}
	if len(commits) < 12 || h.Reads == 0 {
		t.Fatalf("%d commits, %d reads", len(commits), h.Reads)
	}
}

// DiffTrees between each commit's root tree and its parent's, and their
// run folders, is what git diff-tree finds.
func TestDiffTreesIsGitDiffTree(t *testing.T) {
	dir, commits := gitHistory(t)
	h := Open(filepath.Join(dir, ".git"))
	defer h.Close()
	for _, c := range commits[1:] {
		id, _ := object.ParseHash(c)
		tree, parents, err := h.Commit(id)
		if err != nil {
			t.Fatal(err)
		}
		ptree, _, err := h.Commit(parents[0])
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		var diff func(prefix string, a, b object.Hash) error
		diff = func(prefix string, a, b object.Hash) error {
			ra, err := h.Tree(a)
			if err != nil {
				return err
			}
			rb, err := h.Tree(b)
			if err != nil {
				return err
			}
			return DiffTrees(ra, rb, func(o, n *Entry) error {
				switch {
				case o != nil && n != nil && o.Dir && n.Dir:
					return diff(prefix+o.Name+"/", o.Hash, n.Hash)
				case o != nil && o.Dir && n == nil:
					return diff(prefix+o.Name+"/", o.Hash, object.ZeroHash)
				case n != nil && n.Dir && o == nil:
					return diff(prefix+n.Name+"/", object.ZeroHash, n.Hash)
				case o == nil:
					got = append(got, "A\t"+prefix+n.Name)
				case n == nil:
					got = append(got, "D\t"+prefix+o.Name)
				default:
					got = append(got, "M\t"+prefix+o.Name)
				}
				return nil
			})
		}
		if err := diff("", ptree, tree); err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSpace(string(git(t, dir, "diff-tree", "-r", "--name-status", "--no-renames", parents[0].String(), c)))
		if strings.Join(got, "\n") != want {
			t.Fatalf("commit %s: DiffTrees\n%s\ngit diff-tree\n%s", c, strings.Join(got, "\n"), want)
		}
	}
}

// FuzzDiffTrees: whatever the bytes of two trees, DiffTrees and TreeFind
// answer or err, never panic; and for two trees in git's order, DiffTrees
// finds what comparing them decoded whole finds (seeds: each root tree and
// run folder git wrote beside its parent's).
func FuzzDiffTrees(f *testing.F) {
	dir, commits := gitHistory(f)
	for i := 1; i < len(commits); i++ {
		for _, path := range []string{"", ":playbook-runs", ":playbook-runs/run-02"} {
			ra, err1 := exec.Command("git", "-C", dir, "cat-file", "tree", commits[i-1]+"^{tree}"+path).Output()
			rb, err2 := exec.Command("git", "-C", dir, "cat-file", "tree", commits[i]+"^{tree}"+path).Output()
			if err1 == nil && err2 == nil {
				f.Add(ra, rb)
			}
		}
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		TreeFind(a, "run-02")
		var got []string
		err := DiffTrees(a, b, func(o, n *Entry) error {
			switch {
			case o == nil:
				got = append(got, "+"+n.Name)
			case n == nil:
				got = append(got, "-"+o.Name)
			default:
				got = append(got, "~"+o.Name)
			}
			return nil
		})
		ea, errA := TreeEntries(a)
		eb, errB := TreeEntries(b)
		if errA != nil || errB != nil || !inOrder(ea) || !inOrder(eb) {
			return
		}
		if err != nil {
			t.Fatalf("two trees that decode are refused: %v", err)
		}
		if want := naiveDiff(ea, eb); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("DiffTrees %v, naive %v", got, want)
		}
	})
}

// inOrder reports whether entries are in git's order, each name once.
func inOrder(entries []Entry) bool {
	seen := map[string]bool{}
	for i, e := range entries {
		if seen[e.Name] || i > 0 && !gitLess(entries[i-1], e) {
			return false
		}
		seen[e.Name] = true
	}
	return true
}
