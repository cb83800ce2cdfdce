package ledger_test

import (
	"context"
	"encoding/json"
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

const (
	runA  = "019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3e"
	runB  = "019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3f"
	evA   = "019a4012-7c41-7e22-8a10-1b2c3d4e5f60_2"
	connA = "019a3f10-2b4c-7d5e-8f60-718293a4b5c6"
)

// newVault makes a vault with the playbooks finance and sales.
func newVault(t *testing.T) (*ledger.Ledger, string) {
	t.Helper()
	dir := t.TempDir()
	v, err := vault.Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	l := ledger.New(v)
	t.Cleanup(func() { l.Close() })
	for _, p := range []string{"finance", "sales"} {
		mustCall(t, l, "create_playbook", map[string]any{"playbook": p, "name": p, "actor": "ada"})
	}
	return l, dir
}

func call(l *ledger.Ledger, op string, args any) (any, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return l.Call(context.Background(), op, raw)
}

func mustCall(t *testing.T, l *ledger.Ledger, op string, args any) any {
	t.Helper()
	res, err := call(l, op, args)
	if err != nil {
		t.Fatalf("%s %v: %v", op, args, err)
	}
	return res
}

// refusedAt checks that err is a refusal of code with an issue at path (no
// issue when path is "").
func refusedAt(t *testing.T, err error, code refusal.Code, path string) {
	t.Helper()
	r, ok := refusal.As(err)
	if !ok {
		t.Fatalf("want a refusal %s at %q, got %v", code, path, err)
	}
	if r.Code != code {
		t.Fatalf("want %s, got %s: %s", code, r.Code, r.Message)
	}
	if path == "" {
		return
	}
	if len(r.Issues) == 0 || r.Issues[0].Path != path {
		t.Fatalf("want the issue at %s, got %+v (%s)", path, r.Issues, r.Message)
	}
	if !strings.HasPrefix(r.Message, path+": ") {
		t.Fatalf("the message does not begin with its path %s: %s", path, r.Message)
	}
}

func makeComment(t *testing.T, l *ledger.Ledger, playbook, addr, text, author string) *ledger.Comment {
	t.Helper()
	args := map[string]any{"address": addr, "text": text, "author": author}
	if playbook != "" {
		args["playbook"] = playbook
	}
	return mustCall(t, l, "make_comment", args).(*ledger.Comment)
}

func gitLog(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "log", "--format=%an|%(trailers:key=Comment-Id,valueonly,separator=)|%(trailers:key=Address,valueonly,separator=)|%(trailers:key=Resolution,valueonly,separator=)").CombinedOutput()
	if err != nil {
		t.Fatalf("git log: %v\n%s", err, out)
	}
	return string(out)
}

func TestCommentMadeResolvedSurvivesRestart(t *testing.T) {
	l, dir := newVault(t)
	on := "finance/runs/" + runA + "/result/2"
	c := makeComment(t, l, "finance", on, "This total looks off.\n\nCheck March.", "grace")
	if c.Address != on || c.Author != "grace" || c.Resolved || c.Self != "finance/comments/"+c.ID || c.Path != "playbooks/finance/comments/"+c.ID+".md" {
		t.Fatalf("made %+v", c)
	}
	if strings.ToLower(c.ID) != c.ID || c.ID[14] != '7' {
		t.Fatalf("the id %s is not a lowercase UUIDv7", c.ID)
	}
	reply := makeComment(t, l, "finance", on, "It is: fixed the prompt.", "agent-7")
	org := makeComment(t, l, "", "org/connections/"+connA, "The CRM stopped answering.", "grace")
	if org.Path != "org/comments/"+org.ID+".md" || org.Self != "org/comments/"+org.ID || org.Playbook != "" {
		t.Fatalf("the organization's comment %+v", org)
	}
	res := mustCall(t, l, "resolve_comment", map[string]any{"playbook": "finance", "id": c.ID, "how": "acted", "actor": "agent-7"}).(*ledger.Comment)
	if !res.Resolved || res.How != "acted" || res.ResolvedBy != "agent-7" || res.ResolvedAt == "" || res.Text != c.Text {
		t.Fatalf("resolved %+v", res)
	}
	mustCall(t, l, "resolve_comment", map[string]any{"id": org.ID, "how": "answered", "actor": "ada"})

	data, err := os.ReadFile(filepath.Join(dir, c.Path))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"---\nid: " + c.ID + "\n", "address: " + on + "\n", "author: grace\n", "resolved: true\n", "how: acted\n", "resolved_by: agent-7\n", "---\nThis total looks off.\n\nCheck March."} {
		if !strings.Contains(string(data), want) {
			t.Errorf("%s lacks %q:\n%s", c.Path, want, data)
		}
	}

	// A new ledger on the same folder reads them back.
	l.Close()
	l2, err := ledger.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	got := mustCall(t, l2, "list_comments", map[string]any{"playbook": "finance"}).([]*ledger.Comment)
	if len(got) != 2 || got[0].ID != c.ID || got[1].ID != reply.ID || !got[0].Resolved || got[1].Resolved || got[0].Text != c.Text {
		t.Fatalf("after a restart: %+v", got)
	}
	open := mustCall(t, l2, "list_comments", map[string]any{"playbook": "finance", "resolved": false}).([]*ledger.Comment)
	if len(open) != 1 || open[0].ID != reply.ID {
		t.Fatalf("open: %+v", open)
	}
	orgs := mustCall(t, l2, "list_comments", map[string]any{}).([]*ledger.Comment)
	if len(orgs) != 1 || orgs[0].ID != org.ID || orgs[0].How != "answered" {
		t.Fatalf("the organization's: %+v", orgs)
	}
	index, err := vault.Open(l2.Root())
	if err != nil {
		t.Fatal(err)
	}
	defer index.Close()
	for _, id := range []string{c.ID, reply.ID, org.ID} {
		if e, ok, _ := index.Lookup(id); !ok || e.Type != "comment" {
			t.Errorf("comment %s is not in the index: %+v", id, e)
		}
	}

	// The history holds comment_made and comment_resolved.
	page := mustCall(t, l2, "list_playbook_events", map[string]any{"playbook": "finance"}).(*ledger.EventPage)
	var types []string
	for _, ev := range page.Events {
		types = append(types, ev.Type)
	}
	if s := strings.Join(types, ","); !strings.Contains(s, "comment_made,comment_made,comment_resolved") {
		t.Errorf("the history: %s", s)
	}

	log := gitLog(t, dir)
	for _, want := range []string{
		"grace|" + c.ID + "|" + on + "|\n",
		"agent-7|" + reply.ID + "|" + on + "|\n",
		"grace|" + org.ID + "|org/connections/" + connA + "|\n",
		"agent-7|" + c.ID + "|" + on + "|acted\n",
		"ada|" + org.ID + "|org/connections/" + connA + "|answered\n",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("git log lacks %q:\n%s", want, log)
		}
	}
	if out, _ := exec.Command("git", "-C", dir, "status", "--porcelain").CombinedOutput(); len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("git status is not clean:\n%s", out)
	}
}

func TestCommentRefusals(t *testing.T) {
	l, _ := newVault(t)
	c := makeComment(t, l, "finance", "playbooks/finance", "The overview needs a chart.", "grace")
	long := strings.Repeat("é", 10001)
	for _, tc := range []struct {
		name string
		op   string
		args map[string]any
		code refusal.Code
		path string
	}{
		{"not an address", "make_comment", map[string]any{"playbook": "finance", "address": "finance/runs/nope", "text": "x", "author": "a"}, refusal.InvalidInput, "/address"},
		{"a comment's own address", "make_comment", map[string]any{"playbook": "finance", "address": "finance/comments/" + c.ID, "text": "x", "author": "a"}, refusal.InvalidInput, "/address"},
		{"a broken definition", "make_comment", map[string]any{"playbook": "finance", "address": "finance/workflow/close", "text": "x", "author": "a"}, refusal.InvalidInput, "/address"},
		{"a playbook change", "make_comment", map[string]any{"playbook": "finance", "address": "playbooks/finance/1700000000000", "text": "x", "author": "a"}, refusal.InvalidInput, "/address"},
		{"a definition without its version", "make_comment", map[string]any{"playbook": "finance", "address": "finance/definitions/workflow/close", "text": "x", "author": "a"}, refusal.InvalidInput, "/address"},
		{"another playbook's", "make_comment", map[string]any{"playbook": "finance", "address": "sales/runs/" + runA, "text": "x", "author": "a"}, refusal.InvalidInput, "/address"},
		{"the organization's on a playbook", "make_comment", map[string]any{"playbook": "finance", "address": "org/settings/billing", "text": "x", "author": "a"}, refusal.InvalidInput, "/address"},
		{"a playbook's on the organization", "make_comment", map[string]any{"address": "playbooks/finance", "text": "x", "author": "a"}, refusal.InvalidInput, "/address"},
		{"empty text", "make_comment", map[string]any{"playbook": "finance", "address": "playbooks/finance", "text": " \n", "author": "a"}, refusal.InvalidInput, "/text"},
		{"long text", "make_comment", map[string]any{"playbook": "finance", "address": "playbooks/finance", "text": long, "author": "a"}, refusal.InvalidInput, "/text"},
		{"no author", "make_comment", map[string]any{"playbook": "finance", "address": "playbooks/finance", "text": "x", "author": ""}, refusal.InvalidInput, "/author"},
		{"unknown playbook", "make_comment", map[string]any{"playbook": "nowhere", "address": "playbooks/nowhere", "text": "x", "author": "a"}, refusal.NotFound, ""},
		{"under of another playbook", "list_comments", map[string]any{"playbook": "finance", "under": "sales/definitions/workflow/close"}, refusal.InvalidInput, "/under"},
		{"under the organization's on a playbook", "list_comments", map[string]any{"playbook": "finance", "under": "org"}, refusal.InvalidInput, "/under"},
		{"under without a version for the organization", "list_comments", map[string]any{"under": "finance/definitions/workflow/close"}, refusal.InvalidInput, "/under"},
		{"under a comment", "list_comments", map[string]any{"playbook": "finance", "under": "finance/comments/" + c.ID}, refusal.InvalidInput, "/under"},
		{"address of another playbook", "list_comments", map[string]any{"playbook": "finance", "address": "playbooks/sales"}, refusal.InvalidInput, "/address"},
		{"unknown id", "resolve_comment", map[string]any{"playbook": "finance", "id": runA, "how": "acted"}, refusal.NotFound, ""},
		{"another owner's id", "resolve_comment", map[string]any{"playbook": "sales", "id": c.ID, "how": "acted"}, refusal.NotFound, ""},
		{"the organization's unknown id", "resolve_comment", map[string]any{"id": c.ID, "how": "acted"}, refusal.NotFound, ""},
		{"not an id", "resolve_comment", map[string]any{"playbook": "finance", "id": "c-1", "how": "acted"}, refusal.InvalidInput, "/id"},
		{"no such how", "resolve_comment", map[string]any{"playbook": "finance", "id": c.ID, "how": "done"}, refusal.InvalidInput, "/how"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := call(l, tc.op, tc.args)
			refusedAt(t, err, tc.code, tc.path)
		})
	}
	// Exactly 10,000 characters is taken.
	makeComment(t, l, "finance", "playbooks/finance", strings.Repeat("é", 10000), "grace")

	mustCall(t, l, "resolve_comment", map[string]any{"playbook": "finance", "id": c.ID, "how": "declined"})
	_, err := call(l, "resolve_comment", map[string]any{"playbook": "finance", "id": c.ID, "how": "acted"})
	refusedAt(t, err, refusal.Conflict, "")
}

// TestListCommentsFilters checks that list_comments hands under, address
// and resolved to the comments' filter (ledger/comments holds the rule of
// under case by case) and answers in the order the comments were made.
func TestListCommentsFilters(t *testing.T) {
	l, _ := newVault(t)
	run := "finance/runs/" + runA
	onRun := makeComment(t, l, "finance", run, "about the run", "grace")
	onEvent := makeComment(t, l, "finance", run+"/events/"+evA, "about an event", "grace")
	makeComment(t, l, "finance", "finance/runs/"+runB, "about another run", "grace")
	license := makeComment(t, l, "", "org/settings/runtime/parts/license", "about the license", "grace")
	reply := makeComment(t, l, "finance", run, "a reply", "ada")
	mustCall(t, l, "resolve_comment", map[string]any{"playbook": "finance", "id": onRun.ID, "how": "answered"})
	ids := func(args map[string]any) string {
		var out []string
		for _, c := range mustCall(t, l, "list_comments", args).([]*ledger.Comment) {
			out = append(out, c.ID)
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		args map[string]any
		want []string
	}{
		{map[string]any{"playbook": "finance", "under": run}, []string{onRun.ID, onEvent.ID, reply.ID}},
		{map[string]any{"playbook": "finance", "under": run + "/events/" + strings.ToUpper(evA)}, []string{onEvent.ID}},
		{map[string]any{"playbook": "finance", "address": run}, []string{onRun.ID, reply.ID}},
		{map[string]any{"playbook": "finance", "under": run, "resolved": false}, []string{onEvent.ID, reply.ID}},
		{map[string]any{"playbook": "finance", "address": run, "resolved": true}, []string{onRun.ID}},
		{map[string]any{"under": "org/settings/runtime"}, []string{license.ID}},
		{map[string]any{"under": "org"}, nil},
		{map[string]any{"playbook": "sales"}, nil},
	} {
		if got := ids(tc.args); got != strings.Join(tc.want, " ") {
			t.Errorf("list_comments %v:\n got %s\nwant %s", tc.args, got, strings.Join(tc.want, " "))
		}
	}
	// An empty answer is an empty list, not null.
	if raw, err := json.Marshal(mustCall(t, l, "list_comments", map[string]any{"playbook": "sales"})); err != nil || string(raw) != "[]" {
		t.Errorf("no comments: %s %v", raw, err)
	}
}
