package resident

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The front takes exactly the command lines of `quire call OP` that the
// engine reads as one (flags in the orders the engine takes); every other
// line goes to the engine as it is.
func TestParseCall(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	env := func(string) (string, bool) { return "/v", true }
	takes := []struct {
		args   []string
		lookup func(string) (string, bool)
		want   callLine
	}{
		{[]string{"call", "get_run"}, none, callLine{vault: ".", op: "get_run"}},
		{[]string{"call", "get_run"}, env, callLine{vault: "/v", op: "get_run"}},
		{[]string{"--vault", "/x", "call", "get_run", "--args", "{}", "--json"}, env, callLine{vault: "/x", op: "get_run", args: "{}", argsSet: true, json: true}},
		{[]string{"--vault=/x", "call", "--args={}", "get_run"}, none, callLine{vault: "/x", op: "get_run", args: "{}", argsSet: true}},
		{[]string{"call", "--json", "get_run", "--vault", "/x", "--args", "-"}, none, callLine{vault: "/x", op: "get_run", args: "-", argsSet: true, json: true}},
		{[]string{"call", "get_run", "--args="}, none, callLine{vault: ".", op: "get_run", args: "", argsSet: true}},
	}
	for _, c := range takes {
		got, ok := parseCall(c.args, c.lookup)
		if !ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %+v %v, want %+v", c.args, got, ok, c.want)
		}
	}
	leaves := [][]string{
		{}, {"call"}, {"call", "--list"}, {"call", "--help", "get_run"}, {"call", "a", "b"},
		{"--json", "call", "get_run"}, {"init", "dir"}, {"call", "get_run", "--args"},
		{"call", "get_run", "--args", "{}", "--args", "{}"}, {"call", "--json", "--json", "get_run"},
		{"--vault", "a", "--vault", "b", "call", "get_run"}, {"--vault=", "call", "get_run"},
		{"call", "get_run", "--args", "--json"}, {"call", "-args", "{}", "get_run"},
		{"call", "--json=true", "get_run"}, {"call", "--", "get_run"}, {"-h"}, {"--version"},
		{"call", "get_run", "--vault"},
	}
	for _, args := range leaves {
		if got, ok := parseCall(args, none); ok {
			t.Errorf("%q taken as %+v", args, got)
		}
	}
	if got, ok := parseCall([]string{"call", "get_run"}, func(string) (string, bool) { return "", true }); ok {
		t.Errorf("QUIRE_VAULT set but empty: taken as %+v", got)
	}
}

// A runtime folder so deep that a socket's path would pass what a unix
// socket takes sends the sockets to /tmp/quire-<uid>; a short one is used.
// The verbs the front hands on, and what it leaves to the engine: what
// reads the caller's files or standard input, help, a "--", other
// commands, a second --vault.
func TestParseVerb(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	env := func(string) (string, bool) { return "/v", true }
	takes := []struct {
		args   []string
		lookup func(string) (string, bool)
		want   callLine
	}{
		{[]string{"run", "show", "--run", "x"}, none, callLine{vault: ".", verb: []string{"run", "show", "--run", "x"}}},
		{[]string{"runs", "-p", "finance"}, env, callLine{vault: "/v", verb: []string{"runs", "-p", "finance"}}},
		{[]string{"--vault", "/x", "run", "event", "step_completed"}, env, callLine{vault: "/x", verb: []string{"run", "event", "step_completed"}}},
		{[]string{"--vault=/x", "run", "end", "succeeded", "--output", `{"a":1}`}, none, callLine{vault: "/x", verb: []string{"run", "end", "succeeded", "--output", `{"a":1}`}}},
	}
	for _, c := range takes {
		got, ok := parseVerb(c.args, c.lookup)
		if !ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %+v %v, want %+v", c.args, got, ok, c.want)
		}
	}
	leaves := [][]string{
		{}, {"run"}, {"run", "start", "--input", "@in.json"}, {"run", "thread", "-"}, {"run", "end", "succeeded", "--output", "@-"},
		{"run", "show", "--help"}, {"run", "show", "-h"}, {"run", "event", "--", "x"}, {"definition", "save", "a.yaml"},
		{"run", "artifact", "a", "b"}, {"run", "show", "--vault", "/y"}, {"--vault=", "run", "show"}, {"call", "get_run"},
	}
	for _, args := range leaves {
		if got, ok := parseVerb(args, none); ok {
			t.Errorf("%q taken: %+v", args, got)
		}
	}
}

func TestDirKeepsSocketPathsShort(t *testing.T) {
	short, err := os.MkdirTemp("/tmp", "qrd")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(short)
	t.Setenv("XDG_RUNTIME_DIR", short)
	if dir, err := Dir(); err != nil || dir != filepath.Join(short, "quire") {
		t.Fatalf("Dir() = %q, %v", dir, err)
	}
	deep := filepath.Join(short, strings.Repeat("d", 80))
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_RUNTIME_DIR", deep)
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	if sock := Socket(dir, "/v", "env", "/e"); len(sock) >= maxSocketPath || !strings.HasPrefix(dir, "/tmp/quire-") {
		t.Fatalf("a deep runtime folder gives the socket %q (%d bytes)", sock, len(sock))
	}
}
