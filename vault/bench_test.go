package vault

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func BenchmarkBoundaryCommit(b *testing.B) {
	dir := b.TempDir()
	v, err := Init(dir, "bench", time.Now())
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close() // waits for a compaction still writing in dir
	var names []string
	for i := 0; i < 1000; i++ {
		n := fmt.Sprintf("playbook-runs/r-%05d", i)
		names = append(names, n)
		os.MkdirAll(filepath.Join(dir, n), 0o755)
		for _, f := range []string{"definition.md", "thread.md", "run.jsonl", "run.state.json"} {
			os.WriteFile(filepath.Join(dir, n, f), []byte(n+f), 0o644)
		}
	}
	v.Locked(func() error {
		_, err := v.Commit([]string{"playbook-runs"}, Signature{Name: "x", When: time.Now()}, "seed")
		return err
	})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := names[i%len(names)]
		AppendLine(filepath.Join(dir, n, "run.jsonl"), []byte("{}\n"))
		if err := v.Locked(func() error {
			_, err := v.Commit([]string{n}, Signature{Name: "x", When: time.Now()}, "b")
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpen20000 is the cost of opening a vault of 20,000 files (5,000
// runs of 4): in step, where the index stamp holds (a file read, a ref read
// and a stat), and out of step, where .git/index is compared with HEAD's
// whole tree (and, here, found to agree).
func BenchmarkOpen20000(b *testing.B) {
	dir := b.TempDir()
	v, err := Init(dir, "bench", time.Now())
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 5000; i++ {
		n := filepath.Join(dir, fmt.Sprintf("playbook-runs/r-%05d", i))
		os.MkdirAll(n, 0o755)
		for _, f := range []string{"definition.md", "thread.md", "run.jsonl", "run.state.json"} {
			os.WriteFile(filepath.Join(n, f), []byte(n+f), 0o644)
		}
	}
	if err := v.Locked(func() error {
		_, err := v.Commit([]string{"playbook-runs"}, Signature{Name: "x", When: time.Now()}, "seed")
		return err
	}); err != nil {
		b.Fatal(err)
	}
	v.Close()
	b.Run("in-step", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			v, err := Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			v.Close()
		}
	})
	b.Run("compared", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			os.Remove(filepath.Join(dir, QuireDir, stampFile))
			v, err := Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			v.Close()
		}
	})
}
