package render

import (
	"fmt"
	"time"
)

// The limits of one render (page-format.md, "Limits").
const (
	timeLimit   = 200 * time.Millisecond // for each template
	memoryLimit = 5_000_000              // characters or items a render may charge
	outputLimit = 65_536                 // bytes of a rendered template, in UTF-8
)

// rstate is the state of one render: its clock, what it has charged, and
// the limit it passed, if any. Filters and tags reach it through the
// bindings __st and __stc, which no template can name.
type rstate struct {
	deadline time.Time
	charged  int
	ticks    int
	passed   string // "", "time", "memory" or "size"
	now      time.Time
}

// filterEnv is what a filter call is given beside its arguments: the render
// and whether it stands in a condition (lenient: a missing value passes on).
type filterEnv struct {
	st      *rstate
	lenient bool
}

// limitError stops a render at a limit.
type limitError struct{ which string }

func (e *limitError) Error() string { return "past the " + e.which + " limit" }

func (st *rstate) over(which string) error {
	if st.passed == "" {
		st.passed = which
	}
	return &limitError{which}
}

// tick is called by every filter, every output and every pass of a loop; it
// stops the render once its time is up.
func (st *rstate) tick() error {
	if st.passed != "" {
		return &limitError{st.passed}
	}
	st.ticks++
	if st.ticks&15 == 0 && time.Now().After(st.deadline) {
		return st.over("time")
	}
	return nil
}

// charge counts n characters or items against the memory a render may use.
func (st *rstate) charge(n int) error {
	st.charged += n
	if st.charged > memoryLimit {
		return st.over("memory")
	}
	return nil
}

// limitWriter is where a render writes: it charges every byte, and stops
// the render past the memory limit.
type limitWriter struct {
	buf []byte
	st  *rstate
}

func (w *limitWriter) Write(p []byte) (int, error) {
	if err := w.st.charge(len(p)); err != nil {
		return 0, err
	}
	if len(p) > 0 {
		if err := w.st.tick(); err != nil {
			return 0, err
		}
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// limitWords names a limit in the line in place of a render.
func limitWords(which string) string {
	switch which {
	case "time":
		return fmt.Sprintf("it took more than %d ms to render, the limit for a template", timeLimit.Milliseconds())
	case "memory":
		return "it used more than 5,000,000 characters or items of memory, the limit for a render"
	default:
		return "it rendered more than 64 KiB (65,536 bytes), the limit for a rendered template"
	}
}

var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
