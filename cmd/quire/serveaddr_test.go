package main

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"
)

// quire serve on a port another program holds is refused naming --addr,
// before it prints an address; QUIRE_ADDR gives the address, and port 0
// takes a free one, printed once the server listens.
func TestServeSaysWhereItListens(t *testing.T) {
	t.Parallel()
	dir, _, _ := newCLIVault(t)
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	cmd := quireProcess(nil, "--vault", dir, "serve", "--addr", held.Addr().String())
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "quire: --addr: quire cannot listen on "+held.Addr().String()+": bind: address already in use; give another HOST:PORT with --addr or QUIRE_ADDR") ||
		strings.Contains(string(out), "http://") {
		t.Fatalf("serve on a held port: %v %s", err, out)
	}
	cmd = quireProcess([]string{"QUIRE_ADDR=127.0.0.1:0"}, "--vault", dir, "serve")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	lines := make(chan string, 1)
	go func() { l, _ := bufio.NewReader(stdout).ReadString('\n'); lines <- l }()
	select {
	case l := <-lines:
		if !strings.Contains(l, "on http://127.0.0.1:") || strings.Contains(l, "127.0.0.1:0/") || strings.Contains(l, ":8080") {
			t.Fatalf("serve with QUIRE_ADDR=127.0.0.1:0 said %q", l)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve said nothing in 20 s")
	}
}
