package fold

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// unaskedEnv makes the test binary a program whose main does not call
// ServeIfWorker (TestMain).
const unaskedEnv = "QUIRE_FOLD_TEST_UNASKED"

// A program whose main does not call ServeIfWorker is refused its first
// fold, naming the call, and starts no worker: a worker would be the
// program itself, running main (here, the tests) again.
func TestAFoldNeedsServeIfWorker(t *testing.T) {
	if os.Getenv(unaskedEnv) != "" {
		p, err := NewPool(PoolOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		prog := jsProgram(`export function fold(view, event) { return { n: { text: "1" } } }`, map[string]string{"n": "text"})
		_, err = p.Fold(context.Background(), prog, nil, []Event{event(1, time.Now(), "{}")})
		if err == nil || !strings.Contains(err.Error(), "does not call fold.ServeIfWorker") {
			t.Fatalf("a fold without ServeIfWorker: %v", err)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestAFoldNeedsServeIfWorker$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), unaskedEnv+"=1")
	out, err := cmd.CombinedOutput()
	// Standard error says it too, for a fold in the background.
	if err != nil || !strings.Contains(string(out), "--- PASS: TestAFoldNeedsServeIfWorker") ||
		!strings.Contains(string(out), "fold: this program's main does not call fold.ServeIfWorker first") {
		t.Fatalf("%v\n%s", err, out)
	}
}
