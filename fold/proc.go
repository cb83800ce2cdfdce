package fold

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// proc is one worker process as the pool sees it: it folds one page at a
// time, and keeps the programs it loaded.
type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	in     *bufio.Writer
	out    *bufio.Reader
	outR   *os.File // the read end of the worker's standard output
	keys   map[string]bool
	exited chan struct{}
	dead   bool
}

func startProc(dir, cacheDir string) (*proc, error) {
	exe, err := workerExecutable()
	if err != nil {
		return nil, fmt.Errorf("fold: finding the executable for a worker: %w", err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), workerEnv+"=1", dirEnv+"="+dir, cacheEnv+"="+cacheDir, workerGODEBUG())
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// A pipe of our own, not cmd.StdoutPipe: Wait closes that one as soon
	// as the process exits, and a worker that ends a fold past a bound
	// answers and exits at once, so its answer could be thrown away
	// unread (and the fold taken for a crash). This one stays open until
	// the worker is done with (kill, stop).
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = outW
	if err := cmd.Start(); err != nil {
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("fold: starting a worker: %w", err)
	}
	outW.Close() // the worker holds its own copy
	p := &proc{cmd: cmd, stdin: stdin, in: bufio.NewWriterSize(stdin, 1<<20), out: bufio.NewReaderSize(outR, 1<<20), outR: outR, keys: map[string]bool{}, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// workerGODEBUG is the worker's GODEBUG: the parent's, with asynchronous
// preemption off. Compiled wasm has no safe points, so the signals Go
// sends a thread that runs one fold for more than 10 ms are all lost, and
// they were many (sysmon polled every 20 µs while the watchdog's sleeps
// were system calls it saw; see watchSleep): with them a fold spent a
// third of its time in the kernel. Nothing in a worker needs the preemption: the collector is
// off while a fold runs, and the watchdog has a processor of its own.
func workerGODEBUG() string {
	if d := os.Getenv("GODEBUG"); d != "" {
		return "GODEBUG=" + d + ",asyncpreemptoff=1"
	}
	return "GODEBUG=asyncpreemptoff=1"
}

// kill ends the process at once.
func (p *proc) kill() {
	p.dead = true
	_ = p.cmd.Process.Kill()
	<-p.exited
	_ = p.outR.Close()
}

// stop ends an idle process: its stdin closes and it returns.
func (p *proc) stop() {
	p.dead = true
	_ = p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	_ = p.outR.Close()
}

// fold sends one page to the process and waits for its answer. A process
// that ends without answering is answered as a trap; one that does not
// answer within backstop (the worker stops its own folds; this is for a
// worker that hangs) is killed and answered as out of time.
func (p *proc) fold(ctx context.Context, prog *Program, shapes string, lim Limits, spent time.Duration, views json.RawMessage, events []Event, crash bool, backstop time.Duration) (childHeader, json.RawMessage, error) {
	var ev, times strings.Builder
	ev.Grow(len(events) * 300)
	times.WriteByte('[')
	for i, e := range events {
		if i > 0 {
			ev.WriteByte('\n')
			times.WriteByte(',')
		}
		if bytes.IndexByte(e.JSON, '\n') >= 0 {
			var c bytes.Buffer
			if json.Compact(&c, e.JSON) == nil {
				ev.Write(c.Bytes())
			} else {
				ev.WriteString("null") // not JSON: the fold is given null
			}
		} else {
			ev.Write(e.JSON)
		}
		times.WriteString(strconv.FormatInt(e.Time.UnixMilli(), 10))
	}
	times.WriteByte(']')
	limits, _ := json.Marshal(lim)
	crashFlag := []byte("0")
	if crash {
		crashFlag = []byte("1")
	}
	parts := make([][]byte, reqParts)
	parts[reqKey] = []byte(prog.key)
	parts[reqJS] = []byte(prog.JS)
	parts[reqNames] = []byte(shapes)
	parts[reqViews] = views
	parts[reqEvents] = []byte(ev.String())
	parts[reqTimes] = []byte(times.String())
	parts[reqLimits] = limits
	parts[reqCrash] = crashFlag
	parts[reqSpent] = []byte(strconv.FormatInt(int64(spent), 10))

	type answer struct {
		parts [][]byte
		err   error
	}
	ch := make(chan answer, 1)
	go func() {
		if err := writeParts(p.in, parts...); err != nil {
			ch <- answer{err: err}
			return
		}
		a, err := readParts(p.out)
		ch <- answer{a, err}
	}()
	timer := time.NewTimer(backstop)
	defer timer.Stop()
	var a answer
	select {
	case a = <-ch:
	case <-ctx.Done():
		p.kill()
		return childHeader{}, nil, ctx.Err()
	case <-timer.C:
		p.kill()
		return childHeader{Killed: killTime}, nil, nil
	}
	if a.err != nil || len(a.parts) != 2 {
		p.kill()
		why := "no answer"
		if a.err != nil {
			why = a.err.Error()
		}
		if st := p.cmd.ProcessState; st != nil {
			why = st.String()
		}
		return childHeader{Trap: "the worker process ended: " + why}, nil, nil
	}
	var h childHeader
	if err := json.Unmarshal(a.parts[0], &h); err != nil {
		p.kill()
		return childHeader{}, nil, errors.New("fold: a worker answered no header")
	}
	if h.Killed != "" || h.Trap != "" || h.Fault != "" {
		p.kill() // it ends by itself; make sure
	} else if h.Load == nil {
		p.keys[prog.key] = true
	}
	return h, json.RawMessage(a.parts[1]), nil
}
