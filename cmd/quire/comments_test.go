package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

func TestCommentCLI(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := quire(t, "", "init", dir, "--org", "acme"); code != 0 {
		t.Fatal(errs)
	}
	v := []string{"--vault", dir}
	if code, _, errs := quire(t, "", append(v, "call", "create_playbook", "--args", `{"playbook":"finance","name":"Finance"}`)...); code != 0 {
		t.Fatal(errs)
	}
	code, out, errs := quire(t, "", append(v, "comment", "make", "--playbook", "finance", "--address", "playbooks/finance/parts/card", "--author", "grace", "--json", "The card is empty.")...)
	if code != 0 {
		t.Fatalf("make: %s", errs)
	}
	var c struct{ ID, Address, Text string }
	if err := json.Unmarshal([]byte(out), &c); err != nil || c.Text != "The card is empty." {
		t.Fatalf("make: %v %s", err, out)
	}
	code, _, errs = quire(t, "Line one\nline two\n", append(v, "comment", "make", "--address", "org/settings/billing", "--author", "ada", "-")...)
	if code != 0 {
		t.Fatalf("make from stdin: %s", errs)
	}
	code, _, errs = quire(t, "", append(v, "comment", "make", "--playbook", "finance", "--address", "org", "--author", "ada", "hi")...)
	if code != 1 || !strings.Contains(errs, "/address: ") {
		t.Errorf("the organization's address on a playbook: exit %d, %s", code, errs)
	}
	code, out, _ = quire(t, "", append(v, "comment", "list", "--playbook", "finance", "--under", "playbooks/finance", "--open")...)
	if code != 0 || !strings.Contains(out, c.ID) || !strings.Contains(out, "open") {
		t.Errorf("list: exit %d\n%s", code, out)
	}
	code, out, _ = quire(t, "", append(v, "comment", "list")...)
	if code != 0 || !strings.Contains(out, "org/settings/billing") || !strings.Contains(out, "Line one …") {
		t.Errorf("the organization's list: exit %d\n%s", code, out)
	}
	code, out, errs = quire(t, "", append(v, "comment", "resolve", c.ID, "--playbook", "finance", "--how", "acted", "--actor", "agent-7")...)
	if code != 0 || !strings.Contains(out, "resolved (acted) by agent-7") {
		t.Errorf("resolve: exit %d\n%s%s", code, out, errs)
	}
	code, _, errs = quire(t, "", append(v, "comment", "resolve", c.ID, "--playbook", "finance", "--how", "acted")...)
	if code != 1 || !strings.Contains(errs, "was resolved") {
		t.Errorf("resolve twice: exit %d, %s", code, errs)
	}
	code, out, _ = quire(t, "", append(v, "activity", "--member", "grace")...)
	if code != 0 || !strings.Contains(out, "comment_resolved") || !strings.Contains(out, "playbook_created") {
		t.Errorf("activity: exit %d\n%s", code, out)
	}
	code, out, errs = quire(t, "", append(v, "activity", "seen", "--member", "grace", "finance/comments/"+c.ID)...)
	if code != 0 || !strings.Contains(out, "grace saw 1") {
		t.Errorf("seen: exit %d\n%s%s", code, out, errs)
	}
	code, _, errs = quire(t, "", append(v, "activity", "seen", "--member", "grace", "finance/definitions/workflow/x")...)
	if code != 1 || !strings.Contains(errs, "/items/0: ") {
		t.Errorf("seen refused: exit %d, %s", code, errs)
	}
	log, err := exec.Command("git", "-C", dir, "log", "--format=%an %s").CombinedOutput()
	if err != nil || !strings.Contains(string(log), "agent-7 finance: resolve a comment as acted on playbooks/finance/parts/card") ||
		!strings.Contains(string(log), "ada org: comment on org/settings/billing") {
		t.Errorf("git log: %v\n%s", err, log)
	}
}
