package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

// quire runs the CLI with args and returns its exit code, stdout and stderr.
// inProcess serializes the commands the tests run in this process: run is
// made for one call a process (urfave/cli writes to flags every app shares,
// its own HelpFlag among them), and parallel tests calling it at once race
// on them (the race detector found it). The binary never runs it twice.
var inProcess sync.Mutex

func quire(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	inProcess.Lock()
	code := run(append([]string{"quire"}, args...), strings.NewReader(stdin), &out, &errb)
	inProcess.Unlock()
	// A compaction the command handed to a worker ends before the test's
	// folders are removed (cleanups run last first: theirs were
	// registered before).
	t.Cleanup(workers.Wait)
	return code, out.String(), errb.String()
}

func TestAddressExplainCLI(t *testing.T) {
	// It needs no vault: run it in an empty folder.
	t.Chdir(t.TempDir())
	addr := "finance/definitions/workflow/close-the-week/4/steps/do/1/review"
	code, out, errs := quire(t, "", "address", "explain", addr, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var ex struct {
		Address  string `json:"address"`
		Kind     string `json:"kind"`
		Segments struct {
			Playbook, Type, Name, Step string
			Version                    int
		} `json:"segments"`
		Read    []struct{ Tool string } `json:"read"`
		Resolve *struct{ Tool string }  `json:"resolve"`
	}
	if err := json.Unmarshal([]byte(out), &ex); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if ex.Address != addr || ex.Kind != "step" || ex.Segments.Playbook != "finance" || ex.Segments.Step != "do/1/review" ||
		ex.Segments.Version != 4 || len(ex.Read) == 0 || ex.Read[0].Tool != "get_definition" || ex.Resolve == nil || ex.Resolve.Tool != "resolve_comment" {
		t.Errorf("explained as %+v\n%s", ex, out)
	}

	// Without --json, an aligned text for a person: what the address
	// names, its segments, each call with its arguments and its note.
	code, out, errs = quire(t, "", "address", "explain", addr)
	want := `address   finance/definitions/workflow/close-the-week/4/steps/do/1/review
names     a step of a workflow
kind      step
playbook  finance
type      workflow
name      close-the-week
version   4
step      do/1/review
read      get_definition playbook=finance type=workflow name=close-the-week
            the step is at /do/1/review in its source; a step that calls a function names it there, to read with get_definition and its type and name
act       update_definition playbook=finance type=workflow name=close-the-week
            of the workflow
act       update_definition playbook=finance
            or of the function the step calls, by the type and name its source names
resolve   resolve_comment playbook=finance
            with the comment's id and how acted
note      get_definition reads the current version; the address names version 4, so if the definition changed since, read the comment against the current document and act only where it still applies.
`
	if code != 0 || out != want {
		t.Errorf("text: exit %d %s\n%s", code, errs, out)
	}
	// A call that names no tool (not served here) is its note alone; a
	// part names the kind of its thing.
	code, out, _ = quire(t, "", "address", "explain", "org/connections/0190a1b2-0000-4000-8000-000000000000/parts/status")
	if code != 0 || !strings.Contains(out, "\nkind        part of a connection\n") || !strings.Contains(out, "\npart        status\n") ||
		!strings.Contains(out, "\nread        list_connections is not served here:") {
		t.Errorf("a part of a connection:\n%s", out)
	}

	code, out, errs = quire(t, "", "address", "explain", "finance/definitions/workflow/close-the-week/04")
	if code != 1 || out != "" || !strings.Contains(errs, "/address: ") || !strings.Contains(errs, "<version>") {
		t.Errorf("a bad address: exit %d, out %q, err %q", code, out, errs)
	}
	if code, _, _ := quire(t, "", "address", "explain"); code != 2 {
		t.Errorf("no address: exit %d", code)
	}
	// Through quire call, the refusal object.
	dir := t.TempDir()
	if code, _, errs := quire(t, "", "init", dir, "--org", "acme"); code != 0 {
		t.Fatal(errs)
	}
	code, out, _ = quire(t, "", "--vault", dir, "call", "explain_address", "--args", `{"address":"org/settings"}`)
	if code != 1 || !strings.Contains(out, `"code": "invalid_input"`) || !strings.Contains(out, `"path": "/address"`) {
		t.Errorf("call: exit %d\n%s", code, out)
	}
}
