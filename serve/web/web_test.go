package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"quire/ledger"
	"quire/serve"
	"quire/vault"
)

// demo is a vault with the three example workflows of testdata/vault and
// a few runs of each, served as quire serve serves it.
type demo struct {
	t       testing.TB
	l       *ledger.Ledger
	srv     *httptest.Server
	project string
	c       *http.Client
}

func newDemo(t testing.TB, opts serve.Options) *demo {
	t.Helper()
	v, err := vault.Init(t.TempDir(), "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	l := ledger.New(v)
	t.Cleanup(func() { l.Close() })
	d := &demo{t: t, l: l}
	d.project = d.call("create_project", map[string]any{"name": "Operations"})["uid"].(string)
	d.call("create_playbook", map[string]any{"playbook": "operations", "name": "Operations", "description": "Posts, the close and orders."})
	for _, w := range []string{"morning-social-content", "close-the-month", "fulfill-order"} {
		src, err := os.ReadFile("../../testdata/vault/" + w + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		d.call("create_definition", map[string]any{"playbook": "operations", "type": "workflow", "name": w, "source": string(src), "actor": "ana"})
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go l.Keep(ctx)
	if opts.Addr == "" {
		opts.Open = true
	}
	d.srv = httptest.NewServer(serve.Handler(l, opts))
	t.Cleanup(d.srv.Close)
	jar, _ := cookiejar.New(nil)
	d.c = &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return d
}

func (d *demo) call(op string, args any) map[string]any {
	d.t.Helper()
	raw, _ := json.Marshal(args)
	res, err := d.l.Call(context.Background(), op, raw)
	if err != nil {
		d.t.Fatalf("%s %s: %v", op, raw, err)
	}
	b, _ := json.Marshal(res)
	var out map[string]any
	json.Unmarshal(b, &out)
	return out
}

// run records a run of a workflow that ends with output.
func (d *demo) run(name, day, output string) string {
	d.t.Helper()
	r := d.call("run_definition", map[string]any{"playbook": "operations", "type": "workflow", "name": name,
		"member_of": []string{d.project}, "executor": "agent-7", "authorized_by": "ana", "time": day + "T07:00:00Z"})
	id := r["run_id"].(string)
	d.call("end_run", map[string]any{"playbook": "operations", "run_id": id, "status": "succeeded", "actor": "agent-7",
		"time": day + "T08:00:00Z", "output": json.RawMessage(output)})
	return id
}

func (d *demo) get(path string) (*http.Response, string) {
	d.t.Helper()
	resp, err := d.c.Get(d.srv.URL + path)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func (d *demo) post(path string, form url.Values) (*http.Response, string) {
	d.t.Helper()
	resp, err := d.c.PostForm(d.srv.URL+path, form)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestEveryDemoPage(t *testing.T) {
	d := newDemo(t, serve.Options{})
	d.run("fulfill-order", "2026-10-30", `{"order":"A-1041","channel":"Web","total":86.5}`)
	run := d.run("close-the-month", "2026-11-02", `{"month":"2026-10","revenue":182450}`)
	d.run("morning-social-content", "2026-11-01", `{"date":"2026-11-01","posts":[{"channel":"X","title":"One","url":"https://example.com/1"}]}`)
	for _, p := range []string{"/", "/p/operations", "/p/operations/workflow/fulfill-order", "/p/operations/workflow/close-the-month",
		"/p/operations/workflow/morning-social-content", "/p/operations/runs/" + run, "/p/operations/comments?address=operations/runs/" + run} {
		resp, body := d.get(p)
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d\n%s", p, resp.StatusCode, body)
			continue
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s: CSP %q", p, csp)
		}
	}
}
