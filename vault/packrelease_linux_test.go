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
