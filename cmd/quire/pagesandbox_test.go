package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// A page's module finds no SharedArrayBuffer and no Atomics in the
// sandbox (the page format lists the language's library; shared memory
// has no use in a fold and is the stuff of timers made by hand): read by
// name and through globalThis, each is undefined, as the render shows. A
// vault with typecheck: syntax-only saves a module that names them; the
// type check refuses the bare names at save, so through globalThis is
// how a checked module reaches them.
func TestCLIPageSandboxHasNoSharedMemory(t *testing.T) {
	t.Parallel()
	dir, v, project := newCLIVault(t)
	f, err := os.OpenFile(filepath.Join(dir, "quire.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("typecheck: syntax-only\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	quire(t, "", v, "call", "create_playbook", "--args", `{"playbook":"lab","name":"Lab"}`)
	const doc = `document:
  name: globals
page:
  data:
    language: typescript
    source:
      events:
        - type: run_succeeded
    views:
      note: text
    module: |
      export function fold(view: View, event: Event): View {
        const g = globalThis as unknown as Record<string, unknown>;
        return { note: { text: [typeof SharedArrayBuffer, typeof Atomics, typeof g['SharedArrayBuffer'], typeof g['Atomics']].join(' ') } };
      }
  runs: |
    {{ views.note.text }}
`
	args, _ := json.Marshal(map[string]string{"playbook": "lab", "type": "workflow", "name": "globals", "source": doc})
	if code, out, errs := quire(t, string(args), v, "call", "create_definition", "--args", "-"); code != 0 {
		t.Fatalf("create_definition: %d %s %s", code, out, errs)
	}
	code, out, errs := quire(t, "", v, "run", "start", "--playbook", "lab", "--name", "globals", "--member-of", project,
		"--executor", "agent-7", "--authorized-by", "ana", "--json")
	var r struct {
		RunID string `json:"run_id"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("run start: %d %s %s", code, out, errs)
	}
	if code, out, errs := quire(t, "", v, "run", "end", "succeeded", "--playbook", "lab", "--run", r.RunID, "--output", `{}`, "--actor", "agent-7"); code != 0 {
		t.Fatalf("run end: %d %s %s", code, out, errs)
	}
	code, out, errs = quire(t, "", v, "page", "render", "--playbook", "lab", "--name", "globals")
	if want := "# runs\n\nundefined undefined undefined undefined\n"; code != 0 || out != want {
		t.Fatalf("render: %d %q %s, want %q", code, out, errs, want)
	}
}
