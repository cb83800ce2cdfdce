package filter

import (
	"encoding/json"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func parseYAMLFilters(t *testing.T, src string) ([]Filter, string) {
	t.Helper()
	var v any
	if err := yaml.Unmarshal([]byte(src), &v); err != nil {
		t.Fatal(err)
	}
	fs, issues := Parse(v)
	var msgs []string
	for _, is := range issues {
		msgs = append(msgs, is.Path+": "+is.Message)
	}
	return fs, strings.Join(msgs, "; ")
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]string{
		`type: run_succeeded`: "Expected a list",
		`[]`:                  "Expected 1 to 8 filters, not 0",
		`[{type: a},{type: a},{type: a},{type: a},{type: a},{type: a},{type: a},{type: a},{type: a}]`: "not 9",
		`[{subject: workflow/x}]`:    "/0/type: Expected a type",
		`[{type: ""}]`:               "/0/type: Expected type to be written out, not empty",
		`[{type: a, colour: red}]`:   `/0/colour: Unknown attribute "colour"`,
		`[{type: a, caller: [x]}]`:   "/0/caller: Expected caller written out as text",
		`[{type: a, subject: null}]`: "/0/subject: Expected subject written out as text",
		`[{type: a, data: 3}]`:       "/0/data: Expected data to be a mapping",
		`[run_succeeded]`:            "/0: Expected a filter",
	} {
		if _, got := parseYAMLFilters(t, src); !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", src, got, want)
		}
	}
}

func TestFiltersMatch(t *testing.T) {
	t.Parallel()
	fs, issues := parseYAMLFilters(t, `
- type: run_succeeded
  subject: workflow/morning-social-content
- type: order_placed
  caller: agent-7
  depth: 1
  data: {order: {channel: web}, tags: [a, b], total: 10}
`)
	if issues != "" {
		t.Fatal(issues)
	}
	for ev, want := range map[string]bool{
		`{"type":"run_succeeded","subject":"workflow/morning-social-content","id":"1"}`:                                                      true,
		`{"type":"run_succeeded","subject":"workflow/other"}`:                                                                                false,
		`{"type":"run_failed","subject":"workflow/morning-social-content"}`:                                                                  false,
		`{"type":"order_placed","caller":"agent-7","depth":1,"data":{"order":{"channel":"web","id":3},"tags":["a","b"],"total":10.0,"x":1}}`: true,
		`{"type":"order_placed","caller":"agent-7","depth":"1","data":{"order":{"channel":"web"},"tags":["a","b"],"total":10}}`:              true,
		`{"type":"order_placed","caller":"agent-7","depth":1,"data":{"order":{"channel":"shop"},"tags":["a","b"],"total":10}}`:               false,
		`{"type":"order_placed","caller":"agent-7","depth":1,"data":{"order":{"channel":"web"},"tags":["a","b","c"],"total":10}}`:            false,
		`{"type":"order_placed","caller":"agent-8","depth":1,"data":{"order":{"channel":"web"},"tags":["a","b"],"total":10}}`:                false,
		`{"type":"order_placed","caller":"agent-7","depth":1}`:                                                                               false,
		`{"type":"run_succeeded","subject":"workflow/morning-social-content"`:                                                                false,
	} {
		if got := Filters(fs).MatchJSON([]byte(ev)); got != want {
			t.Errorf("MatchJSON %s = %v", ev, got)
		}
		var m map[string]any
		if json.Unmarshal([]byte(ev), &m) == nil {
			if got := Filters(fs).Match(m); got != want {
				t.Errorf("Match %s = %v", ev, got)
			}
		}
	}
}
