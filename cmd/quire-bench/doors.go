package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"quire/internal/resident"
	"quire/ledger"
	"quire/vault"
)

// A boundary from every door (issue 15), at each vault size, measured side
// by side in one run, in blocks that take turns:
//
//   - mcp: a warm `quire mcp` (one process over stdio, as an agent host runs
//     it) records step_completed events back to back; the first of each
//     block, which reads what the git CLI's block left, is left out;
//   - mcp+git: the same server, with a git CLI commit of another file
//     between every two boundaries (a person committing beside the agent);
//   - call: `quire call record_event` as a process per boundary, and
//     `quire call get_run` as a process per read, the whole program
//     (quire-engine) alone;
//   - call (front), read (front): the same through the quire front
//     (cmd/quire-front, as make install puts it on the PATH), handing the
//     call to the vault's resident engine, started and answering before
//     the measures, in a block of their own (the first call of each,
//     which reads what the other doors wrote, left out); its CPU is the
//     front's process and what the resident spent on the call;
//   - verbs: `quire run event step_completed` and `quire run show`, the
//     README's verbs, through the front (handed to the resident) and by
//     the engine alone, side by side in the front's block: the front's
//     target is 5x the engine's;
//   - git: `git add <file> && git commit` of a line appended to a run's
//     thread.md, the yardstick.
//
// Wall times are what a user waits on this machine, which is shared; the
// CPU time of the processes (user and system) is printed beside the
// process doors' figures, as the part that does not depend on the load.
//
// The vaults are made once and kept under the temporary folder, keyed by
// doorVaultVersion and the size (making 20,000 runs takes minutes); a
// vault is used as it is left, so each run of the bench adds its events.

const doorVaultVersion = "v2"

type doorFigures struct {
	mcp, mcpGit, call, read, git     []time.Duration
	mcpCPU, callCPU, readCPU, gitCPU []time.Duration
	front, frontRead                 []time.Duration
	frontCPU, frontReadCPU           []time.Duration
	// the verbs: record an event, show a run; through the front and by
	// the engine.
	frontEvent, frontShow, engineEvent, engineShow []time.Duration
}

func benchDoors(sizes []int, rounds int, bin string) {
	if bin == "" {
		bin = buildQuire()
	}
	front := buildFront(bin)
	fmt.Println("== A boundary from every door (issue 15): quire vs git add <file> && git commit, same vault, blocks taking turns")
	fmt.Printf("%-7s %-13s %12s %12s %12s %12s %9s %8s\n", "runs", "door", "p50", "p99", "git p50", "git p99", "ratio", "target")
	var base time.Duration
	for i, n := range sizes {
		f := measureDoors(bin, front, n, rounds)
		gp50, gp99 := pct(f.git, 50), pct(f.git, 99)
		row := func(door string, ds []time.Duration, target float64) {
			p50 := pct(ds, 50)
			fmt.Printf("%-7d %-13s %12s %12s %12s %12s %8.1fx %7s\n", n, door, ms(p50), ms(pct(ds, 99)), ms(gp50), ms(gp99),
				float64(gp50)/float64(p50), targetText(float64(gp50)/float64(p50), target))
		}
		row("mcp", f.mcp, 6)
		fmt.Printf("%-7d %-13s %12s %12s %12s %12s %8.1fx   (CPU: the server's per boundary vs git's two processes)\n", n, "mcp CPU",
			ms(pct(f.mcpCPU, 50)), ms(pct(f.mcpCPU, 99)), ms(pct(f.gitCPU, 50)), ms(pct(f.gitCPU, 99)), float64(pct(f.gitCPU, 50))/float64(pct(f.mcpCPU, 50)))
		row("mcp+git", f.mcpGit, 4)
		// The engine alone (QUIRE_RESIDENT=off, or a front whose resident
		// is not yet listening) carries no target: the issue's `quire
		// call` is the front make install puts on the PATH, below.
		fmt.Printf("%-7d %-13s %12s %12s %12s %12s %8.1fx   (the engine alone, no resident: no target; quire call's is the front's, below)\n", n, "engine call",
			ms(pct(f.call, 50)), ms(pct(f.call, 99)), ms(gp50), ms(gp99), float64(gp50)/float64(pct(f.call, 50)))
		fmt.Printf("%-7d %-13s %12s %12s %12s %12s %8.1fx   (CPU of the processes: the engine vs git's two)\n", n, "engine CPU",
			ms(pct(f.callCPU, 50)), ms(pct(f.callCPU, 99)), ms(pct(f.gitCPU, 50)), ms(pct(f.gitCPU, 99)), float64(pct(f.gitCPU, 50))/float64(pct(f.callCPU, 50)))
		readRow := func(door string, ds, cpu []time.Duration) {
			read := pct(ds, 50)
			mark := ""
			if n >= 20000 {
				mark = targetText(30/(float64(read.Microseconds())/1000), 1)
			}
			fmt.Printf("%-7d %-13s %12s %12s %12s %12s %9s %7s   (target under 30 ms at 20,000 runs; CPU %s)\n", n, door, ms(read), ms(pct(ds, 99)), "", "", "", mark, ms(pct(cpu, 50)))
		}
		fmt.Printf("%-7d %-13s %12s %12s %12s %12s %9s %7s   (the engine alone, no resident: no target; CPU %s)\n", n, "engine read", ms(pct(f.read, 50)), ms(pct(f.read, 99)), "", "", "", "", ms(pct(f.readCPU, 50)))
		row("call (front)", f.front, 2)
		fmt.Printf("%-7d %-13s %12s %12s %12s %12s %8.1fx   (CPU: the front's process and the resident's part vs git's two)\n", n, "front CPU",
			ms(pct(f.frontCPU, 50)), ms(pct(f.frontCPU, 99)), ms(pct(f.gitCPU, 50)), ms(pct(f.gitCPU, 99)), float64(pct(f.gitCPU, 50))/float64(pct(f.frontCPU, 50)))
		readRow("read (front)", f.frontRead, f.frontReadCPU)
		verbRow := func(door string, front, engine []time.Duration) {
			p50, e50 := pct(front, 50), pct(engine, 50)
			fmt.Printf("%-7d %-13s %12s %12s %12s %12s %8.1fx %7s   (the front's, beside the engine alone's p50 and p99; target 5x; call (front) above is its floor)\n", n, door,
				ms(p50), ms(pct(front, 99)), ms(e50), ms(pct(engine, 99)), float64(e50)/float64(p50), targetText(float64(e50)/float64(p50), 5))
		}
		verbRow("run event", f.frontEvent, f.engineEvent)
		verbRow("run show", f.frontShow, f.engineShow)
		if i == 0 {
			base = pct(f.mcp, 50)
		} else {
			g := float64(pct(f.mcp, 50)) / float64(base)
			fmt.Printf("%-7d %-13s a warm boundary costs %.2fx the one at %d runs %s (target at most 2x)\n", n, "growth", g, sizes[0], targetText(2/g, 1))
		}
	}
}

func targetText(ratio, target float64) string {
	if ratio >= target {
		return "ok"
	}
	return "MISSED"
}

// buildQuire builds the quire binary the process doors run, from this tree.
func buildQuire() string {
	dir, err := os.MkdirTemp("", "quire-bench-bin-")
	must(err)
	bin := filepath.Join(dir, "quire")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/quire")
	cmd.Stderr = os.Stderr
	must(cmd.Run())
	return bin
}

// buildFront lays out the quire front as make install does: the front as
// quire, and the engine bin beside it as quire-engine.
func buildFront(bin string) string {
	dir, err := os.MkdirTemp("", "quire-bench-front-")
	must(err)
	front := filepath.Join(dir, "quire")
	cmd := exec.Command("go", "build", "-o", front, "./cmd/quire-front")
	cmd.Stderr = os.Stderr
	must(cmd.Run())
	engine := filepath.Join(dir, resident.EngineName)
	if os.Link(bin, engine) != nil {
		data, err := os.ReadFile(bin)
		must(err)
		must(os.WriteFile(engine, data, 0o755))
	}
	return front
}

// startResident starts the resident engine of the vault at dir beside the
// front, in a runtime folder of the bench's own, and waits until the front
// hands it a call.
func startResident(front, dir string) (*exec.Cmd, string) {
	rt, err := os.MkdirTemp("", "quire-bench-run-")
	must(err)
	must(os.Setenv("XDG_RUNTIME_DIR", rt))
	cmd := exec.Command(filepath.Join(filepath.Dir(front), resident.EngineName), "--vault", dir, "resident")
	cmd.Stderr = os.Stderr
	must(cmd.Start())
	sockets, err := resident.Dir()
	must(err)
	engine, err := filepath.EvalSymlinks(cmd.Path)
	must(err)
	wd, err := os.Getwd()
	must(err)
	sock := resident.Socket(sockets, dir, resident.Fingerprint(os.Getenv, wd), engine)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			must(fmt.Errorf("the resident of %s does not answer on %s", dir, sock))
		}
	}
	return cmd, rt
}

func measureDoors(bin, front string, runs, rounds int) doorFigures {
	dir, ids := doorVault(runs)
	// core.splitIndex unset, git's own default (an earlier bench set it
	// false): quire then splits an index this large, and git keeps the
	// form it finds, so both sides write the same form.
	exec.Command("git", "-C", dir, "config", "--unset-all", "core.splitIndex").Run()
	m := startMCP(bin, dir)
	defer m.close()
	res, rt := startResident(front, dir)
	defer func() {
		res.Process.Signal(syscall.SIGTERM)
		res.Wait()
		os.RemoveAll(rt)
	}()
	// through the front: its process's CPU and the resident's part.
	viaFront := func(op, args string) (time.Duration, time.Duration) {
		c0 := procCPU(res.Process.Pid)
		d, c := quireCall(front, dir, op, args)
		return d, c + procCPU(res.Process.Pid) - c0
	}
	viaFront("get_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, ids[0])) // warm
	rng := rand.New(rand.NewSource(int64(runs)))
	var f doorFigures
	boundaryArgs := func() string {
		return fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_completed","step":"bench/%d","actor":"agent-7"}`, ids[rng.Intn(len(ids))], rng.Intn(1000))
	}
	gitPair := func() (time.Duration, time.Duration) {
		id := ids[rng.Intn(len(ids))]
		rel := runFolderOf(dir, id) + "/thread.md"
		fh, err := os.OpenFile(filepath.Join(dir, rel), os.O_APPEND|os.O_WRONLY, 0)
		must(err)
		fmt.Fprintf(fh, "A note by a person at %s.\n", time.Now().Format(time.RFC3339Nano))
		fh.Close()
		t0 := time.Now()
		c1 := gitTimed(dir, "add", rel)
		c2 := gitTimed(dir, "commit", "-q", "-m", "a person's note")
		return time.Since(t0), c1 + c2
	}
	const block = 10
	for b := 0; b < (rounds+block-1)/block; b++ {
		for i := 0; i <= block; i++ {
			c0 := m.cpu()
			d := m.call("record_event", boundaryArgs())
			if i > 0 {
				f.mcp, f.mcpCPU = append(f.mcp, d), append(f.mcpCPU, m.cpu()-c0)
			}
		}
		for i := 0; i < block; i++ {
			d, c := gitPair()
			f.git, f.gitCPU = append(f.git, d), append(f.gitCPU, c)
		}
		for i := 0; i < block; i++ {
			f.mcpGit = append(f.mcpGit, m.call("record_event", boundaryArgs()))
			gitPair()
		}
		for i := 0; i < block; i++ {
			d, c := quireCall(bin, dir, "record_event", boundaryArgs())
			f.call, f.callCPU = append(f.call, d), append(f.callCPU, c)
			d, c = quireCall(bin, dir, "get_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, ids[rng.Intn(len(ids))]))
			f.read, f.readCPU = append(f.read, d), append(f.readCPU, c)
		}
		// The front in a block of its own, as an agent calling through it
		// would; the first call reads what the blocks before wrote.
		for i := 0; i <= block; i++ {
			d, c := viaFront("record_event", boundaryArgs())
			if i > 0 {
				f.front, f.frontCPU = append(f.front, d), append(f.frontCPU, c)
			}
			d, c = viaFront("get_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, ids[rng.Intn(len(ids))]))
			if i > 0 {
				f.frontRead, f.frontReadCPU = append(f.frontRead, d), append(f.frontReadCPU, c)
			}
			// The verbs, through the front and by the engine, in turn.
			id := ids[rng.Intn(len(ids))]
			event := []string{"run", "event", "step_completed", "--playbook", "finance", "--run", id, "--step", fmt.Sprintf("bench/%d", rng.Intn(1000)), "--actor", "agent-7"}
			show := []string{"run", "show", "--playbook", "finance", "--run", id}
			for _, bin := range []string{front, bin} {
				de, ds := quireVerb(bin, dir, event...), quireVerb(bin, dir, show...)
				switch {
				case i == 0:
				case bin == front:
					f.frontEvent, f.frontShow = append(f.frontEvent, de), append(f.frontShow, ds)
				default:
					f.engineEvent, f.engineShow = append(f.engineEvent, de), append(f.engineShow, ds)
				}
			}
		}
	}
	return f
}

func gitTimed(dir string, args ...string) time.Duration {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=b@x", "GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=b@x")
	if out, err := cmd.CombinedOutput(); err != nil {
		must(fmt.Errorf("git %v: %v\n%s", args, err, out))
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

func quireCall(bin, dir, op, args string) (time.Duration, time.Duration) {
	cmd := exec.Command(bin, "--vault", dir, "call", op, "--args", args)
	t0 := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		must(fmt.Errorf("quire call %s %s: %v\n%s", op, args, err, out))
	}
	return time.Since(t0), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// quireVerb runs one of quire's verbs on the vault and answers how long
// it took.
func quireVerb(bin, dir string, args ...string) time.Duration {
	cmd := exec.Command(bin, append([]string{"--vault", dir}, args...)...)
	t0 := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		must(fmt.Errorf("quire %v: %v\n%s", args, err, out))
	}
	return time.Since(t0)
}

// runFolderOf is the folder of a run of the bench's vaults.
func runFolderOf(dir, id string) string {
	return "playbook-runs/close-" + id + "-2026-11-01"
}

// mcpClient speaks MCP over a `quire mcp` process's standard input and
// output, one JSON-RPC message a line.
type mcpClient struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func startMCP(bin, dir string) *mcpClient { return startMCPWith(bin, dir) }

func (m *mcpClient) rpc(method, params string) json.RawMessage {
	m.id++
	fmt.Fprintf(m.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", m.id, method, params)
	for {
		line, err := m.out.ReadBytes('\n')
		must(err)
		var msg struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		must(json.Unmarshal(line, &msg))
		if msg.ID == nil || *msg.ID != m.id {
			continue
		}
		if msg.Error != nil {
			must(fmt.Errorf("mcp %s: %s", method, msg.Error))
		}
		var res struct {
			IsError bool `json:"isError"`
		}
		json.Unmarshal(msg.Result, &res)
		if res.IsError {
			must(fmt.Errorf("mcp %s %s: %s", method, params, msg.Result))
		}
		return msg.Result
	}
}

// call times one tool call, answer read.
func (m *mcpClient) call(tool, args string) time.Duration {
	t0 := time.Now()
	m.rpc("tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s}`, tool, args))
	return time.Since(t0)
}

// cpu is the server process's CPU time so far.
func (m *mcpClient) cpu() time.Duration { return procCPU(m.cmd.Process.Pid) }

// procCPU is a process's CPU time so far (user and system), from
// /proc/<pid>/stat, in clock ticks of 10 ms.
func procCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	var u, s int64
	fmt.Sscan(f[11], &u)
	fmt.Sscan(f[12], &s)
	return time.Duration(u+s) * 10 * time.Millisecond
}

func (m *mcpClient) close() {
	m.in.Close()
	m.cmd.Wait()
}

// doorVaultDir is where the bench's vault of n runs is kept, and
// doorVaultReady the file that says it was made whole.
func doorVaultDir(n int) string {
	return filepath.Join(os.TempDir(), "quire-bench-vaults", fmt.Sprintf("%s-%d", doorVaultVersion, n))
}

func doorVaultReady(n int) string { return doorVaultDir(n) + ".ready" }

// doorVault answers the bench's vault of n runs and their ids, made once
// under the temporary folder. One run is made through the operations
// (project, playbook, workflow, run_definition); the others are copies of
// it with their own ids and seqs, registered in the index and committed
// in one git commit; then quire reindex builds the history from the files.
// The first run stays: a commit that removed it would be what quire check
// --history refuses (rules 2 and 3: a run's pinned definition and
// committed lines removed), and the bench would measure a vault quire
// calls broken. Its id, made at the vault's making, is kept in the file
// that says the vault is ready.
func doorVault(n int) (string, []string) {
	dir := doorVaultDir(n)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("019a4012-7c3e-7d10-9b2a-%012x", i)
	}
	ready := doorVaultReady(n)
	if first, err := os.ReadFile(ready); err == nil && len(first) > 0 {
		ids[0] = string(first)
		return dir, ids
	}
	t0 := time.Now()
	must(os.RemoveAll(dir))
	os.Remove(ready)
	must(os.MkdirAll(filepath.Dir(dir), 0o755))
	v, err := vault.Init(dir, "bench", time.Now())
	must(err)
	l := ledger.New(v)
	call := func(op, args string) any {
		res, err := l.Call(context.Background(), op, json.RawMessage(args))
		must(err)
		return res
	}
	p := call("create_project", `{"name":"Operations"}`).(*ledger.Project)
	call("create_playbook", `{"playbook":"finance","name":"Finance"}`)
	call("create_definition", `{"playbook":"finance","type":"workflow","name":"close","source":"document:\n  name: close\n"}`)
	r := call("run_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"close","member_of":[%q],"executor":"agent-7","authorized_by":"ana","time":"2026-11-01T07:00:00Z"}`, p.UID)).(*ledger.Run)
	l.Close()
	tmpl := map[string]string{}
	for _, name := range []string{"definition.md", "context.md", "thread.md", "run.jsonl", "run.state.json", "artifacts/.gitkeep"} {
		data, err := os.ReadFile(filepath.Join(dir, r.Path, name))
		must(err)
		tmpl[name] = string(data)
	}
	idxData, err := os.ReadFile(filepath.Join(dir, vault.IndexFile))
	must(err)
	idxLines := strings.SplitAfter(strings.TrimSuffix(string(idxData), "\n"), "\n")
	idxLines[len(idxLines)-1] += "\n"
	runLine := idxLines[len(idxLines)-1]
	idx, err := os.OpenFile(filepath.Join(dir, vault.IndexFile), os.O_WRONLY|os.O_APPEND, 0)
	must(err)
	w := bufio.NewWriterSize(idx, 1<<20)
	ids[0] = r.RunID
	seq0 := r.LastSeq
	for i, id := range ids[1:] {
		i++
		folder := filepath.Join(dir, runFolderOf(dir, id))
		must(os.MkdirAll(filepath.Join(folder, "artifacts"), 0o755))
		seq := seq0 + int64(i)
		log := strings.ReplaceAll(tmpl["run.jsonl"], r.RunID, id)
		log = strings.Replace(log, fmt.Sprintf(`"seq":%d,`, seq0), fmt.Sprintf(`"seq":%d,`, seq), 1)
		for name, text := range tmpl {
			text = strings.ReplaceAll(text, r.RunID, id)
			switch name {
			case "run.jsonl":
				text = log
			case "run.state.json":
				text = strings.Replace(text, fmt.Sprintf(`"last_seq": %d,`, seq0), fmt.Sprintf(`"last_seq": %d,`, seq), 1)
				text = strings.Replace(text, fmt.Sprintf(`"log_bytes": %d,`, len(tmpl["run.jsonl"])), fmt.Sprintf(`"log_bytes": %d,`, len(log)), 1)
			}
			must(os.WriteFile(filepath.Join(folder, name), []byte(text), 0o644))
		}
		line := strings.ReplaceAll(runLine, r.RunID, id)
		line = strings.ReplaceAll(line, filepath.Base(r.Path), filepath.Base(folder))
		w.WriteString(line)
	}
	must(w.Flush())
	must(idx.Close())
	git(dir, "add", "-A")
	git(dir, "-c", "gc.auto=0", "commit", "-q", "-m", fmt.Sprintf("bench: %d runs", n))
	git(dir, "gc", "-q")
	must(os.RemoveAll(filepath.Join(dir, vault.QuireDir)))
	l, err = ledger.Open(dir)
	must(err)
	must(l.Reindex())
	_, err = l.Call(context.Background(), "get_run", json.RawMessage(fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, ids[n-1])))
	must(err)
	l.Close()
	must(os.WriteFile(ready, []byte(ids[0]), 0o644))
	fmt.Printf("   made the vault of %d runs in %.1f s (kept in %s)\n", n, time.Since(t0).Seconds(), dir)
	return dir, ids
}
