//go:build unix

package fold

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A process killed while it folds leaves its pool's folder in the
// temporary folder (Close never ran): the next pool removes the folders
// of processes that are gone, and keeps a live process's and what is not
// a pool's.
func TestAPoolRemovesTheFoldersOfGoneProcesses(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	left := filepath.Join(tmp, fmt.Sprintf("quire-fold-%d-123", gone.Process.Pid))
	live := filepath.Join(tmp, fmt.Sprintf("quire-fold-%d-456", os.Getppid()))
	other := filepath.Join(tmp, "quire-fold-notapid-789")
	for _, d := range []string{left, live, other} {
		if err := os.MkdirAll(filepath.Join(d, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	p, err := NewPool(PoolOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mine := p.dir
	if filepath.Dir(mine) != tmp || filepath.Base(mine)[:len(fmt.Sprintf("quire-fold-%d-", os.Getpid()))] != fmt.Sprintf("quire-fold-%d-", os.Getpid()) {
		t.Fatalf("the pool's folder %s does not name its process", mine)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the folder of a gone process is still there: %v", err)
	}
	for _, d := range []string{live, other, mine} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
	p.Close()
	if _, err := os.Stat(mine); !os.IsNotExist(err) {
		t.Errorf("Close left the pool's folder: %v", err)
	}
}
