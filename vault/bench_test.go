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
