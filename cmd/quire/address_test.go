package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// quire runs the CLI with args and returns its exit code, stdout and stderr.
func quire(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append([]string{"quire"}, args...), strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestAddressExplainCLI(t *testing.T) {
	// It needs no vault: run it in an empty folder.
	t.Chdir(t.TempDir())
	addr := "finance/definitions/workflow/close-the-week/4/steps/do/1/review"
	code, out, errs := quire(t, "", "address", "explain", addr)
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
