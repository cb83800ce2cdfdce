package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"quire/fold"
	"quire/internal/jsscan"
	"quire/words/agentrun"
	"quire/words/refusal"
)

// The operations of AgentRun documents: inspect_workflow (the save's
// inspection, on demand) and try_code (one code node's function run in
// a sandbox like a page's). Neither writes anything.

// WorkflowSourceArgs names an AgentRun document: a saved workflow
// (playbook, name, version) or a source not yet saved.
type WorkflowSourceArgs struct {
	Playbook string `json:"playbook,omitempty"`
	Name     string `json:"name,omitempty" jsonschema:"a saved workflow's name"`
	Version  int    `json:"version,omitempty" jsonschema:"its version; the current one if left out"`
	Source   string `json:"source,omitempty" jsonschema:"a document not yet saved, instead of playbook and name"`
}

type TryCodeArgs struct {
	Playbook string          `json:"playbook,omitempty"`
	Name     string          `json:"name,omitempty"`
	Version  int             `json:"version,omitempty" jsonschema:"its version; the current one if left out"`
	Source   string          `json:"source,omitempty" jsonschema:"a document not yet saved"`
	Label    string          `json:"label" jsonschema:"the code node's label"`
	State    json.RawMessage `json:"state" jsonschema:"the workflow state the function receives (an object)"`
}

// TryCode is what one code node's function did with a state.
type TryCode struct {
	Label string `json:"label"`
	// Value is what the function returned; Stored how it was stored: as
	// (under as), patch (an object merged into state) or label (a
	// non-object, under the node's label); State the state after.
	Value  json.RawMessage `json:"value,omitempty"`
	Stored string          `json:"stored,omitempty"`
	Key    string          `json:"key,omitempty"`
	State  json.RawMessage `json:"state,omitempty"`
	Error  *TryError       `json:"error,omitempty"`
}

// TryError is why the function failed: its error, and the line in the
// code (from 1, 0 where not known).
type TryError struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Line    int    `json:"line,omitempty"`
}

// workflowSource reads the document the arguments name.
func (l *Ledger) workflowSource(a *WorkflowSourceArgs) (string, error) {
	if a.Source != "" {
		if a.Playbook != "" || a.Name != "" || a.Version != 0 {
			return "", refusal.Invalid("/source", "give source, or playbook and name (and version), not both")
		}
		if !agentrun.Is(a.Source) {
			if is := agentrun.Misread(a.Source); is != nil {
				return "", refusal.WithIssues(refusal.InvalidInput, []refusal.Issue{*is})
			}
			return "", refusal.Invalid("/source", "not an AgentRun document: a JSON object with \"v\": 2")
		}
		return a.Source, nil
	}
	if a.Playbook == "" || a.Name == "" {
		return "", refusal.Invalid("", "name a saved workflow (playbook and name) or give its source")
	}
	d, err := l.definitionAt(a.Playbook, "workflow", a.Name, a.Version, true)
	if err != nil {
		return "", err
	}
	if !agentrun.Is(d.Source) {
		return "", refusal.Invalid("/name", "the workflow %q is a YAML workflow, not an AgentRun document", a.Name)
	}
	return d.Source, nil
}

// inspectWorkflow is the operation inspect_workflow (ops.go).
func (l *Ledger) inspectWorkflow(ctx context.Context, a *WorkflowSourceArgs) (*agentrun.Report, error) {
	src, err := l.workflowSource(a)
	if err != nil {
		return nil, err
	}
	return agentrun.Inspect(src), nil
}

// tryCode is the operation try_code (ops.go).
func (l *Ledger) tryCode(ctx context.Context, a *TryCodeArgs) (*TryCode, error) {
	src, err := l.workflowSource(&WorkflowSourceArgs{Playbook: a.Playbook, Name: a.Name, Version: a.Version, Source: a.Source})
	if err != nil {
		return nil, err
	}
	var state map[string]any
	if err := decodeNumbers(a.State, &state); err != nil || state == nil {
		return nil, refusal.Invalid("/state", "state is the workflow state the function receives: a JSON object")
	}
	doc, issues := agentrun.Parse(src)
	if doc == nil {
		return nil, refusal.WithIssues(refusal.InvalidInput, issues)
	}
	ptr, node := doc.Node(a.Label)
	if node == nil {
		return nil, refusal.At(refusal.NotFound, "/label", "the workflow has no node labelled %q", a.Label)
	}
	if node["node"] != "code" {
		return nil, refusal.Invalid("/label", "the node %q is a %v node; try_code runs a code node", a.Label, node["node"])
	}
	var bad []refusal.Issue
	for _, is := range agentrun.Inspect(src).Issues {
		if is.Path == "/source"+ptr || strings.HasPrefix(is.Path, "/source"+ptr+"/") {
			bad = append(bad, is)
		}
	}
	if len(bad) > 0 {
		return nil, refusal.WithIssues(refusal.InvalidInput, bad)
	}
	code, _ := node["code"].(string)
	as, _ := node["as"].(string)
	return l.runCode(ctx, a.Label, code, as, a.State, state)
}

// tryModule is the module a code node's function runs in: the shadowed
// globals bound to undefined (eval cannot be, and the sandbox has none),
// the state frozen (a function that mutates it fails), and the code from
// the module's second line, so a line of the module is a line of the
// code plus one.
func tryModule(code string) (string, []int) {
	var names []string
	for _, g := range agentrun.Shadowed() {
		if g != "eval" {
			names = append(names, g+" = undefined")
		}
	}
	head := "const " + strings.Join(names, ", ") + "; " +
		"const __freeze = (v) => { if (typeof v === 'object' && v !== null) { for (const k of Object.keys(v)) __freeze(v[k]); Object.freeze(v); } return v; }; " +
		"export function fold(views, ev) { const r = __code(__freeze(ev.data.state)); return r === undefined ? { undefined: true } : { value: r }; } " +
		"const __code = (\n"
	n := strings.Count(code, "\n") + 1
	lines := make([]int, 0, n+2)
	lines = append(lines, 0)
	for i := 1; i <= n; i++ {
		lines = append(lines, i)
	}
	return head + code + "\n);\n", lines
}

// try_code's bounds. A call runs one function in a worker process of
// try_code's own, one at a time, and at most tryWaiting more calls wait
// their turn; one more is refused at once as unavailable, naming the
// bound. A function may run tryTimeout of wall time: wall time and not
// CPU, because the caller waits for the answer and every call queued
// behind it waits too, so the bound must hold whatever else the machine
// runs (a CPU bound stretches with the load: 5 s of CPU at a load of 14
// on two cores is some 35 s of waiting for each caller in the queue). A
// function that needs more than that on a busy machine is answered as
// time, and may be tried again. The whole call, waiting included, has
// tryDeadline, past which it is refused as unavailable: so every call
// is answered within it, and the last of a full queue well within 12 s.
const (
	tryWorkers  = 1
	tryWaiting  = 2
	tryTimeout  = time.Second
	tryDeadline = 10 * time.Second
)

// tryPool is try_code's pool of workers and its queue, a slot for each
// call running or waiting.
func (l *Ledger) tryPool() (*fold.Pool, chan struct{}, error) {
	v := &l.views
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.tryPool == nil {
		p, err := fold.NewPool(fold.PoolOptions{Workers: tryWorkers, Idle: 2,
			CacheDir: l.compiledCache(),
			// One try of tryTimeout: the caller may try again.
			Limits: fold.Limits{Timeout: tryTimeout, Attempts: 1},
			// The value is any JSON: no shape to check.
			Check: func(string, []byte) []refusal.Issue { return nil }})
		if err != nil {
			return nil, nil, err
		}
		v.tryPool = p
		v.tryCalls = make(chan struct{}, tryWorkers+tryWaiting)
	}
	return v.tryPool, v.tryCalls, nil
}

func (l *Ledger) runCode(ctx context.Context, label, code, as string, stateRaw json.RawMessage, state map[string]any) (*TryCode, error) {
	pool, calls, err := l.tryPool()
	if err != nil {
		return nil, err
	}
	select {
	case calls <- struct{}{}:
		defer func() { <-calls }()
	default:
		return nil, refusal.New(refusal.Unavailable,
			"try_code is busy: it runs %d function at a time and at most %d more calls wait their turn, and %d are running or waiting; try again in a few seconds",
			tryWorkers, tryWaiting, tryWorkers+tryWaiting)
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, tryDeadline)
	defer cancel()
	js, lines := tryModule(code)
	prog := fold.NewProgram(js, lines, 1, map[string]string{"value": "", "undefined": ""})
	now := time.Now().UTC()
	ev, _ := json.Marshal(map[string]any{"id": "try-code", "type": "try_code", "time": now.Format(time.RFC3339Nano),
		"data": map[string]json.RawMessage{"state": compact(stateRaw)}})
	res, err := pool.Fold(ctx, prog, nil, []fold.Event{{Seq: 1, JSON: ev, Time: now}})
	if err != nil {
		if parent.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return nil, refusal.New(refusal.Unavailable,
				"try_code could not run the function within %v, its time for a call, waiting included: the machine is busy; try again in a few seconds", tryDeadline)
		}
		return nil, err
	}
	out := &TryCode{Label: label}
	if res.Stall != nil {
		st := asRaised(res.Stall)
		out.Error = &TryError{Kind: st.Kind, Message: stallWords(st), Line: refineLine(code, st.Error, st.Line)}
		return out, nil
	}
	var views struct {
		Value     json.RawMessage `json:"value"`
		Undefined bool            `json:"undefined"`
	}
	if err := json.Unmarshal(res.Views, &views); err != nil {
		return nil, err
	}
	if views.Undefined {
		out.Error = &TryError{Kind: "unfit", Message: "the function returned undefined: return a value (without as, an object patch)"}
		return out, nil
	}
	out.Value = views.Value
	var value any
	if err := decodeNumbers(views.Value, &value); err != nil {
		return nil, err
	}
	obj, isObj := value.(map[string]any)
	switch {
	case as != "":
		out.Stored, out.Key = "as", as
		state[as] = value
	case isObj:
		out.Stored = "patch"
		for k, v := range obj {
			state[k] = v
		}
	default:
		out.Stored, out.Key = "label", label
		state[label] = value
	}
	out.State, err = json.Marshal(state)
	return out, err
}

// stallWords words why the function stopped for its author, who wrote a
// code node and never a fold: the fold's own words name its page, its
// tries and its checkpoints, which try_code's one try of one function has
// none of. An error the function raised is its own words.
func stallWords(st *fold.Stall) string {
	switch st.Kind {
	case fold.KindTime:
		return fmt.Sprintf("the function ran for more than %v, try_code's bound of wall time: it may loop for ever, or need more than a busy machine gave it", tryTimeout)
	case fold.KindWork:
		return "the function did more work than try_code allows a call: it may loop for ever"
	case fold.KindMemory:
		return "the function used more memory than try_code's sandbox has"
	case fold.KindSize:
		return "the function's value is too large: " + strings.TrimPrefix(st.Error, "the views take ")
	case fold.KindCrash:
		return "the sandbox stopped while running the function; try again, and if it stops again the function is the cause"
	case fold.KindRaised:
		if strings.HasPrefix(st.Error, stackWords) {
			return stackWords + " (the function recurses without end, or too deep for the sandbox)"
		}
	}
	return st.Error
}

const stackWords = "RangeError: Maximum call stack size exceeded"

// asRaised is a crash of one try that is its stack overflowing, as the
// error the function raised: the fold calls it raised after two such
// crashes in fresh runtimes, and try_code tries once.
func asRaised(st *fold.Stall) *fold.Stall {
	if st.Kind == fold.KindCrash && fold.IsStackTrap(st.Error) {
		c := *st
		c.Kind, c.Error = fold.KindRaised, stackWords
		return &c
	}
	return st
}

// decodeNumbers decodes JSON keeping its numbers as written.
func decodeNumbers(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}

var (
	propertyError = regexp.MustCompile(`(?:read|set) propert(?:y|ies) '([^']+)' of`)
	undefinedName = regexp.MustCompile(`'?([A-Za-z_$][A-Za-z0-9_$]*)'? is not defined`)
)

// refineLine finds the line of an error the engine raised itself. QuickJS
// names the line of a throw, but for an error it raises (a property of
// undefined, a name not defined) the line it last saved, which may be
// where the function begins: the first line from there that reads that
// property or names that name is the error's.
func refineLine(code, msg string, line int) int {
	var want func(toks []jsscan.Token, i int) bool
	if m := propertyError.FindStringSubmatch(msg); m != nil {
		want = func(toks []jsscan.Token, i int) bool {
			t := toks[i]
			if t.Kind == jsscan.Ident && t.Text == m[1] && i > 0 && (toks[i-1].Text == "." || toks[i-1].Text == "?.") {
				return true
			}
			return t.Kind == jsscan.String && len(t.Text) > 1 && t.Text[1:len(t.Text)-1] == m[1] && i > 0 && toks[i-1].Text == "["
		}
	} else if m := undefinedName.FindStringSubmatch(msg); m != nil {
		want = func(toks []jsscan.Token, i int) bool {
			return toks[i].Kind == jsscan.Ident && toks[i].Text == m[1] && (i == 0 || toks[i-1].Text != "." && toks[i-1].Text != "?.")
		}
	} else {
		return line
	}
	toks := jsscan.Scan(code)
	for i, t := range toks {
		if t.Line >= line && want(toks, i) {
			return t.Line
		}
	}
	return line
}
