package web_test

import (
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"

	"quire/serve"
)

// A definition's runs are found on its page by status, executor, the
// dates they started and words of their headline; the filter is in the
// page's URL (shared as a link), the older and newest links keep it, and
// a bad date is said, not a page without runs.
func TestTheRunsListFindsRuns(t *testing.T) {
	t.Parallel()
	d := newDemo(t, serve.Options{Open: true})
	start := func(executor, day, text string) string {
		r := d.call("run_definition", map[string]any{"playbook": "operations", "type": "workflow", "name": "echo",
			"member_of": []string{d.project}, "executor": executor, "authorized_by": "ana", "time": day + "T07:00:00Z"})
		id := r["run_id"].(string)
		d.call("end_run", map[string]any{"playbook": "operations", "run_id": id, "status": "succeeded", "actor": executor,
			"time": day + "T08:00:00Z", "output": json.RawMessage(fmt.Sprintf(`{"text":%q}`, text))})
		return id
	}
	sept := start("agent-7", "2026-09-01", "alpha posted")
	oct := start("agent-7", "2026-10-05", "beta and gamma posted")
	nov := start("agent-8", "2026-11-20", "delta posted")
	var many []string
	for i := range 51 {
		many = append(many, start("agent-9", fmt.Sprintf("2026-08-%02d", 1+i%28), fmt.Sprintf("run %d", i)))
	}
	rows := regexp.MustCompile(`href="/p/operations/runs/([0-9a-f-]{36})"`)
	found := func(query string) (string, []string) {
		t.Helper()
		resp, body := d.get("/p/operations/workflow/echo?" + query)
		if resp.StatusCode != 200 {
			t.Fatalf("?%s: %d %s", query, resp.StatusCode, body)
		}
		var ids []string
		for _, m := range rows.FindAllStringSubmatch(body, -1) {
			if !slicesContains(ids, m[1]) {
				ids = append(ids, m[1])
			}
		}
		return body, ids
	}
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"since=2026-10-01&until=2026-10-31", []string{oct}},
		{"since=2026-09-01", []string{nov, oct, sept}},
		{"until=2026-09-01", nil}, // checked below: 50 of agent-9's and september's
		{"executor=agent-8", []string{nov}},
		{"search=GAMMA", []string{oct}},
		{"search=posted&executor=agent-7", []string{oct, sept}},
		{"status=failed", []string{}},
	} {
		body, ids := found(c.query)
		if c.want == nil {
			if len(ids) != 50 || !strings.Contains(body, "Older runs") {
				t.Errorf("?%s: %d runs, want a page of 50 and older ones", c.query, len(ids))
			}
			continue
		}
		if strings.Join(ids, ",") != strings.Join(c.want, ",") {
			t.Errorf("?%s: runs %v, want %v", c.query, ids, c.want)
		}
		if len(c.want) == 0 && !strings.Contains(body, "No run matches.") {
			t.Errorf("?%s: no runs and no word of it", c.query)
		}
	}
	// The older runs keep the filter, and the newest are a link away.
	body, first := found("executor=agent-9")
	older := regexp.MustCompile(`<a href="([^"]+)">Older runs</a>`).FindStringSubmatch(body)
	if len(first) != 50 || older == nil || !strings.Contains(html.UnescapeString(older[1]), "executor=agent-9") {
		t.Fatalf("page 1: %d runs, older link %v", len(first), older)
	}
	_, rest := found(strings.TrimPrefix(html.UnescapeString(older[1]), "/p/operations/workflow/echo?"))
	if len(rest) != 1 || slicesContains(first, rest[0]) || !slicesContains(many, rest[0]) {
		t.Fatalf("page 2: %v", rest)
	}
	if body, _ := found(strings.TrimPrefix(html.UnescapeString(older[1]), "/p/operations/workflow/echo?")); !strings.Contains(body, `executor=agent-9">Newest runs</a>`) {
		t.Errorf("page 2 has no link to the newest runs with the filter")
	}
	if body, _ := found("since=2026-10-01&until=2026-09-01"); !strings.Contains(body, "/until: 2026-09-01 is before since, 2026-10-01") {
		t.Errorf("a range that ends before it begins is not said")
	}
	if body, _ := found("since=yesterday"); !strings.Contains(body, `&#34;yesterday&#34; is not a date (YYYY-MM-DD) or an RFC 3339 time`) {
		t.Errorf("a bad date is not said")
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
