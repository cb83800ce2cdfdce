// Package server is the resident engine's side of internal/resident: it
// listens on a vault's socket and hands each front's call to the engine.
// It is a package of its own so that the front does not link the net
// package (and with it cgo and the C library's dynamic loading, some
// 5 ms of every front's start).
package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"quire/internal/resident"
)

// requestWait is how long a resident waits for a front's request once it
// connected, and for its answer to be taken.
const requestWait = 30 * time.Second

// ErrRunning is Serve's answer when another resident holds the socket's
// lock: it serves the vault already, or is starting to.
var ErrRunning = errors.New("a resident engine serves this vault already")

// Server is a resident's side: it serves the calls of the fronts of one
// vault, environment and engine on one socket.
type Server struct {
	Root   string            // the vault's absolute folder
	Env    string            // the environment's Fingerprint
	Engine resident.Identity // the engine running (Self)
	Idle   time.Duration     // it leaves once this long without a call
	// Alive says whether the vault is still there; it leaves when not.
	Alive func() bool
	// Call makes a call and answers what `quire-engine call` prints.
	// Calls come concurrently.
	Call func(ctx context.Context, r *resident.Request) resident.Answer
}

// Serve listens on the vault's socket until ctx ends, the server has been
// idle for Idle, the vault is gone, its socket is taken away, or a front
// names another engine or environment; it removes its socket and lets go
// of the lock before the calls under way finish, so that a new resident
// can start at once. Not on Linux, or when another resident holds the
// lock (ErrRunning), it serves nothing.
func (s *Server) Serve(ctx context.Context) error {
	if !resident.Supported {
		return resident.ErrLinuxOnly
	}
	dir, err := resident.Dir()
	if err != nil {
		return err
	}
	sock := resident.Socket(dir, s.Root, s.Env, s.Engine.Path)
	lock, err := os.OpenFile(resident.LockPath(sock), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if got, err := resident.TryLock(lock); err != nil {
		return err
	} else if !got {
		return ErrRunning
	}
	// Its process id, for a person (or a test) who wants it stopped.
	lock.Truncate(0)
	lock.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	// With the lock held no resident serves the socket: one left there
	// is stale (its resident was killed).
	if err := os.Remove(sock); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		return err
	}
	ln.SetUnlinkOnClose(false)
	os.Chmod(sock, 0o600) // its folder is 0700 already; the socket too
	mine, err := os.Stat(sock)
	if err != nil {
		ln.Close()
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu     sync.Mutex
		active int
		last   = time.Now()
		calls  sync.WaitGroup
	)
	stopped := make(chan struct{})
	var stopOnce sync.Once
	// stop lets go of the socket and the lock: what a new resident needs.
	stop := func() {
		stopOnce.Do(func() {
			ln.Close()
			if fi, err := os.Stat(sock); err == nil && os.SameFile(fi, mine) {
				os.Remove(sock)
			}
			lock.Truncate(0) // no process id left for a kill to hit another
			lock.Close()
			close(stopped)
		})
	}
	go func() {
		tick := min(max(s.Idle/4, 10*time.Millisecond), time.Second)
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				stop()
				return
			case <-stopped:
				return
			case <-t.C:
			}
			mu.Lock()
			idle := active == 0 && time.Since(last) >= s.Idle
			mu.Unlock()
			fi, err := os.Stat(sock)
			if idle || !s.Alive() || err != nil || !os.SameFile(fi, mine) {
				stop()
				return
			}
		}
	}()
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				<-stopped
				calls.Wait()
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			stop()
			calls.Wait()
			return err
		}
		mu.Lock()
		active++
		mu.Unlock()
		calls.Add(1)
		go func() {
			defer calls.Done()
			defer func() {
				mu.Lock()
				active--
				last = time.Now()
				mu.Unlock()
			}()
			s.serveConn(ctx, c, stop)
		}()
	}
}

// serveConn serves one call: from another user, or not a request, it
// closes without a word (the front then runs the engine itself).
func (s *Server) serveConn(ctx context.Context, c *net.UnixConn, stop func()) {
	defer c.Close()
	if uid, err := peerUID(c); err != nil || uid != os.Getuid() {
		return
	}
	// The front sends its request at once: a connection that does not
	// is not left to keep the resident from its idle end.
	c.SetReadDeadline(time.Now().Add(requestWait))
	var req resident.Request
	if err := json.NewDecoder(bufio.NewReader(c)).Decode(&req); err != nil {
		return
	}
	enc := json.NewEncoder(c)
	if req.Engine != s.Engine || req.Env != s.Env || req.Vault != s.Root {
		// Another engine (an upgrade) or environment: this one leaves,
		// and lets go of its socket first, so the front can start the
		// right one at once.
		stop()
		enc.Encode(resident.Status{Status: "stale"})
		return
	}
	if err := enc.Encode(resident.Status{Status: "taken"}); err != nil {
		return
	}
	// A call taken is made to its end, even if the front goes away or
	// the resident is stopping, as the engine's own process would.
	ans := s.Call(context.WithoutCancel(ctx), &req)
	c.SetWriteDeadline(time.Now().Add(requestWait))
	enc.Encode(&ans)
}

// PID is the process id of the resident serving socket, from its lock
// file; 0 when there is none.
func PID(socket string) int {
	data, err := os.ReadFile(resident.LockPath(socket))
	if err != nil {
		return 0
	}
	var pid int
	fmt.Sscanf(string(data), "%d", &pid)
	return pid
}
