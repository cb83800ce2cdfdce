package vault

import (
	"bufio"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReadsLeaveFewPackPagesResident reads every blob of a 16 MB pack
// through a vault held open, as a warm server reads them over its hours,
// and holds the pages the process keeps mapped of the pack to a few MB:
// the kernel maps the cached pages around each one read, so a reader
// that never lets them go holds the whole pack (issue 28: 100 MB of a
// 127 MB pack in quire serve at 100,000 runs).
func TestReadsLeaveFewPackPagesResident(t *testing.T) {
	// The reads here take less than the interval between releases,
	// which bounds their cost where reads come by the thousand.
	defer func(d time.Duration) { packReleaseAfter = d }(packReleaseAfter)
	packReleaseAfter = 0
	dir := t.TempDir()
	v, err := Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	v.Close()
	const files, size = 1000, 16 << 10
	if err := os.MkdirAll(filepath.Join(dir, "bulk"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range files {
		b := make([]byte, size)
		rand.Read(b) // not compressed, nor deltified: 16 MB of pack
		if err := os.WriteFile(filepath.Join(dir, "bulk", fmt.Sprint(i)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitOut(t, dir, "add", "bulk")
	gitOut(t, dir, "-c", "user.name=rui", "-c", "user.email=rui@example.com", "commit", "-qm", "bulk")
	gitOut(t, dir, "repack", "-adq")
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(gitOut(t, dir, "ls-tree", "HEAD:bulk")), "\n") {
		ids = append(ids, strings.Fields(line)[2])
	}
	v, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	for _, id := range ids {
		if b, err := v.ReadBlob(id); err != nil || len(b) != size {
			t.Fatalf("blob %s: %d bytes, %v", id, len(b), err)
		}
	}
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	var held int
	for _, p := range packs {
		held += residentKB(t, p)
	}
	if held > 8<<10 {
		t.Fatalf("after reading %d blobs of 16 KB, the process holds %d kB of its packs resident; want under 8 MB", files, held)
	}
}

// residentKB is how much of the file at path the process holds mapped and
// resident (/proc/self/smaps' Rss of its mappings), in kB.
func residentKB(t *testing.T, path string) int {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kb, in := 0, false
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		switch {
		case len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":"):
			in = len(fields) >= 6 && fields[5] == path
		case in && len(fields) == 3 && fields[0] == "Rss:":
			n, _ := strconv.Atoi(fields[1])
			kb += n
		}
	}
	return kb
}

// TestARemovedPackIsLetGo holds a vault open while git's repack replaces
// its pack, as a warm server sees a person's git gc: the reads go on from
// the pack that replaced it, and once the interval between releases has
// passed a read lets the removed pack's mapping go, so that its space on
// the disk is freed while the server runs.
func TestARemovedPackIsLetGo(t *testing.T) {
	defer func(d time.Duration) { packReleaseAfter = d }(packReleaseAfter)
	packReleaseAfter = 50 * time.Millisecond
	dir := t.TempDir()
	v, err := Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	v.Close()
	commit := func(name string) string {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		gitOut(t, dir, "add", name)
		gitOut(t, dir, "-c", "user.name=rui", "-c", "user.email=rui@example.com", "commit", "-qm", name)
		gitOut(t, dir, "repack", "-adq")
		return strings.TrimSpace(gitOut(t, dir, "rev-parse", "HEAD:"+name))
	}
	first := commit("one")
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		t.Fatalf("packs after the first repack: %v", packs)
	}
	v, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	read := func(id string) {
		t.Helper()
		if b, err := v.ReadBlob(id); err != nil || string(b) != "one\n" && string(b) != "two\n" {
			t.Fatalf("blob %s: %q, %v", id, b, err)
		}
	}
	read(first)
	if !mapped(t, packs[0]) {
		t.Fatalf("%s is not mapped after a read from it", packs[0])
	}
	second := commit("two") // the first pack removed, its objects in the new one
	if _, err := os.Stat(packs[0]); err == nil {
		t.Fatalf("git repack -ad left %s", packs[0])
	}
	read(first)
	read(second)
	time.Sleep(2 * packReleaseAfter)
	read(first)
	if mapped(t, packs[0]) {
		t.Fatalf("%s, removed by git repack, is still mapped after a read past the interval", packs[0])
	}
}

// mapped says whether the process maps the file at path (removed or not).
func mapped(t *testing.T, path string) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(b), " "+path)
}
