package ledger_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire/ledger"
	"quire/vault"
	"quire/words/refusal"
)

// tickingVault is a vault whose clock moves one second at every reading,
// from 2026-11-01T09:00:00Z.
func tickingVault(t *testing.T) (*ledger.Ledger, string) {
	t.Helper()
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	v, err := vault.Init(dir, "acme", t0)
	if err != nil {
		t.Fatal(err)
	}
	l := ledger.New(v)
	t.Cleanup(func() { l.Close() })
	now := t0
	l.Now = func() time.Time { now = now.Add(time.Second); return now }
	return l, dir
}

func activity(t *testing.T, l *ledger.Ledger, args map[string]any) []*ledger.ActivityItem {
	t.Helper()
	return mustCall(t, l, "list_activity", args).(*ledger.ActivityPage).Items
}

func TestActivityOrderAndSeen(t *testing.T) {
	l, dir := tickingVault(t)
	mustCall(t, l, "create_playbook", map[string]any{"playbook": "finance", "name": "Finance", "actor": "ada"})
	proj := mustCall(t, l, "create_project", map[string]any{"name": "Close", "actor": "ada"}).(*ledger.Project)
	def := map[string]any{"playbook": "finance", "type": "workflow", "name": "close-the-week", "source": "do: []\n", "actor": "ada"}
	mustCall(t, l, "create_definition", def)
	run := mustCall(t, l, "run_definition", map[string]any{"playbook": "finance", "type": "workflow", "name": "close-the-week",
		"member_of": []string{proj.UID}, "executor": "agent-7", "authorized_by": "ada"}).(*ledger.Run)
	runAddr := "finance/runs/" + run.RunID
	c1 := makeComment(t, l, "finance", runAddr, "Why so slow?\nIt took an hour.", "grace")
	member := "user_2kLm7Qx"
	mustCall(t, l, "mark_activity_seen", map[string]any{"member": member, "items": []string{runAddr}})
	def["source"] = "do: [a]\n"
	mustCall(t, l, "update_definition", def)
	mustCall(t, l, "end_run", map[string]any{"playbook": "finance", "run_id": run.RunID, "status": "succeeded", "output": map[string]any{"ok": true}, "actor": "agent-7"})
	c2 := makeComment(t, l, "", "org/settings/billing", "The plan is wrong.", "grace")
	mustCall(t, l, "resolve_comment", map[string]any{"playbook": "finance", "id": c1.ID, "how": "answered", "actor": "agent-7"})
	mustCall(t, l, "mark_activity_seen", map[string]any{"member": member, "items": []string{"org/comments/" + strings.ToUpper(c2.ID)}})

	type row struct{ kind, address, playbook, actor string }
	want := []row{
		{"comment_resolved", "finance/comments/" + c1.ID, "finance", "agent-7"},
		{"comment_made", "org/comments/" + c2.ID, "", "grace"},
		{"run_ended", runAddr, "finance", "agent-7"},
		{"definition_saved", "finance/definitions/workflow/close-the-week/2", "finance", "ada"},
		{"comment_made", "finance/comments/" + c1.ID, "finance", "grace"},
		{"run_started", runAddr, "finance", "ada"},
		{"definition_saved", "finance/definitions/workflow/close-the-week/1", "finance", "ada"},
		{"playbook_created", "playbooks/finance/", "finance", "ada"},
	}
	got := activity(t, l, map[string]any{"member": member})
	if len(got) != len(want) {
		for _, it := range got {
			t.Logf("%+v", it)
		}
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	var prev time.Time
	for i, w := range want {
		it := got[i]
		if it.Kind != w.kind || !strings.HasPrefix(it.Address, w.address) || it.Playbook != w.playbook || it.Actor != w.actor || it.Summary == "" {
			t.Errorf("row %d: got %+v, want %+v", i, it, w)
		}
		at, err := time.Parse(time.RFC3339, it.At)
		if err != nil {
			t.Errorf("row %d: at %q: %v", i, it.At, err)
		}
		if i > 0 && !at.Before(prev) {
			t.Errorf("row %d at %s is not older than the one before, %s", i, at, prev)
		}
		prev = at
		// Seen: the run was marked after it started but before it ended;
		// the organization's comment after it was made.
		wantSeen := i == 1 || i == 5
		if it.Seen == nil || *it.Seen != wantSeen {
			t.Errorf("row %d (%s): seen %v, want %v", i, it.Kind, it.Seen, wantSeen)
		}
	}
	if a := got[7].Address; a != "playbooks/finance/"+strings.TrimPrefix(a, "playbooks/finance/") || !strings.HasSuffix(a, "1000") {
		t.Errorf("the playbook change's address %s is not at its milliseconds", a)
	}
	if !strings.Contains(got[5].Summary, "close-the-week") || !strings.Contains(got[4].Summary, "Why so slow?") {
		t.Errorf("summaries: %q, %q", got[5].Summary, got[4].Summary)
	}

	// Without member, no row says seen.
	for _, it := range activity(t, l, map[string]any{}) {
		if it.Seen != nil {
			t.Errorf("seen set without a member: %+v", it)
		}
	}
	// limit, since and playbook.
	if top := activity(t, l, map[string]any{"limit": 3}); len(top) != 3 || top[2].Kind != "run_ended" {
		t.Errorf("limit 3: %+v", top)
	}
	if after := activity(t, l, map[string]any{"since": got[3].At}); len(after) != 3 || after[2].Kind != "run_ended" {
		t.Errorf("since %s: %+v", got[3].At, after)
	}
	fin := activity(t, l, map[string]any{"playbook": "finance"})
	if len(fin) != 7 || fin[1].Kind != "run_ended" {
		t.Errorf("finance alone: %d rows", len(fin))
	}

	// A definition_broken event, as a later check is to record it.
	abs := filepath.Join(dir, "playbooks", "finance", "events.jsonl")
	if _, err := vault.AppendLine(abs, []byte(`{"event":"definition_broken","timestamp":"2026-11-02T09:00:00.000Z","step":null,"detail":"its page no longer checks","subject":"workflow/close-the-week","actor":"quire"}`+"\n")); err != nil {
		t.Fatal(err)
	}
	if top := activity(t, l, map[string]any{"limit": 1}); top[0].Kind != "definition_broken" || top[0].Address != "finance/workflow/close-the-week" {
		t.Errorf("broken: %+v", top[0])
	}

	// The marks are in the vault, committed as the member.
	data, err := os.ReadFile(filepath.Join(dir, "org", "members", member, "seen.jsonl"))
	if err != nil || strings.Count(string(data), "\n") != 2 {
		t.Errorf("seen.jsonl: %v\n%s", err, data)
	}
	if log, _ := exec.Command("git", "-C", dir, "log", "--format=%an|%s").CombinedOutput(); !strings.Contains(string(log), member+"|org: "+member+" saw 1 of the activity") {
		t.Errorf("git log lacks the mark:\n%s", log)
	}
}

func TestActivityRefusals(t *testing.T) {
	l, _ := newVault(t)
	for _, tc := range []struct {
		name string
		op   string
		args map[string]any
		code refusal.Code
		path string
	}{
		{"a definition without its version", "mark_activity_seen", map[string]any{"member": "ada", "items": []string{"finance/definitions/workflow/close"}}, refusal.InvalidInput, "/items/0"},
		{"not an address", "mark_activity_seen", map[string]any{"member": "ada", "items": []string{"playbooks/finance", "finance/runs/x y"}}, refusal.InvalidInput, "/items/1"},
		{"no items", "mark_activity_seen", map[string]any{"member": "ada", "items": []string{}}, refusal.InvalidInput, "/items"},
		{"a bad member", "mark_activity_seen", map[string]any{"member": "ada lovelace", "items": []string{"org"}}, refusal.InvalidInput, "/member"},
		{"a bad since", "list_activity", map[string]any{"since": "yesterday"}, refusal.InvalidInput, "/since"},
		{"a bad limit", "list_activity", map[string]any{"limit": 1001}, refusal.InvalidInput, "/limit"},
		{"a bad member to list", "list_activity", map[string]any{"member": "a/b"}, refusal.InvalidInput, "/member"},
		{"an unknown playbook", "list_activity", map[string]any{"playbook": "nowhere"}, refusal.NotFound, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := call(l, tc.op, tc.args)
			refusedAt(t, err, tc.code, tc.path)
		})
	}
	// Every form the activity names is taken, and nothing is written for a refusal.
	res := mustCall(t, l, "mark_activity_seen", map[string]any{"member": "ada", "items": []string{
		"finance/workflow/close", "playbooks/finance/1700000000000", "finance/comments/" + runA, "org/comments/" + runA,
		"finance/runs/" + runA, "finance/definitions/workflow/close/2", "org/settings/billing",
	}}).(*ledger.SeenMarks)
	if len(res.Items) != 7 || res.Member != "ada" {
		t.Errorf("marked %+v", res)
	}
}
