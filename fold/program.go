package fold

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"quire/words/filter"
	"sort"
	"time"

	"quire/words/refusal"
)

// Program is a page's module, already transpiled to JavaScript, and what
// the fold's checks need to know of the page.
type Program struct {
	// JS is an ES module exporting fold(view, event), and maybe helpers.
	JS string
	// Lines maps the JavaScript's lines back to the module's TypeScript:
	// Lines[i] is the module line (from 1) of JavaScript line i+1, 0 where
	// unknown (a line esbuild made up takes the nearest known line before
	// it). nil means the JavaScript keeps the module's lines.
	Lines []int
	// FirstLine is the line of the definition's document where the
	// module's first line is (1 if the module is a document of its own).
	FirstLine int
	// Views is data.views: each view's name and the name of its shape.
	Views map[string]string

	key string
	// shapes is data.views as a JSON object, each name with its shape's
	// name, for the sandbox to check every fold against; unshaped names
	// the views alone (each shape ""), for a pool that checks the shapes
	// in Go once a page; unfused names each shape "check:" and its name,
	// checked after the copy rather than in it.
	shapes, unshaped, unfused string
}

// NewProgram makes a Program; its key (the hash of the JavaScript and the
// views) names the workers that have it loaded.
func NewProgram(js string, lines []int, firstLine int, views map[string]string) *Program {
	p := &Program{JS: js, Lines: lines, FirstLine: firstLine, Views: views}
	p.init()
	return p
}

func (p *Program) init() {
	if p.key != "" {
		return
	}
	names := make([]string, 0, len(p.Views))
	for n := range p.Views {
		names = append(names, n)
	}
	sort.Strings(names)
	shapes := make(map[string]string, len(names))
	unshaped := make(map[string]string, len(names))
	unfused := make(map[string]string, len(names))
	for _, n := range names {
		shapes[n], unshaped[n], unfused[n] = p.Views[n], "", "check:"+p.Views[n]
	}
	sb, _ := json.Marshal(shapes)
	ub, _ := json.Marshal(unshaped)
	fb, _ := json.Marshal(unfused)
	p.shapes, p.unshaped, p.unfused = string(sb), string(ub), string(fb)
	h := sha256.New()
	h.Write([]byte(p.JS))
	h.Write([]byte{0})
	for _, n := range names {
		h.Write([]byte(n + "=" + p.Views[n] + "\n"))
	}
	p.key = hex.EncodeToString(h.Sum(nil))
}

// DocLine is the definition document's line of JavaScript line jsLine, or
// 0 when it is not known.
func (p *Program) DocLine(jsLine int) int {
	if jsLine <= 0 {
		return 0
	}
	tsLine := jsLine
	if p.Lines != nil {
		tsLine = 0
		for i := jsLine - 1; i >= 0; i-- {
			if i < len(p.Lines) && p.Lines[i] > 0 {
				tsLine = p.Lines[i]
				break
			}
		}
		if tsLine == 0 {
			return 0
		}
	}
	first := p.FirstLine
	if first <= 0 {
		first = 1
	}
	return first + tsLine - 1
}

// Event is one record of the history as the fold is given it: its place
// in the history, its CloudEvents form as JSON and its time (Date.now()
// and new Date() in the fold).
type Event struct {
	Seq  int64
	JSON []byte
	Time time.Time

	// match, when set, is JSON decoded once for the filters of every page
	// that reads this event (sharedHistory sets it); nil, it is decoded
	// for each page.
	match *filter.Event
}

// matches tells whether the filters take the event.
func (e Event) matches(fs filter.Filters) bool {
	if e.match != nil {
		return fs.MatchEvent(e.match)
	}
	return fs.MatchJSON(e.JSON)
}

// Stall kinds of the page format's table "When the views stall".
const (
	KindRaised  = "raised"
	KindWork    = "work"
	KindMemory  = "memory"
	KindUnfit   = "unfit"
	KindSize    = "size"
	KindShape   = "shape"
	KindRefused = "refused"
	KindTime    = "time"
	KindCrash   = "crash"
)

// kindShapeCheck is the sandbox's word for a view its check of the shapes
// refused: the driver answers the views that fold returned, and Go's check
// gives the stall its kind, shape, and its words.
const kindShapeCheck = "shapecheck"

// StallEvent is the event the views stopped at.
type StallEvent struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Time string `json:"time"`
}

// Stall says why the views stopped: at which event, the kind of stall,
// the fold's own error and its line in the definition's document (0,
// left out, where not known).
type Stall struct {
	Event StallEvent `json:"event"`
	Kind  string     `json:"kind"`
	Error string     `json:"error"`
	Line  int        `json:"line,omitempty"`
	Seq   int64      `json:"-"`
}

func stallAt(ev Event, kind, text string, line int) *Stall {
	id, typ, at := eventHead(ev)
	return &Stall{Event: StallEvent{ID: id, Type: typ, Time: at}, Kind: kind, Error: text, Line: line, Seq: ev.Seq}
}

// ShapeChecker checks one view, given as its JSON text, against the shape
// of the given name, with the rules the shape adds. words/shape's Check
// is the default: it reads numbers as json.Number, so none is rounded
// before it is checked.
type ShapeChecker func(shape string, view []byte) []refusal.Issue

// Limits are the bounds of one fold.
type Limits struct {
	// Checkpoint is the CPU time of the fold's thread one checkpoint
	// stands for; Checkpoints is the work bound (the page format's 500).
	Checkpoint  time.Duration
	Checkpoints int
	// Memory is how far the sandbox's wasm memory may grow past its size
	// once the module is loaded (64 MiB).
	Memory int64
	// Timeout is one fold's wall time (10 s).
	Timeout time.Duration
	// ViewsBytes is the most the views may take as JSON (524,288 bytes).
	ViewsBytes int
	// Attempts is how often a fold that timed out or crashed is tried,
	// each time in a fresh runtime, before the views stall (20).
	Attempts int
}

// DefaultLimits are the page format's.
func DefaultLimits() Limits {
	return Limits{
		Checkpoint:  10 * time.Millisecond,
		Checkpoints: 500,
		Memory:      64 << 20,
		Timeout:     10 * time.Second,
		ViewsBytes:  524288,
		Attempts:    20,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.Checkpoint <= 0 {
		l.Checkpoint = d.Checkpoint
	}
	if l.Checkpoints <= 0 {
		l.Checkpoints = d.Checkpoints
	}
	if l.Memory <= 0 {
		l.Memory = d.Memory
	}
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	if l.ViewsBytes <= 0 {
		l.ViewsBytes = d.ViewsBytes
	}
	if l.Attempts <= 0 {
		l.Attempts = d.Attempts
	}
	return l
}
