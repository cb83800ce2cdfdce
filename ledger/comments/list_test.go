package comments

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"quire/words/address"
)

// memStore is a vault in memory: the index's comment files of each owner,
// in order, and the files' bytes.
type memStore struct {
	index map[string][]string
	files map[string][]byte
}

func (s *memStore) Files(playbook string) ([]string, error) { return s.index[playbook], nil }

func (s *memStore) ReadFile(rel string) ([]byte, error) {
	data, ok := s.files[rel]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: rel, Err: fs.ErrNotExist}
	}
	return data, nil
}

// add makes the comment id of playbook on addr, as make_comment writes it.
func (s *memStore) add(playbook, id, addr, text string) {
	if s.index == nil {
		s.index, s.files = map[string][]string{}, map[string][]byte{}
	}
	rel := Path(playbook, id)
	s.index[playbook] = append(s.index[playbook], rel)
	s.files[rel] = Encode(Front{ID: id, Address: addr, Author: "grace", Created: "2026-12-01T17:20:37.862Z"}, text)
}

const (
	runA  = "019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3e"
	runB  = "019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3f"
	evA   = "019a4012-7c41-7e22-8a10-1b2c3d4e5f60_2"
	connA = "019a3f10-2b4c-7d5e-8f60-718293a4b5c6"
)

func TestListInTheOrderMade(t *testing.T) {
	s := &memStore{}
	s.add("finance", "c2", "playbooks/finance", "first")
	s.add("finance", "c1", "playbooks/finance", "a reply")
	s.add("", "c3", "org", "the organization's")
	got, err := List(s, "finance")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "c2" || got[1].ID != "c1" || got[1].Text != "a reply" || got[0].Playbook != "finance" || got[0].Self != "finance/comments/c2" {
		t.Fatalf("finance's: %+v", got)
	}
	org, err := List(s, "")
	if err != nil || len(org) != 1 || org[0].Self != "org/comments/c3" || org[0].Path != "org/comments/c3.md" {
		t.Fatalf("the organization's: %+v, %v", org, err)
	}
	none, err := List(s, "sales")
	if err != nil || none == nil || len(none) != 0 {
		t.Fatalf("a playbook without comments: %#v, %v", none, err)
	}

	// A file that does not decode stops the list, naming the file; so
	// does one the index lists and the folder lacks.
	s.files[Path("finance", "c1")] = []byte("no front matter")
	if _, err := List(s, "finance"); err == nil || !strings.HasPrefix(err.Error(), "playbooks/finance/comments/c1.md: ") {
		t.Fatalf("a broken file: %v", err)
	}
	delete(s.files, Path("finance", "c1"))
	if _, err := List(s, "finance"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing file: %v", err)
	}
}

// TestFilterUnder checks list_comments' under case by case, as
// addresses.md's "What the runtime checks" sets it out.
func TestFilterUnder(t *testing.T) {
	run := "finance/runs/" + runA
	def := "finance/definitions/workflow/close-the-week"
	var cs []*Comment
	on := map[string]string{} // address → comment id
	made := func(playbook, a string) {
		id := "c" + string(rune('a'+len(cs)))
		on[a] = id
		cs = append(cs, Front{ID: id, Address: a}.Comment(playbook, Path(playbook, id), "about "+a))
	}
	for _, a := range []string{
		"playbooks/finance", "playbooks/finance/parts/ledger",
		run, run + "/events/" + evA, run + "/result/2", run + "/parts/result-2-1", run + "/parts/row",
		"finance/runs/" + runB, "finance/" + runA,
		def + "/4", def + "/4/parts/source", def + "/4/steps/do/1/review", def + "/4/steps/do/1/review/parts/x",
		def + "/3", def + "/3/steps/do/1", def + "/3/parts/overview",
		"finance/definitions/reasoning/close-the-week/4",
	} {
		made("finance", a)
	}
	for _, a := range []string{"org", "org/parts/name", "org/connections/" + connA, "org/members/user_2kLm7Qx", "org/settings/runtime", "org/settings/runtime/parts/license"} {
		made("", a)
	}
	for _, tc := range []struct {
		playbook, under string
		want            []string
	}{
		{"finance", "playbooks/finance", []string{"playbooks/finance", "playbooks/finance/parts/ledger"}},
		{"finance", "playbooks/finance/parts/ledger", []string{"playbooks/finance/parts/ledger"}},
		{"finance", run, []string{run, run + "/events/" + evA, run + "/result/2", run + "/parts/result-2-1", run + "/parts/row"}},
		{"finance", run + "/result/2", []string{run + "/result/2"}},
		{"finance", run + "/events/" + strings.ToUpper(evA), []string{run + "/events/" + evA}},
		{"finance", "finance/" + runA, []string{"finance/" + runA}},
		{"finance", def + "/4", []string{def + "/4", def + "/4/parts/source", def + "/4/steps/do/1/review", def + "/4/steps/do/1/review/parts/x"}},
		{"finance", def + "/4/steps/do/1", nil},
		{"finance", def + "/3/steps/do/1", []string{def + "/3/steps/do/1"}},
		{"finance", def, []string{def + "/4", def + "/4/parts/source", def + "/4/steps/do/1/review", def + "/4/steps/do/1/review/parts/x", def + "/3", def + "/3/steps/do/1", def + "/3/parts/overview"}},
		{"", "org", []string{"org", "org/parts/name"}},
		{"", "org/settings/runtime", []string{"org/settings/runtime", "org/settings/runtime/parts/license"}},
		{"", "org/connections/" + connA, []string{"org/connections/" + connA}},
	} {
		t.Run(tc.under, func(t *testing.T) {
			u, err := address.ForUnder(tc.under, tc.playbook)
			if err != nil {
				t.Fatal(err)
			}
			var addrs []string
			for _, c := range Select(cs, Filter{Under: &u}) {
				addrs = append(addrs, c.Address)
				if on[c.Address] != c.ID {
					t.Errorf("comment %s is not the one made on %s", c.ID, c.Address)
				}
			}
			if strings.Join(addrs, " ") != strings.Join(tc.want, " ") {
				t.Errorf("under %s:\n got %v\nwant %v", tc.under, addrs, tc.want)
			}
		})
	}
}

func TestFilterAddressAndResolved(t *testing.T) {
	run := "finance/runs/" + runA
	ev := run + "/events/" + evA
	yes, no := true, false
	cs := []*Comment{
		{ID: "c1", Address: run},
		{ID: "c2", Address: run + "/result/2", Resolved: true},
		{ID: "c3", Address: run, Resolved: true},
		{ID: "c4", Address: run + "/events/" + strings.ToUpper(evA)},
		{ID: "c5", Address: "finance/runs/not-a-run"}, // edited by hand
	}
	ids := func(f Filter) string {
		var out []string
		for _, c := range Select(cs, f) {
			out = append(out, c.ID)
		}
		return strings.Join(out, ",")
	}
	parse := func(s string) *address.Address {
		a, err := address.ForComment(s, "finance")
		if err != nil {
			t.Fatal(err)
		}
		return &a
	}
	for _, tc := range []struct {
		name string
		f    Filter
		want string
	}{
		{"none", Filter{}, "c1,c2,c3,c4,c5"},
		{"resolved", Filter{Resolved: &yes}, "c2,c3"},
		{"open", Filter{Resolved: &no}, "c1,c4,c5"},
		{"exactly the run", Filter{Address: parse(run)}, "c1,c3"},
		{"exactly the run, open", Filter{Address: parse(run), Resolved: &no}, "c1"},
		{"an event, either case", Filter{Address: parse(ev)}, "c4"},
		{"under the run and exactly its block", Filter{Under: parse(run), Address: parse(run + "/result/2")}, "c2"},
	} {
		if got := ids(tc.f); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	if got := Select(nil, Filter{}); got == nil || len(got) != 0 {
		t.Errorf("Select of none: %#v, want an empty list", got)
	}
}
