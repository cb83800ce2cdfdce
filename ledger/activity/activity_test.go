package activity

import (
	"errors"
	"io"
	"io/fs"
	"strings"
	"testing"

	"quire/ledger/comments"
	"quire/words/refusal"
)

// memSource is a vault in memory.
type memSource struct {
	playbooks []string
	history   map[string]string // playbook → events.jsonl
	runs      []Run
	comments  map[string][]*comments.Comment
	seen      map[string]string // member → seen.jsonl
	fail      error             // answered by Runs when set
}

func (s *memSource) Playbooks(p string) ([]string, error) {
	if p == "" {
		return s.playbooks, nil
	}
	for _, q := range s.playbooks {
		if q == p {
			return []string{p}, nil
		}
	}
	return nil, refusal.At(refusal.NotFound, "/playbook", "no playbook %q", p)
}

func open(files map[string]string, k string) (io.ReadCloser, error) {
	data, ok := files[k]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: k, Err: fs.ErrNotExist}
	}
	return io.NopCloser(strings.NewReader(data)), nil
}

func (s *memSource) History(p string) (io.ReadCloser, error) { return open(s.history, p) }
func (s *memSource) Seen(m string) (io.ReadCloser, error)    { return open(s.seen, m) }

func (s *memSource) Runs(p string) ([]Run, error) {
	if s.fail != nil {
		return nil, s.fail
	}
	var out []Run
	for _, r := range s.runs {
		if p == "" || r.Playbook == p {
			out = append(out, r)
		}
	}
	return out, nil
}

func (s *memSource) Comments(p string) ([]*comments.Comment, error) { return s.comments[p], nil }

const (
	runA = "019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3e"
	runB = "019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3f"
)

// source is a vault of two playbooks: finance, with its history, a run
// that ended and a comment resolved; sales, with a run going on and no
// history file; and a comment of the organization's own.
func source() *memSource {
	return &memSource{
		playbooks: []string{"finance", "sales"},
		history: map[string]string{"finance": strings.Join([]string{
			`{"event":"playbook_created","timestamp":"2026-11-01T09:00:01.000Z","step":null,"detail":"","subject":"playbooks/finance","actor":"ada"}`,
			`{"event":"definition_saved","timestamp":"2026-11-01T09:00:02.000Z","step":null,"detail":"","subject":"workflow/close","actor":"ada","data":{"type":"workflow","name":"close","version":1}}`,
			`not json at all`,
			`{"event":"definition_saved","timestamp":"2026-11-01T09:00:03.000Z","step":null,"detail":"","subject":"x","actor":"ada","data":{"name":"no-type"}}`,
			`{"event":"definition_retired","timestamp":"2026-11-01T09:00:04.000Z","step":null,"detail":"","subject":"workflow/close","actor":"ada"}`,
			`{"event":"playbook_updated","timestamp":"2026-11-01T09:00:05.000Z","step":null,"detail":"Renamed to Money","subject":"playbooks/finance","actor":"bo"}`,
			`{"event":"playbook_page_saved","timestamp":"2026-11-01T09:00:06.000Z","step":null,"detail":"","subject":"playbooks/finance","actor":"bo"}`,
			`{"event":"definition_broken","timestamp":"2026-11-01T09:00:07.000Z","step":null,"detail":"","subject":"","actor":"quire"}`,
			`{"event":"definition_broken","timestamp":"2026-11-01T09:00:08.000Z","step":null,"detail":"its page no longer checks","subject":"workflow/close","actor":"quire"}`,
			`{"event":"playbook_updated","timestamp":"yesterday","step":null,"detail":"","subject":"playbooks/finance","actor":"bo"}`,
		}, "\n") + "\n"},
		runs: []Run{
			{Playbook: "finance", ID: runA, Type: "workflow", Name: "close", Version: 1, AuthorizedBy: "ada", Executor: "agent-7",
				Started: "2026-11-01T09:00:10.000Z", Ended: "2026-11-01T09:00:20.000Z", Status: "failed", Reason: "the ledger is locked"},
			{Playbook: "sales", ID: runB, Type: "reasoning", Name: "score", Version: 3, AuthorizedBy: "bo", Executor: "agent-8",
				Started: "2026-11-01T09:00:12.000Z"},
		},
		comments: map[string][]*comments.Comment{
			"finance": {{ID: "c1", Playbook: "finance", Address: "finance/runs/" + runA, Author: "grace", Created: "2026-11-01T09:00:11.000Z",
				Resolved: true, How: "acted", ResolvedAt: "2026-11-01T09:00:21.000Z", ResolvedBy: "agent-7",
				Text: "  Why so slow?\nIt took an hour.", Self: "finance/comments/c1"},
				// Its time edited by hand: no row.
				{ID: "c3", Playbook: "finance", Address: "playbooks/finance", Author: "grace", Created: "on Tuesday", Text: "x", Self: "finance/comments/c3"}},
			"": {{ID: "c2", Address: "org/settings/billing", Author: "grace", Created: "2026-11-01T09:00:21.000Z",
				Text: strings.Repeat("é", 130), Self: "org/comments/c2"}},
		},
	}
}

type row struct{ kind, address, playbook, actor, at, summary string }

func rowsOf(p *Page) []row {
	var out []row
	for _, it := range p.Items {
		out = append(out, row{it.Kind, it.Address, it.Playbook, it.Actor, it.At, it.Summary})
	}
	return out
}

func TestListRows(t *testing.T) {
	page, err := List(source(), Query{})
	if err != nil {
		t.Fatal(err)
	}
	want := []row{
		// The organization's comment and the resolution share their
		// millisecond: the one added last comes first.
		{"comment_made", "org/comments/c2", "", "grace", "2026-11-01T09:00:21.000Z", "Comment on org/settings/billing: " + strings.Repeat("é", 120) + "…"},
		{"comment_resolved", "finance/comments/c1", "finance", "agent-7", "2026-11-01T09:00:21.000Z", "Resolved (acted) the comment on finance/runs/" + runA},
		{"run_ended", "finance/runs/" + runA, "finance", "agent-7", "2026-11-01T09:00:20.000Z", "Run of workflow/close version 1 failed: the ledger is locked"},
		{"run_started", "sales/runs/" + runB, "sales", "bo", "2026-11-01T09:00:12.000Z", "Run of reasoning/score version 3 started"},
		{"comment_made", "finance/comments/c1", "finance", "grace", "2026-11-01T09:00:11.000Z", "Comment on finance/runs/" + runA + ": Why so slow? …"},
		{"run_started", "finance/runs/" + runA, "finance", "ada", "2026-11-01T09:00:10.000Z", "Run of workflow/close version 1 started"},
		{"definition_broken", "finance/workflow/close", "finance", "quire", "2026-11-01T09:00:08.000Z", "workflow/close is broken: its page no longer checks"},
		{"playbook_updated", "playbooks/finance/1793523606000", "finance", "bo", "2026-11-01T09:00:06.000Z", "playbook page saved"},
		{"playbook_updated", "playbooks/finance/1793523605000", "finance", "bo", "2026-11-01T09:00:05.000Z", "Renamed to Money"},
		{"definition_saved", "finance/definitions/workflow/close/1", "finance", "ada", "2026-11-01T09:00:02.000Z", "Saved workflow/close version 1"},
		{"playbook_created", "playbooks/finance/1793523601000", "finance", "ada", "2026-11-01T09:00:01.000Z", "playbook created"},
	}
	got := rowsOf(page)
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d:\n%+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
		if page.Items[i].Seen != nil {
			t.Errorf("row %d is marked seen without a member", i)
		}
	}

	// One playbook: its rows alone, no organization's comment.
	fin, err := List(source(), Query{Playbook: "finance"})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range fin.Items {
		if it.Playbook != "finance" {
			t.Errorf("finance's rows hold %+v", it)
		}
	}
	if len(fin.Items) != 9 {
		t.Errorf("finance has %d rows, want 9", len(fin.Items))
	}
	// A playbook without a history file has its runs' rows.
	sales, err := List(source(), Query{Playbook: "sales"})
	if err != nil || len(sales.Items) != 1 || sales.Items[0].Kind != "run_started" {
		t.Errorf("sales: %+v, %v", sales, err)
	}
	// A vault with nothing answers an empty list.
	empty, err := List(&memSource{}, Query{})
	if err != nil || empty.Items == nil || len(empty.Items) != 0 {
		t.Errorf("an empty vault: %#v, %v", empty, err)
	}
}

func TestListSinceAndLimit(t *testing.T) {
	all, err := List(source(), Query{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		q    Query
		want int
	}{
		{Query{Limit: 3}, 3},
		{Query{Limit: 1000}, len(all.Items)},
		// since is strictly after: the rows at since itself are left out.
		{Query{Since: "2026-11-01T09:00:20.000Z"}, 2},
		{Query{Since: "2026-11-01T09:00:19.5Z"}, 3},
		{Query{Since: "2026-11-01T10:00:05+01:00"}, 8},
		{Query{Since: "2026-11-01T09:00:00Z", Limit: 4}, 4},
		{Query{Since: "2026-11-02T00:00:00Z"}, 0},
	} {
		got, err := List(source(), tc.q)
		if err != nil {
			t.Fatalf("%+v: %v", tc.q, err)
		}
		if len(got.Items) != tc.want {
			t.Errorf("%+v: %d rows, want %d", tc.q, len(got.Items), tc.want)
		}
		for i, it := range got.Items {
			if it.Address != all.Items[i].Address || it.Kind != all.Items[i].Kind {
				t.Errorf("%+v: row %d is %s %s, not the newest rows' own", tc.q, i, it.Kind, it.Address)
			}
		}
	}

	// 50 rows when limit is left out.
	s := &memSource{}
	for i := 0; i < 60; i++ {
		s.runs = append(s.runs, Run{Playbook: "p", ID: runA, Started: "2026-11-01T09:00:00.000Z"})
	}
	if got, err := List(s, Query{}); err != nil || len(got.Items) != 50 {
		t.Errorf("the default limit: %d rows, %v", len(got.Items), err)
	}
}

func TestListSeen(t *testing.T) {
	s := source()
	s.seen = map[string]string{"user_2kLm7Qx": strings.Join([]string{
		// The run marked after it started, before it ended.
		`{"at":"2026-11-01T09:00:15.000Z","items":["FINANCE/RUNS/` + strings.ToUpper(runA) + `"]}`,
		`{"at":"not a time","items":["org/comments/c2"]}`,
		`{"at":"2026-11-01T09:00:06.000Z","items":["playbooks/finance/1793523606000","finance/comments/c1"]}`,
		// The organization's comment, marked at the time it was made.
		`{"at":"2026-11-01T09:00:21.000Z","items":["org/comments/C2"]}`,
		`{"at":"2026-11-01T09:00:2`, // a torn last line
	}, "\n")}
	page, err := List(s, Query{Member: "user_2kLm7Qx"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, it := range page.Items {
		if it.Seen == nil {
			t.Fatalf("row %+v is not marked with a member", it)
		}
		seen[it.Kind+" "+it.Address] = *it.Seen
	}
	for k, want := range map[string]bool{
		"comment_made org/comments/c2":                          true,
		"run_started finance/runs/" + runA:                      true,
		"run_ended finance/runs/" + runA:                        false,
		"playbook_updated playbooks/finance/1793523606000":      true,
		"playbook_updated playbooks/finance/1793523605000":      false,
		"comment_made finance/comments/c1":                      false, // marked before it was made
		"comment_resolved finance/comments/c1":                  false,
		"definition_saved finance/definitions/workflow/close/1": false,
	} {
		if got, ok := seen[k]; !ok || got != want {
			t.Errorf("%s: seen %v (%v), want %v", k, got, ok, want)
		}
	}
	// A member who marked nothing has seen nothing.
	page, err = List(source(), Query{Member: "ada"})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range page.Items {
		if it.Seen == nil || *it.Seen {
			t.Errorf("ada saw %+v", it)
		}
	}
}

func TestListRefusals(t *testing.T) {
	for _, tc := range []struct {
		name    string
		q       Query
		code    refusal.Code
		path    string
		message string
	}{
		{"a limit over 1000", Query{Limit: 1001}, refusal.InvalidInput, "/limit", "/limit: limit is 1 to 1000"},
		{"a negative limit", Query{Limit: -1}, refusal.InvalidInput, "/limit", "/limit: limit is 1 to 1000"},
		{"a bad since", Query{Since: "yesterday"}, refusal.InvalidInput, "/since", `/since: "yesterday" is not an RFC 3339 time such as 2026-11-01T09:30:00Z`},
		{"a bad member", Query{Member: "a/b"}, refusal.InvalidInput, "/member", `/member: "a/b" is not a member's id: 1 to 64 ASCII letters, digits, underscores and hyphens`},
		{"the limit first", Query{Limit: 2000, Since: "yesterday", Member: "a/b"}, refusal.InvalidInput, "/limit", "/limit: limit is 1 to 1000"},
		{"an unknown playbook", Query{Playbook: "nowhere"}, refusal.NotFound, "/playbook", `no playbook "nowhere"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := List(source(), tc.q)
			r, ok := refusal.As(err)
			if !ok || r.Code != tc.code || len(r.Issues) != 1 || r.Issues[0].Path != tc.path || r.Message != tc.message {
				t.Fatalf("got %v, want %s at %s: %s", err, tc.code, tc.path, tc.message)
			}
		})
	}
	// What the source cannot read stops the list.
	s := source()
	s.fail = errors.New("the disk is gone")
	if _, err := List(s, Query{}); err == nil || err.Error() != "the disk is gone" {
		t.Errorf("a failing source: %v", err)
	}
}

func TestClipText(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"  padded  ", 10, "padded"},
		{"first line\nsecond", 120, "first line …"},
		{"first line  \n\nsecond", 120, "first line …"},
		{"abcdef", 3, "abc…"},
		{"ééééé", 4, "éééé…"},
		{"", 3, ""},
	} {
		if got := clipText(tc.s, tc.n); got != tc.want {
			t.Errorf("clipText(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
