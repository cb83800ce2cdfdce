package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"quire/internal/gittest"
	"quire/ledger"
)

// The reads that must not grow with the vault (issue 28), at each size of
// the scale section's vaults (scalevault.go), side by side: list_runs with
// each filter its schema offers and get_event through a warm ledger (the
// engine of quire serve and of the resident, without the transport),
// quire check (with nothing changed, and after one boundary), quire check
// --full and quire check --history with nothing new as a person runs them (a process each), and a person's git status.
// Each is its median and p99 over the rounds, beside its target at the
// largest size.

// scaleCase is one measured read, its target at the largest size.
type scaleCase struct {
	what   string
	target time.Duration
}

// With memOnly, only quire serve's memory is measured at each size (its
// row printed alone), without the reads and the minutes of checks.
func benchScale(sizes []int, rounds, checkRounds int, bin string, memOnly bool) {
	if bin == "" {
		bin = buildQuire()
	}
	var cases []scaleCase
	got := map[string]map[int][]time.Duration{}
	mem := map[int]serveMem{} // quire serve's memory, by size
	add := func(what string, target time.Duration, n int, d time.Duration) {
		if got[what] == nil {
			got[what] = map[int][]time.Duration{}
			cases = append(cases, scaleCase{what, target})
		}
		got[what][n] = append(got[what][n], d)
	}
	// Each read is said as it is measured (the checks at 100,000 runs take
	// minutes), then all side by side.
	said := func(what string, n int) {
		ds := got[what][n]
		fmt.Printf("   %d runs, %s: p50 %s, p99 %s\n", n, what, dur(pct(ds, 50)), dur(pct(ds, 99)))
	}
	for _, n := range sizes {
		dir, ids := scaleVault(n)
		noMonitor(dir) // as a run stopped in the middle may have left it
		l, err := ledger.Open(dir)
		must(err)
		// The definitions' runs have headlines to search: a page whose
		// result renders each run's output (made once, in the vault kept).
		d, err := l.Call(context.Background(), "get_definition", json.RawMessage(`{"playbook":"finance","type":"workflow","name":"close"}`))
		must(err)
		if d.(*ledger.Definition).Page == nil {
			for _, def := range []string{"close", "pay"} {
				src := "document:\n  name: " + def + "\npage:\n  result: |\n    {% if run.status == \"started\" %}Working…{% else %}" + def + " came to {{ output.total }}.{% endif %}\n"
				args, _ := json.Marshal(map[string]string{"playbook": "finance", "type": "workflow", "name": def, "source": src})
				_, err := l.Call(context.Background(), "update_definition", args)
				must(err)
			}
		}
		if memOnly {
			l.Close()
			mem[n] = serveMemory(bin, dir, ids)
			fmt.Printf("   %d runs, quire serve after 200 boundaries and 200 reads: %s\n", n, mem[n])
			continue
		}
		mid := ids[len(ids)/2]
		// The day of the run in the middle, as list_runs' since and until
		// take it.
		day := runDay(l, mid)
		reads := []struct{ what, op, args string }{
			{"list_runs, first page", "list_runs", `{"playbook":"finance"}`},
			{"list_runs status=failed", "list_runs", `{"playbook":"finance","status":"failed"}`},
			{"list_runs state=paused", "list_runs", `{"playbook":"finance","state":"paused"}`},
			{"list_runs executor=agent-3", "list_runs", `{"playbook":"finance","executor":"agent-3"}`},
			{"list_runs since/until one day", "list_runs", fmt.Sprintf(`{"playbook":"finance","since":%q,"until":%q}`, day, day)},
			{"list_runs name=pay (definition)", "list_runs", `{"playbook":"finance","type":"workflow","name":"pay"}`},
			{"list_runs state=active, no match", "list_runs", `{"playbook":"finance","state":"active","executor":"nobody"}`},
			{"list_runs search, no match", "list_runs", `{"playbook":"finance","search":"no such words"}`},
			{"list_runs search=\"came to 12\"", "list_runs", `{"playbook":"finance","search":"came to 12"}`},
			// The whole history's first page: every event file is
			// looked at for lines written by hand (a stat each, without
			// a file system monitor; the Watchman row below).
			{"list_playbook_events, whole history", "list_playbook_events", `{"playbook":"finance","limit":100}`},
			{"get_event", "get_event", fmt.Sprintf(`{"playbook":"finance","event_id":"%s_1"}`, mid)},
			{"get_run", "get_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, mid)},
		}
		for _, r := range reads {
			target := 50 * time.Millisecond
			if r.op != "list_runs" && r.op != "list_playbook_events" {
				target = 5 * time.Millisecond
			}
			t0 := time.Now()
			_, err := l.Call(context.Background(), r.op, json.RawMessage(r.args)) // warm
			must(err)
			if r.what == "list_runs search, no match" {
				// The first search renders every run's headline, once
				// for each version of the page (runindex.go).
				fmt.Printf("   %d runs, the first search, every headline rendered: %s\n", n, dur(time.Since(t0)))
			}
			for i := 0; i < rounds; i++ {
				t0 := time.Now()
				_, err := l.Call(context.Background(), r.op, json.RawMessage(r.args))
				must(err)
				add(r.what, target, n, time.Since(t0))
			}
			said(r.what, n)
		}
		l.Close()
		mem[n] = serveMemory(bin, dir, ids)
		fmt.Printf("   %d runs, quire serve after 200 boundaries and 200 reads: %s\n", n, mem[n])
		// Each check and git status is timed alone: after any compaction
		// under way (the 200 boundaries above leave one due, and a quire
		// call that commits starts one in a process of its own) has
		// ended, and with the next held off until it is done, as the
		// tests hold it (gittest.HoldCompaction). The compaction's share
		// is the boundary section's.
		run := func(what string, target time.Duration, k int, name string, args ...string) {
			for i := 0; i < k; i++ {
				release := gittest.HoldCompaction(dir)
				add(what, target, n, timed(dir, name, args...))
				release()
			}
			said(what, n)
		}
		run("quire check --full", 30*time.Second, checkRounds, bin, "check", "--full")
		timed(dir, bin, "check") // the check the next ones answer from
		run("quire check (nothing changed)", 2*time.Second, checkRounds, bin, "check")
		// A person's check after an agent's boundary: one step recorded
		// on an active run (every tenth, from the first) before each.
		for i := 0; i < checkRounds; i++ {
			id := ids[(i*10)%len(ids)]
			release := gittest.HoldCompaction(dir)
			timed(dir, bin, "call", "record_event", "--args", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_completed","step":"check/%d","actor":"agent-7"}`, id, i))
			add("quire check after one boundary", 2*time.Second, n, timed(dir, bin, "check"))
			release()
		}
		said("quire check after one boundary", n)
		timed(dir, bin, "check", "--history") // proves what is new
		run("quire check --history, nothing new", time.Second, checkRounds, bin, "check", "--history")
		run("git status", time.Second, checkRounds, "git", "status", "--porcelain")
		// As with status.showUntrackedFiles no (README): without a file
		// system monitor, the untracked files' search stats every folder.
		run("git status -uno", time.Second, checkRounds, "git", "status", "--porcelain", "-uno")

		// With the file system monitor the README sets up on Linux
		// (Watchman's hook): git status and quire check ask it what
		// changed instead of a stat of every file.
		undo, why := watchman(dir, 2*n+100)
		if why != "" {
			fmt.Printf("   %d runs, with Watchman's monitor: not measured: %s\n", n, why)
			continue
		}
		timed(dir, "git", "status", "--porcelain") // Watchman's first answer: a crawl of the work tree
		timed(dir, bin, "check")                   // its record takes the monitor's token
		run("git status, Watchman", time.Second, checkRounds, "git", "status", "--porcelain")
		// A warm ledger asks the monitor which event files changed
		// (history.AdoptAllFor); its first read asks with git's token.
		l, err = ledger.Open(dir)
		must(err)
		args := json.RawMessage(`{"playbook":"finance","limit":100}`)
		_, err = l.Call(context.Background(), "list_playbook_events", args)
		must(err)
		for i := 0; i < rounds; i++ {
			t0 := time.Now()
			_, err := l.Call(context.Background(), "list_playbook_events", args)
			must(err)
			add("list_playbook_events, whole history, Watchman", 50*time.Millisecond, n, time.Since(t0))
		}
		l.Close()
		said("list_playbook_events, whole history, Watchman", n)
		run("quire check, nothing changed, Watchman", 2*time.Second, checkRounds, bin, "check")
		for i := 0; i < checkRounds; i++ {
			id := ids[((checkRounds+i)*10)%len(ids)]
			release := gittest.HoldCompaction(dir)
			timed(dir, bin, "call", "record_event", "--args", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"step_completed","step":"watched/%d","actor":"agent-7"}`, id, i))
			add("quire check after one boundary, Watchman", 2*time.Second, n, timed(dir, bin, "check"))
			add("git status after one boundary, Watchman", time.Second, n, timed(dir, "git", "status", "--porcelain"))
			release()
		}
		said("quire check after one boundary, Watchman", n)
		said("git status after one boundary, Watchman", n)
		timed(dir, bin, "check", "--history") // proves what is new
		run("quire check --history nothing new, Watchman", time.Second, checkRounds, bin, "check", "--history")
		undo()
	}
	fmt.Printf("%-44s", "")
	for _, n := range sizes {
		fmt.Printf(" %21s", fmt.Sprintf("%d runs: p50 / p99", n))
	}
	fmt.Printf("   %-12s\n", "target")
	last := sizes[len(sizes)-1]
	for _, c := range cases {
		fmt.Printf("%-44s", c.what)
		for _, n := range sizes {
			ds := got[c.what][n]
			fmt.Printf(" %21s", dur(pct(ds, 50))+" / "+dur(pct(ds, 99)))
		}
		mark := "ok"
		if pct(got[c.what][last], 50) > c.target {
			mark = "MISSED"
		}
		fmt.Printf("   %-12s %s\n", "≤ "+dur(c.target), mark)
	}
	fmt.Printf("%-44s", "quire serve resident / high-water")
	for _, n := range sizes {
		fmt.Printf(" %21s", fmt.Sprintf("%d / %d MB", mem[n].rss>>10, mem[n].hwm>>10))
	}
	mark := "ok"
	if mem[last].hwm>>10 > 300 {
		mark = "MISSED"
	}
	fmt.Printf("   %-12s %s\n", "≤ 300 MB", mark)
}

// serveMem is what serveMemory measured: the server's resident memory
// and its high-water mark (kB), the resident memory's parts (anon, the
// process's own; file, the pages of files it maps: the packs, the shared
// index, which the kernel takes back as page cache), the boundaries'
// median, and the CPU the server spent (its collector's share of it is
// what a memory limit trades).
type serveMem struct {
	rss, hwm   uint64
	anon, file uint64
	p50        time.Duration
	cpu        time.Duration
	// maps is the files whose mapped pages the server holds most of, as
	// "name size" (kB), largest first: which of the mapped files its
	// file memory is.
	maps []string
}

func (m serveMem) String() string {
	s := fmt.Sprintf("%d MB resident (%d MB its own, %d MB of mapped files), high-water %d MB; boundary p50 %s, server CPU %.1f s",
		m.rss>>10, m.anon>>10, m.file>>10, m.hwm>>10, ms(m.p50), m.cpu.Seconds())
	if len(m.maps) > 0 {
		s += "; mapped: " + strings.Join(m.maps, ", ")
	}
	return s
}

// serveMemory starts quire serve on the vault, records 200 boundaries
// over HTTP on its active runs (a step each) with a read after each (a
// list of runs with a filter, a run, its commits in turn), and answers
// the server's resident memory and its high-water mark then.
func serveMemory(bin, dir string, ids []string) serveMem {
	base, pid, stop := serveProc(bin, dir)
	defer stop()
	hc := &http.Client{Timeout: 5 * time.Minute}
	do := func(method, url, body string) {
		req, err := http.NewRequest(method, base+url, strings.NewReader(body))
		must(err)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := hc.Do(req)
		must(err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			must(fmt.Errorf("%s %s: %s %s", method, url, resp.Status, b))
		}
	}
	// The scale vault's active runs are every tenth, from the first and
	// the sixth (scaleTemplates: close, then pay, active first).
	var active []string
	for i, id := range ids {
		if i%10 == 0 || i%10 == 5 {
			active = append(active, id)
		}
	}
	rng := rand.New(rand.NewSource(int64(len(ids))))
	reads := []string{"/runs?status=failed", "/runs?state=paused&limit=100", "/runs?executor=agent-3", "/runs?search=came+to"}
	var took []time.Duration
	for k := 0; k < 200; k++ {
		id := active[rng.Intn(len(active))]
		t0 := time.Now()
		do("POST", "/v1/orgs/bench/playbooks/finance/runs/"+id+"/events",
			fmt.Sprintf(`{"event":"step_completed","step":"memory/%d","actor":"agent-7"}`, k))
		took = append(took, time.Since(t0))
		switch k % 3 {
		case 0:
			do("GET", "/v1/orgs/bench/playbooks/finance"+reads[k%len(reads)], "")
		case 1:
			do("GET", "/v1/orgs/bench/playbooks/finance/runs/"+ids[rng.Intn(len(ids))], "")
		default:
			do("GET", "/v1/orgs/bench/playbooks/finance/runs/"+id+"/commits", "")
		}
	}
	p := strconv.Itoa(pid)
	return serveMem{rss: pidStatus(p, "VmRSS"), hwm: pidStatus(p, "VmHWM"), anon: pidStatus(p, "RssAnon"), file: pidStatus(p, "RssFile"),
		p50: pct(took, 50), cpu: pidCPU(p), maps: pidMaps(p, 4)}
}

// pidMaps is the n files of which a process holds the most mapped pages
// resident (/proc/PID/smaps), each "name N MB", largest first; the
// files' names are their last two parts (.git/index's shared index, a
// pack).
func pidMaps(pid string, n int) []string {
	f, err := os.Open("/proc/" + pid + "/smaps")
	if err != nil {
		return nil
	}
	defer f.Close()
	rss := map[string]uint64{}
	name := ""
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		fields := strings.Fields(line)
		switch {
		case len(fields) >= 6 && strings.Contains(fields[0], "-") && strings.HasPrefix(fields[5], "/"):
			name = filepath.Join(filepath.Base(filepath.Dir(fields[5])), filepath.Base(fields[5]))
		case len(fields) >= 5 && strings.Contains(fields[0], "-"):
			name = "" // anonymous, or not a file
		case name != "" && len(fields) == 3 && fields[0] == "Rss:":
			k, _ := strconv.ParseUint(fields[1], 10, 64)
			rss[name] += k
		}
	}
	names := make([]string, 0, len(rss))
	for k := range rss {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool { return rss[names[i]] > rss[names[j]] })
	var out []string
	for _, k := range names[:min(n, len(names))] {
		if rss[k] >= 1<<10 {
			out = append(out, fmt.Sprintf("%s %d MB", k, rss[k]>>10))
		}
	}
	return out
}

// pidCPU is the CPU a process spent so far, user and system
// (/proc/PID/stat's utime and stime, in clock ticks of 100 Hz); 0 where
// there is no /proc.
func pidCPU(pid string) time.Duration {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	// The fields after the command's name, which is in parentheses.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseUint(f[11], 10, 64)
	st, _ := strconv.ParseUint(f[12], 10, 64)
	return time.Duration(u+st) * 10 * time.Millisecond
}

// runDay is the day a run started, YYYY-MM-DD.
func runDay(l *ledger.Ledger, id string) string {
	res, err := l.Call(context.Background(), "get_run", json.RawMessage(fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, id)))
	must(err)
	return res.(*ledger.Run).Started[:10]
}

// timed runs a program in dir and answers how long it took; it must end
// well (quire check's exit 1 for problems is a failure of the bench's
// vault).
func timed(dir, name string, args ...string) time.Duration {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	d := time.Since(t0)
	if err != nil {
		must(fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out))
	}
	return d
}

// dur prints a duration in ms below a second, in s above.
func dur(d time.Duration) string {
	if d >= time.Second {
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
	return ms(d)
}
