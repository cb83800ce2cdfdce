package serve

import (
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// POST /v1/orgs/{org}/sync, a forge's push webhook, takes no token even
// when the vault has tokens (it reads nothing and only brings a fetch
// forward), while every other route still wants one; and a replica
// refuses a write of a token that may write, naming its remote.
func TestSyncTakesNoTokenAndAReplicaNoWrite(t *testing.T) {
	l := newLedger(t)
	seed(t, l)
	writer, _ := CreateToken(l, "ana", []string{"playbook:write"})
	_, c := newTestServer(t, newServer(l, false, nil))
	// The route is not the table's, so not the OpenAPI document's
	// (which is the table): its answers are read here as they are.
	sync := func(org string) (int, string) {
		resp, err := http.Post(c.base+"/v1/orgs/"+org+"/sync", "application/json", strings.NewReader(`{"ref":"refs/heads/main"}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.Join(strings.Fields(string(b)), "")
	}
	if st, out := sync("acme"); st != 404 || !strings.Contains(out, `"code":"not_found"`) || !strings.Contains(out, "thisserverfollowsnoremote") {
		t.Fatalf("sync to a server that follows nothing: %d %s", st, out)
	}

	bare := filepath.Join(t.TempDir(), "remote.git")
	for _, args := range [][]string{{"init", "-q", "--bare", bare}, {"-C", l.Root(), "push", "-q", bare, "main"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	if err := l.AddRemote("origin", "file://"+bare); err != nil {
		t.Fatal(err)
	}
	if err := l.Follow(t.Context(), "origin", time.Hour); err != nil {
		t.Fatal(err)
	}
	if st, out := sync("acme"); st != 202 || out != `{"syncing":"origin"}` {
		t.Fatalf("sync without a token: %d %s", st, out)
	}
	if st, out := sync("other"); st != 404 || !strings.Contains(out, `"code":"not_found"`) {
		t.Errorf("sync of another organization: %d %s", st, out)
	}
	if st, _ := c.do("GET", "/v1/orgs/acme/playbooks", nil); st != 401 {
		t.Errorf("a read without a token: %d", st)
	}
	st, m := c.with(writer).do("POST", "/v1/orgs/acme/projects", map[string]any{"name": "Ops"})
	if want := "this server follows origin (file://" + bare + "): send writes to the server that pushes to it"; st != 409 || code(m) != "conflict" || message(m) != want {
		t.Errorf("a write to the replica: %d %v", st, m)
	}
	if st, _ := c.with(writer).do("GET", "/v1/orgs/acme/playbooks", nil); st != 200 {
		t.Errorf("a read of the replica: %d", st)
	}
}
