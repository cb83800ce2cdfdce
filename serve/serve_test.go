package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"quire/fold"
	"quire/ledger"
)

// TestMain doubles as `quire mcp` for TestStdio: with QUIRE_TEST_STDIO set
// to a vault, the test binary serves MCP on stdin and stdout.
func TestMain(m *testing.M) {
	fold.ServeIfWorker()
	if dir := os.Getenv("QUIRE_TEST_STDIO"); dir != "" {
		l, err := ledger.Open(dir)
		if err == nil {
			err = ServeStdio(context.Background(), l)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestStdio(t *testing.T) {
	l := newLedger(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "QUIRE_TEST_STDIO="+l.Root())
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "quire-test", Version: "1"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	c := &caller{t: t, cs: cs, schemas: checkTools(t, cs)}
	runStory(t, c, "stdio")
}

func TestRunRefusesAnOpenServerOffLoopback(t *testing.T) {
	l := newLedger(t)
	err := Run(context.Background(), l, Options{Addr: "0.0.0.0:0"})
	if err == nil || !strings.Contains(err.Error(), "no tokens") || !strings.Contains(err.Error(), "quire token create") {
		t.Fatalf("Run on 0.0.0.0 without tokens: %v", err)
	}
	if err := Run(context.Background(), l, Options{Addr: "nonsense"}); err == nil {
		t.Fatal("Run took an address without a port")
	}
}

// Run listens, calls OnStart, serves, drops a client that sends its header
// too slowly, and ends when its context does.
func TestRunServesAndStops(t *testing.T) {
	l := newLedger(t)
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, l, Options{Addr: "127.0.0.1:0", ReadHeaderTimeout: 200 * time.Millisecond,
			Ready:   func(a net.Addr) { addrc <- a },
			OnStart: func(ctx context.Context) { close(started) }})
	}()
	var addr net.Addr
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatal(err)
	}
	<-started
	c := &client{t: t, base: "http://" + addr.String(), hc: &http.Client{Timeout: 10 * time.Second}}
	if st, out := c.do("GET", "/v1/orgs/acme/playbooks", nil); st != 200 {
		t.Fatalf("GET playbooks: %d %v", st, out)
	}
	// A slow client: half a header, then nothing.
	conn, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "GET /v1/orgs/acme/playbooks HTTP/1.1\r\nHost: 127.0.0.1\r\n")
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	b, _ := io.ReadAll(conn)
	conn.Close()
	if since := time.Since(start); since > 3*time.Second {
		t.Fatalf("a slow client held its connection %v (%q)", since, b)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not stop")
	}
}

// One message over 2 MiB, or a line that is not JSON, is answered with a
// JSON-RPC error and quire mcp goes on serving: through the binary, with
// the go-sdk client and with raw lines.
func TestStdioSurvivesAnOversizedMessage(t *testing.T) {
	l := newLedger(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "QUIRE_TEST_STDIO="+l.Root())
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "quire-test", Version: "1"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	huge := strings.Repeat("a", MaxStdioMessage+10)
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "create_project", Arguments: map[string]any{"name": huge}})
	if err == nil || !strings.Contains(err.Error(), "2 MiB") {
		t.Fatalf("a 2 MiB message: %v", err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "create_project", Arguments: map[string]any{"name": "After"}})
	if err != nil || res.IsError {
		t.Fatalf("after a 2 MiB message: %v %+v", err, res)
	}

	// Raw lines: the id of an oversized request is found wherever it is at
	// its top level; a line that is not JSON answers a parse error.
	raw := exec.Command(os.Args[0], "-test.run=^$")
	raw.Env = append(os.Environ(), "QUIRE_TEST_STDIO="+l.Root())
	stdin, _ := raw.StdinPipe()
	stdout, _ := raw.StdoutPipe()
	if err := raw.Start(); err != nil {
		t.Fatal(err)
	}
	defer raw.Wait()
	defer stdin.Close()
	go func() {
		fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
		fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"create_project","arguments":{"name":"%s","id":7}},"id":"big-one"}`+"\n", huge)
		fmt.Fprintln(stdin, `this is not JSON`)
		fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_playbooks","arguments":{}}}`)
	}()
	dec := json.NewDecoder(stdout)
	want := []struct {
		id   string
		code int
	}{{"1", 0}, {`"big-one"`, -32600}, {"null", -32700}, {"3", 0}}
	for _, w := range want {
		var m struct {
			ID    json.RawMessage `json:"id"`
			Error *struct {
				Code int             `json:"code"`
				Data json.RawMessage `json:"data"`
			} `json:"error"`
		}
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("waiting for the answer to %s: %v", w.id, err)
		}
		got := 0
		if m.Error != nil {
			got = m.Error.Code
			if !strings.Contains(string(m.Error.Data), `"invalid_input"`) {
				t.Errorf("the error's data: %s", m.Error.Data)
			}
		}
		if string(m.ID) != w.id || got != w.code {
			t.Fatalf("answer %s %d, want %s %d", m.ID, got, w.id, w.code)
		}
	}
}

// A script's way with quire mcp, its requests written at once and its
// input closed (`printf … | quire mcp`): every request is answered before
// the session ends at the end of the input.
func TestStdioAnswersEveryRequestBeforeTheEndOfInput(t *testing.T) {
	l := newLedger(t)
	mustCall(t, l, "create_playbook", map[string]any{"playbook": "finance", "name": "Finance"})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "QUIRE_TEST_STDIO="+l.Root())
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"script","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_playbooks","arguments":{}}}
{"jsonrpc":"2.0","id":"last","method":"tools/call","params":{"name":"get_playbook","arguments":{"playbook":"finance"}}}`)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("quire mcp: %v\n%s", err, out)
	}
	for _, id := range []string{`"id":1,`, `"id":2,`, `"id":"last",`} {
		if !strings.Contains(string(out), id) {
			t.Errorf("no answer with %s in\n%s", id, out)
		}
	}
	if !strings.Contains(string(out), `Finance`) {
		t.Errorf("get_playbook's answer is not there:\n%s", out)
	}
}
