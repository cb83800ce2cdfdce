// Package refusal is the one form every interface gives a refused call:
//
//	{"error": {"code": "invalid_input", "message": "…", "issues": [{"path": "/source", "line": 12, "message": "…"}]}}
//
// Every layer returns *Error for input it refuses; transports turn it into an
// exit code, an HTTP status or an MCP tool error without rewording it.
package refusal

import (
	"errors"
	"fmt"
	"strings"
)

// Code is one of the five refusal codes of DESIGN.md, or unauthenticated.
type Code string

const (
	InvalidInput Code = "invalid_input"
	NotFound     Code = "not_found"
	Conflict     Code = "conflict"
	Forbidden    Code = "forbidden"
	Unavailable  Code = "unavailable"
	// Unauthenticated is a request of quire serve without a token it knows
	// (none, not a bearer token, unknown, revoked or expired): HTTP 401.
	// Forbidden is a known token without the scope a call needs: 403.
	Unauthenticated Code = "unauthenticated"
)

// Codes are the refusal codes, in the order documents list them.
var Codes = []Code{InvalidInput, NotFound, Conflict, Forbidden, Unauthenticated, Unavailable}

// Issue is one problem at one place: a JSON pointer into the call's
// arguments (or the document) and, where it has one, a line of a document.
type Issue struct {
	Path    string `json:"path"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

// Error is a refusal. Kind is set for the refusals that have one, such as
// a conflict of kind "unworkable". Every refusal an interface gives has at
// least one issue (Object sees to it): an agent acts on issues, so a
// refusal made without one carries its message as an issue at the path ""
// (the whole call), and a refusal about one argument (At, Invalid) names
// that argument's path.
type Error struct {
	Code    Code    `json:"code"`
	Kind    string  `json:"kind,omitempty"`
	Message string  `json:"message"`
	Issues  []Issue `json:"issues,omitempty"`
}

func (e *Error) Error() string { return e.Message }

// Object is the refusal as every interface serialises it, with at least
// one issue.
func (e *Error) Object() map[string]any {
	if len(e.Issues) == 0 {
		c := *e
		c.Issues = []Issue{{Path: "", Message: e.Message}}
		e = &c
	}
	return map[string]any{"error": e}
}

// New makes a refusal with a formatted message and one issue at the path
// "" (the whole call); At names the argument at fault where there is one.
func New(code Code, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	return &Error{Code: code, Message: msg, Issues: []Issue{{Path: "", Message: msg}}}
}

// At refuses because of one argument, with any code: path is its JSON
// pointer, such as "/run_id" for a run that is not found, or the field
// whose state conflicts. The message is as given; the issue names the path.
func At(code Code, path, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	return &Error{Code: code, Message: msg, Issues: []Issue{{Path: path, Message: msg}}}
}

// Invalid refuses one argument: path is its JSON pointer, such as "/run_id".
// The message begins with the path.
func Invalid(path, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	return &Error{Code: InvalidInput, Message: path + ": " + msg, Issues: []Issue{{Path: path, Message: msg}}}
}

// AtPath gives a refusal that names no argument the path of the one at
// fault, for a caller that knows it better than the layer that refused
// (a run's state refused by the run folder is the /to of transition_run).
// Any other error is returned as it is.
func AtPath(err error, path string) error {
	r, ok := As(err)
	if !ok || path == "" {
		return err
	}
	for _, is := range r.Issues {
		if is.Path != "" {
			return err
		}
	}
	c := *r
	c.Issues = []Issue{{Path: path, Message: r.Message}}
	if len(r.Issues) > 0 {
		c.Issues[0].Message = r.Issues[0].Message
	}
	return &c
}

// Issues refuses with several issues; the message lists them.
func WithIssues(code Code, issues []Issue) *Error {
	parts := make([]string, 0, len(issues))
	for _, is := range issues {
		s := is.Path
		if is.Line > 0 {
			s += fmt.Sprintf(" (line %d)", is.Line)
		}
		parts = append(parts, s+": "+is.Message)
	}
	return &Error{Code: code, Message: strings.Join(parts, "; "), Issues: issues}
}

// As finds a refusal in err's chain.
func As(err error) (*Error, bool) {
	var r *Error
	if errors.As(err, &r) {
		return r, true
	}
	return nil, false
}

// Of turns any error into a refusal: refusals pass through, anything else is
// reported as unavailable with its text, since it is a fault of the
// runtime, not of the call.
func Of(err error) *Error {
	if r, ok := As(err); ok {
		return r
	}
	return New(Unavailable, "%s", err.Error())
}
