package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// startServe starts quire serve on the vault dir at a port of its own and
// answers its base URL (http://host:port).
func startServe(t *testing.T, dir string, flags ...string) string {
	t.Helper()
	base, _ := startServeStop(t, dir, flags...)
	return base
}

// startServeStop is startServe answering also how to stop the server
// (SIGKILL: a machine that is gone). The server runs in a process group
// of its own, which the stop kills whole and waits out: a git the server
// started (a fetch, a push) would otherwise write on into a vault the
// test is removing.
func startServeStop(t *testing.T, dir string, flags ...string) (base string, stop func()) {
	t.Helper()
	cmd := quireProcess(nil, append([]string{"--vault", dir, "serve", "--addr", "127.0.0.1:0"}, flags...)...)
	inOwnGroup(cmd)
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			if !killGroup(cmd, 10*time.Second) {
				t.Errorf("quire serve's process group %d outlived its SIGKILL by 10 s", cmd.Process.Pid)
			}
		})
	}
	t.Cleanup(func() {
		stop()
		// What the server said, when the test failed: its log tells why a
		// page did not follow or a push did not land.
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("quire serve %s said:\n%s", strings.Join(flags, " "), stderr.String())
		}
	})
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	base = regexp.MustCompile(`http://[^/\s]+`).FindString(line)
	if base == "" {
		t.Fatalf("serve said %q %s", line, stderr.String())
	}
	return base, stop
}

// openStream sends req and answers a channel told when the stream's answer
// ends (its body read to its end, or cut). The answer must be a stream.
func openStream(t *testing.T, req *http.Request) <-chan time.Time {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("%s %s: %d %v %s", req.Method, req.URL, resp.StatusCode, resp.Header, b)
	}
	ended := make(chan time.Time, 1)
	go func() {
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		ended <- time.Now()
	}()
	return ended
}

// mcpStream opens an MCP session over streamable HTTP with the header
// auth, and its standalone stream (GET /mcp).
func mcpStream(t *testing.T, ctx context.Context, base, auth string) <-chan time.Time {
	t.Helper()
	post := func(session, body string) *http.Response {
		req, _ := http.NewRequestWithContext(ctx, "POST", base+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", auth)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("POST /mcp %s: %d %s", body, resp.StatusCode, b)
		}
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"quire-test","version":"1"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatalf("initialize answered no session: %v", resp.Header)
	}
	post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/mcp", nil)
	req.Header.Set("Authorization", auth)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	return openStream(t, req)
}

// A token revoked with quire token revoke while quire serve runs ends,
// within a second or so, every stream opened with it: the pages' /live
// (with the token as a bearer header, and in the login cookie) and MCP's
// standalone stream. A stream of another token stays open, and the
// revoked token opens no new one.
func TestRevokeEndsTheTokensStreams(t *testing.T) {
	t.Parallel()
	dir, v, _ := newCLIVault(t)
	quire(t, "", v, "call", "create_playbook", "--args", `{"playbook":"finance","name":"Finance"}`)
	code, gone, errs := quire(t, "", v, "token", "create", "--principal", "ana", "--scope", "playbook:read")
	id := regexp.MustCompile(`tok-[0-9a-f]{12}`).FindString(errs)
	if code != 0 || id == "" {
		t.Fatalf("token create: %d %s %s", code, gone, errs)
	}
	gone = strings.TrimSpace(gone)
	code, kept, errs := quire(t, "", v, "token", "create", "--principal", "bea", "--scope", "playbook:read")
	if code != 0 {
		t.Fatalf("token create: %d %s", code, errs)
	}
	kept = strings.TrimSpace(kept)
	base := startServe(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	live := func(tok string, cookie bool) <-chan time.Time {
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/live?playbook=finance", nil)
		if cookie {
			req.AddCookie(&http.Cookie{Name: "quire_token", Value: tok})
		} else {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		return openStream(t, req)
	}
	streams := map[string]<-chan time.Time{
		"/live with the bearer header": live(gone, false),
		"/live with the login cookie":  live(gone, true),
		"MCP's standalone stream":      mcpStream(t, ctx, base, "Bearer "+gone),
	}
	other := live(kept, false)
	otherMCP := mcpStream(t, ctx, base, "Bearer "+kept)

	if code, out, errs := quire(t, "", v, "token", "revoke", id); code != 0 {
		t.Fatalf("token revoke: %d %s %s", code, out, errs)
	}
	revoked := time.Now()
	for what, ended := range streams {
		select {
		case at := <-ended:
			t.Logf("%s ended %v after the revoke", what, at.Sub(revoked).Round(time.Millisecond))
		case <-time.After(time.Until(revoked.Add(2 * time.Second))):
			t.Errorf("%s still open 2 s after its token was revoked", what)
		}
	}
	select {
	case <-other:
		t.Error("the stream of another token ended")
	case <-otherMCP:
		t.Error("the MCP stream of another token ended")
	case <-time.After(500 * time.Millisecond):
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/live?playbook=finance", nil)
	req.Header.Set("Authorization", "Bearer "+gone)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(b), "revoked") {
		t.Errorf("/live with the revoked token: %d %s", resp.StatusCode, b)
	}
}
