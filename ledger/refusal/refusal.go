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

// Code is one of the five refusal codes of DESIGN.md.
type Code string

const (
	InvalidInput Code = "invalid_input"
	NotFound     Code = "not_found"
	Conflict     Code = "conflict"
	Forbidden    Code = "forbidden"
	Unavailable  Code = "unavailable"
)

// Issue is one problem at one place: a JSON pointer into the call's
// arguments (or the document) and, where it has one, a line of a document.
type Issue struct {
	Path    string `json:"path"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

// Error is a refusal. Kind is set for the refusals that have one, such as
// a conflict of kind "unworkable".
type Error struct {
	Code    Code    `json:"code"`
	Kind    string  `json:"kind,omitempty"`
	Message string  `json:"message"`
	Issues  []Issue `json:"issues,omitempty"`
}

func (e *Error) Error() string { return e.Message }

// Object is the refusal as every interface serialises it.
func (e *Error) Object() map[string]any { return map[string]any{"error": e} }

// New makes a refusal with a formatted message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid refuses one argument: path is its JSON pointer, such as "/run_id".
func Invalid(path, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	return &Error{Code: InvalidInput, Message: path + ": " + msg, Issues: []Issue{{Path: path, Message: msg}}}
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
	return &Error{Code: Unavailable, Message: err.Error()}
}
