// Package watchman asks Watchman (https://facebook.github.io/watchman/)
// what changed in a work tree, over Watchman's own socket: the question
// git's Watchman hook (fsmonitor-watchman.sample) asks through Perl and
// the watchman command. The hook's process costs 40-60 ms a question on
// the 2-core machine; a question over the socket some 1.5 ms.
//
// The protocol is Watchman's JSON one: a command is a JSON array on a line
// of its own, and each answer a JSON object on a line; an answer with
// "unilateral" (a subscription's or a log's) is not one to a command.
package watchman

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Answer is what Watchman said changed since a clock.
type Answer struct {
	// Clock is Watchman's clock at the answer: asked with it, the next
	// answer holds what changed after this one.
	Clock string
	// Files changed, from the root, "/"-separated; .git's left out.
	Files []string
	// Fresh: Watchman knows nothing of what changed since the clock (it
	// is not one of this instance's, or the root was not watched until
	// now): any path may have. Files is then empty.
	Fresh bool
}

// Since asks Watchman what changed under root since clock, as git's
// Watchman hook does: a clock that is not Watchman's (not "c:...") is
// asked as none, and a root Watchman does not watch is watched from now
// (the answer then Fresh). root must be the tree's real path (Watchman
// resolves a root's links and names it so).
func Since(ctx context.Context, root, clock string) (Answer, error) {
	sock, err := sockname(ctx)
	if err != nil {
		return Answer{}, err
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", sock)
	if err != nil {
		forgetSock(sock)
		return Answer{}, err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	c := &client{w: conn, r: bufio.NewReaderSize(conn, 64<<10)}
	q := map[string]any{
		"fields":                  []string{"name"},
		"expression":              []any{"not", []string{"dirname", ".git"}},
		"empty_on_fresh_instance": true,
	}
	since := strings.HasPrefix(clock, "c:")
	if since {
		q["since"] = clock
	}
	var a struct {
		Clock string   `json:"clock"`
		Files []string `json:"files"`
		Fresh bool     `json:"is_fresh_instance"`
	}
	err = c.do(&a, "query", root, q)
	var we wmError
	if errors.As(err, &we) && strings.Contains(string(we), "unable to resolve root") && strings.Contains(string(we), "is not watched") {
		// As the hook: watch the root; what changed before is unknown.
		if err := c.do(nil, "watch", root); err != nil {
			return Answer{}, err
		}
		var cl struct {
			Clock string `json:"clock"`
		}
		if err := c.do(&cl, "clock", root); err != nil {
			return Answer{}, err
		}
		if cl.Clock == "" {
			return Answer{}, errors.New("watchman: a clock with no clock")
		}
		return Answer{Clock: cl.Clock, Fresh: true}, nil
	}
	if err != nil {
		return Answer{}, err
	}
	if a.Clock == "" {
		return Answer{}, errors.New("watchman: a query's answer with no clock")
	}
	if a.Fresh || !since {
		return Answer{Clock: a.Clock, Fresh: true}, nil
	}
	return Answer{Clock: a.Clock, Files: a.Files}, nil
}

// wmError is an error Watchman answered.
type wmError string

func (e wmError) Error() string { return "watchman: " + string(e) }

type client struct {
	w net.Conn
	r *bufio.Reader
}

// do sends the command args and decodes its answer into into (when not
// nil), or answers Watchman's error.
func (c *client) do(into any, args ...any) error {
	line, err := json.Marshal(args)
	if err != nil {
		return err
	}
	if _, err := c.w.Write(append(line, '\n')); err != nil {
		return err
	}
	for {
		line, err := c.r.ReadBytes('\n')
		if err != nil {
			return err
		}
		var head struct {
			Error      string `json:"error"`
			Unilateral bool   `json:"unilateral"`
			Log        *any   `json:"log"`
		}
		if err := json.Unmarshal(line, &head); err != nil {
			return fmt.Errorf("watchman: an answer that is not JSON: %w", err)
		}
		if head.Unilateral || head.Log != nil {
			continue
		}
		if head.Error != "" {
			return wmError(head.Error)
		}
		if into == nil {
			return nil
		}
		return json.Unmarshal(line, into)
	}
}

// sock is the socket's path, once found: Watchman's is the same for the
// life of its user's server, and finding it without WATCHMAN_SOCK starts
// the watchman command.
var sock struct {
	mu   sync.Mutex
	name string
}

// forgetSock lets go of the socket's path found before, name, when it
// does not answer: the next question looks for it again.
func forgetSock(name string) {
	sock.mu.Lock()
	if sock.name == name {
		sock.name = ""
	}
	sock.mu.Unlock()
}

// sockname is Watchman's socket: WATCHMAN_SOCK when set (as the watchman
// command takes it), else what `watchman get-sockname` says (which starts
// Watchman's server when none runs).
func sockname(ctx context.Context) (string, error) {
	if s := os.Getenv("WATCHMAN_SOCK"); s != "" {
		return s, nil
	}
	sock.mu.Lock()
	defer sock.mu.Unlock()
	if sock.name != "" {
		return sock.name, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "watchman", "--no-pretty", "get-sockname").Output()
	if err != nil {
		return "", fmt.Errorf("watchman get-sockname: %w", err)
	}
	var a struct {
		Sockname string `json:"sockname"`
		Error    string `json:"error"`
	}
	if err := json.Unmarshal(out, &a); err != nil || a.Sockname == "" {
		return "", fmt.Errorf("watchman get-sockname: no socket in %q (%s)", out, a.Error)
	}
	sock.name = a.Sockname
	return a.Sockname, nil
}
