package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// quire runs finds runs: by status, executor, the dates or times they
// started (a date is its whole day, UTC), and words of their headline
// (the page's result: "2026-10 closed with $182,450.00 of revenue."), over
// the CLI and HTTP alike; bad bounds are refused naming the argument.
func TestRunsAreFoundByStatusExecutorDateAndHeadline(t *testing.T) {
	t.Parallel()
	dir, v, project := newCLIVault(t)
	quire(t, "", v, "call", "create_playbook", "--args", `{"playbook":"finance","name":"Finance"}`)
	if code, out, errs := quire(t, "", v, "definition", "save", "../../testdata/vault/close-the-month.yaml", "--playbook", "finance"); code != 0 {
		t.Fatalf("definition save: %s %s", out, errs)
	}
	type made struct{ id, started string }
	var runs []made
	for i, r := range []struct{ executor, month, status string }{{"agent-7", "2026-09", "succeeded"}, {"agent-8", "2026-10", "succeeded"}, {"agent-7", "2026-11", "failed"}} {
		code, out, errs := quire(t, "", v, "run", "start", "--playbook", "finance", "--name", "close-the-month", "--member-of", project,
			"--executor", r.executor, "--authorized-by", "ana", "--json")
		var run struct {
			RunID   string `json:"run_id"`
			Started string `json:"started"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &run) != nil {
			t.Fatalf("run start %d: %s %s", i, out, errs)
		}
		end := []string{"run", "end", r.status, "--playbook", "finance", "--run", run.RunID, "--actor", r.executor}
		if r.status == "succeeded" {
			end = append(end, "--output", fmt.Sprintf(`{"month":%q,"revenue":%d}`, r.month, 182450+i))
		} else {
			end = append(end, "--detail", "the bank's export was empty")
		}
		if code, out, errs := quire(t, "", append([]string{v}, end...)...); code != 0 {
			t.Fatalf("run end %d: %s %s", i, out, errs)
		}
		runs = append(runs, made{run.RunID, run.Started})
		time.Sleep(5 * time.Millisecond) // each run its own millisecond
	}
	base := startServe(t, dir)
	found := func(args ...string) string {
		t.Helper()
		code, out, errs := quire(t, "", append([]string{v, "runs", "--playbook", "finance", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("quire runs %v: %s %s", args, out, errs)
		}
		// The runs a page answers, by the order they were made in here.
		made := func(body string) string {
			var page struct {
				Runs []struct {
					RunID string `json:"run_id"`
				} `json:"runs"`
			}
			json.Unmarshal([]byte(body), &page)
			var got []string
			for _, r := range page.Runs {
				for i, m := range runs {
					if m.id == r.RunID {
						got = append(got, fmt.Sprint(i))
					}
				}
			}
			return strings.Join(got, ",")
		}
		// Over HTTP, the same filter as query parameters.
		q := []string{}
		for i := 0; i+1 < len(args); i += 2 {
			q = append(q, strings.TrimPrefix(args[i], "--")+"="+strings.ReplaceAll(args[i+1], " ", "+"))
		}
		code, body := httpDo(t, "GET", base+"/v1/orgs/acme/playbooks/finance/runs?"+strings.Join(q, "&"), "")
		if code != 200 {
			t.Fatalf("GET runs %v: %d %s", q, code, body)
		}
		if made(body) != made(out) {
			t.Fatalf("HTTP found runs %q for %v, the CLI %q", made(body), q, made(out))
		}
		return made(out)
	}
	today := runs[0].started[:10]
	day, _ := time.Parse("2006-01-02", today)
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "2,1,0"},
		{[]string{"--status", "succeeded"}, "1,0"},
		{[]string{"--executor", "agent-7"}, "2,0"},
		{[]string{"--since", runs[1].started}, "2,1"},
		{[]string{"--until", runs[1].started}, "1,0"},
		{[]string{"--since", runs[1].started, "--until", runs[1].started}, "1"},
		{[]string{"--since", today, "--until", today}, "2,1,0"},
		{[]string{"--until", day.AddDate(0, 0, -1).Format("2006-01-02")}, ""},
		{[]string{"--since", day.AddDate(0, 0, 1).Format("2006-01-02")}, ""},
		{[]string{"--search", "2026-10 CLOSED"}, "1"},
		{[]string{"--search", "revenue", "--executor", "agent-7"}, "0"},
	} {
		if got := found(c.args...); got != c.want {
			t.Errorf("quire runs %v: runs %q, want %q", c.args, got, c.want)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--since", "last week"}, `/since: "last week" is not a date (YYYY-MM-DD) or an RFC 3339 time`},
		{[]string{"--since", today, "--until", day.AddDate(0, 0, -1).Format("2006-01-02")}, "/until: "},
	} {
		code, out, errs := quire(t, "", append([]string{v, "runs", "--playbook", "finance"}, c.args...)...)
		if code == 0 || !strings.Contains(out+errs, c.want) {
			t.Errorf("quire runs %v: %d %s %s, want a refusal with %q", c.args, code, out, errs, c.want)
		}
	}
}
