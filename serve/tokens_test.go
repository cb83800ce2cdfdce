package serve

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire/ledger"
)

func TestCreateTokenStoresOnlyItsHash(t *testing.T) {
	l := newLedger(t)
	tok, err := CreateToken(l, "ana", []string{"playbook:write", "playbook:read:finance"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok, tokenPrefix) || len(tok) != len(tokenPrefix)+43 {
		t.Fatalf("token %q", tok)
	}
	yaml, _ := os.ReadFile(filepath.Join(l.Root(), "quire.yaml"))
	if strings.Contains(string(yaml), tok) || strings.Contains(string(yaml), tok[len(tokenPrefix):]) {
		t.Fatal("quire.yaml holds the token itself")
	}
	if !strings.Contains(string(yaml), hashToken(tok)) || !strings.Contains(string(yaml), "principal: ana") {
		t.Fatalf("quire.yaml:\n%s", yaml)
	}
	out, err := exec.Command("git", "-C", l.Root(), "log", "-1", "--format=%s", "--", "quire.yaml").Output()
	if err != nil || !strings.Contains(string(out), "for ana") {
		t.Fatalf("git log: %s %v", out, err)
	}
	if st, _ := exec.Command("git", "-C", l.Root(), "status", "--porcelain").Output(); len(st) != 0 {
		t.Fatalf("git status after CreateToken:\n%s", st)
	}
	toks, _ := ListTokens(l)
	if len(toks) != 1 || toks[0].Principal != "ana" || len(toks[0].Scopes) != 2 {
		t.Fatalf("ListTokens: %+v", toks)
	}
	for _, bad := range [][]string{nil, {"playbook:delete"}, {"playbook:read:No!"}, {"admin:finance"}} {
		if _, err := CreateToken(l, "ana", bad); err == nil {
			t.Errorf("scopes %v were taken", bad)
		}
	}
	if _, err := CreateToken(l, " ", []string{"admin"}); err == nil {
		t.Error("an empty principal was taken")
	}
	if err := RevokeToken(l, toks[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := RevokeToken(l, toks[0].ID); err == nil {
		t.Fatal("a token was revoked twice")
	}
}

func TestScopes(t *testing.T) {
	op := func(scope string) *ledger.Op { return &ledger.Op{Name: "x", Scope: scope} }
	cases := []struct {
		have     []string
		need     string
		playbook string
		ok       bool
	}{
		{[]string{"playbook:read"}, "playbook:read", "finance", true},
		{[]string{"playbook:read"}, "playbook:write", "finance", false},
		{[]string{"playbook:write"}, "playbook:read", "", true},
		{[]string{"playbook:write"}, "admin", "", false},
		{[]string{"admin"}, "playbook:write", "finance", true},
		{[]string{"admin"}, "admin", "", true},
		{[]string{"playbook:write:finance"}, "playbook:write", "finance", true},
		{[]string{"playbook:write:finance"}, "playbook:read", "finance", true},
		{[]string{"playbook:write:finance"}, "playbook:write", "sales", false},
		{[]string{"playbook:write:finance"}, "playbook:read", "", false},
		{[]string{"playbook:read:finance", "playbook:write:sales"}, "playbook:write", "sales", true},
		{[]string{"playbook:read:finance"}, "playbook:write", "finance", false},
		{nil, "playbook:read", "", false},
		{[]string{"admin"}, "something-new", "", true},
		{[]string{"playbook:write"}, "something-new", "", false},
	}
	for _, c := range cases {
		p := &principal{Name: "p", Scopes: c.have}
		if got := p.may(op(c.need), c.playbook); got != c.ok {
			t.Errorf("%v for %s on %q: %v, want %v", c.have, c.need, c.playbook, got, c.ok)
		}
	}
}

// Tokens over HTTP: each scope does what it grants and no more, a write
// records the token's principal, and a revoked token is refused at once.
func TestTokensOverHTTP(t *testing.T) {
	l := newLedger(t)
	seed(t, l)
	mustCall(t, l, "create_playbook", map[string]any{"playbook": "sales", "name": "Sales"})
	admin, _ := CreateToken(l, "root", []string{"admin"})
	writer, _ := CreateToken(l, "ana", []string{"playbook:write"})
	reader, _ := CreateToken(l, "rui", []string{"playbook:read"})
	financeOnly, _ := CreateToken(l, "fin", []string{"playbook:write:finance"})
	_, c := newTestServer(t, newServer(l, true, nil)) // open, but the vault has tokens
	if st, _ := c.do("GET", "/v1/orgs/acme/playbooks", nil); st != 401 {
		t.Fatalf("no token while the vault has some: %d", st)
	}
	def := func(playbook, name string) map[string]any {
		return map[string]any{"type": "workflow", "name": name, "source": workflowSource(t)}
	}
	steps := []struct {
		token, method, path string
		body                any
		status              int
	}{
		{reader, "GET", "/v1/orgs/acme/playbooks", nil, 200},
		{reader, "GET", "/v1/openapi.json", nil, 200},
		{reader, "POST", "/v1/orgs/acme/projects", map[string]any{"name": "Ops"}, 403},
		{writer, "POST", "/v1/orgs/acme/projects", map[string]any{"name": "Ops"}, 200},
		{writer, "POST", "/v1/orgs/acme/playbooks", map[string]any{"playbook": "ops", "name": "Ops"}, 403},
		{admin, "POST", "/v1/orgs/acme/playbooks", map[string]any{"playbook": "ops", "name": "Ops"}, 200},
		{financeOnly, "GET", "/v1/orgs/acme/playbooks/finance", nil, 200},
		{financeOnly, "GET", "/v1/orgs/acme/playbooks/sales", nil, 403},
		{financeOnly, "GET", "/v1/orgs/acme/playbooks", nil, 403},
		{financeOnly, "POST", "/v1/orgs/acme/playbooks/finance/definitions", def("finance", "pay-the-bills"), 200},
		{financeOnly, "POST", "/v1/orgs/acme/playbooks/sales/definitions", def("sales", "pay-the-bills"), 403},
	}
	for i, s := range steps {
		st, out := c.with(s.token).do(s.method, s.path, s.body)
		if st != s.status {
			t.Fatalf("step %d: %s %s: %d %v, want %d", i, s.method, s.path, st, out, s.status)
		}
	}
	req, _ := http.NewRequest("GET", c.base+"/v1/orgs/acme/playbooks", nil)
	req.Header.Set("Authorization", "Basic "+writer)
	if resp, err := c.hc.Do(req); err != nil || resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("a Basic header: %v %v", resp, err)
	}
	// The definition fin saved names fin as its actor.
	_, ev := c.with(reader).do("GET", "/v1/orgs/acme/playbooks/finance/events?after=0&limit=100", nil)
	if !strings.Contains(toJSON(ev), `"caller":"fin"`) {
		t.Fatalf("the principal is not the actor: %s", toJSON(ev))
	}
	toks, _ := ListTokens(l)
	for _, tk := range toks {
		if tk.Principal == "ana" {
			if err := RevokeToken(l, tk.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	if st, out := c.with(writer).do("GET", "/v1/orgs/acme/playbooks", nil); st != 401 || !strings.Contains(message(out), "revoked") {
		t.Fatalf("a revoked token: %d %v", st, out)
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// A token past its expiry is refused as an unknown one (401
// unauthenticated); a good one's last use is listed, not committed.
func TestTokenExpiryAndLastUse(t *testing.T) {
	l := newLedger(t)
	now := l.Now
	l.Now = func() time.Time { return now().Add(-91 * 24 * time.Hour) }
	old, oldInfo, err := NewToken(l, "ana", []string{"playbook:read"}, 90*24*time.Hour)
	l.Now = now
	if err != nil {
		t.Fatal(err)
	}
	fresh, info, _ := NewToken(l, "rui", []string{"playbook:read"}, 90*24*time.Hour)
	if exp, _ := time.Parse(time.RFC3339, info.Expires); exp.Sub(now()) < 89*24*time.Hour {
		t.Fatalf("a token of 90 days expires %s", info.Expires)
	}
	_, c := newTestServer(t, newServer(l, true, nil))
	st, out := c.with(old).do("GET", "/v1/orgs/acme/playbooks", nil)
	if st != 401 || code(out) != "unauthenticated" {
		t.Fatalf("an expired token: %d %v", st, out)
	}
	if st, out := c.with(fresh).do("GET", "/v1/orgs/acme/playbooks", nil); st != 200 {
		t.Fatalf("a fresh token: %d %v", st, out)
	}
	toks, _ := ListTokens(l)
	for _, tk := range toks {
		if (tk.ID == info.ID) != (tk.LastUsed != "") || (tk.ID == oldInfo.ID && tk.Expires != oldInfo.Expires) {
			t.Fatalf("ListTokens: %+v", toks)
		}
	}
	if st, _ := exec.Command("git", "-C", l.Root(), "status", "--porcelain").Output(); len(st) != 0 {
		t.Fatalf("git status after a use:\n%s", st)
	}
	for _, bad := range []string{"0d", "-3d", "soon", "90", "1.5d"} {
		if _, err := ParseExpiry(bad); err == nil {
			t.Errorf("--expires %s was taken", bad)
		}
	}
	if d, err := ParseExpiry("90d"); err != nil || d != 90*24*time.Hour {
		t.Errorf("90d: %v %v", d, err)
	}
}
