package serve

import (
	"context"
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

	"quire/ledger"
)

// TestMain doubles as `quire mcp` for TestStdio: with QUIRE_TEST_STDIO set
// to a vault, the test binary serves MCP on stdin and stdout.
func TestMain(m *testing.M) {
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
	cmd.Env = append(os.Environ(), "QUIRE_TEST_STDIO="+l.V.Root())
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
