package event

import "strings"

// MaxPrincipal is the longest principal, in bytes.
const MaxPrincipal = 200

// IsPrincipal reports whether s may be a principal: who a line names as
// its actor, a comment's author, a run's executor and authorized_by, a
// token's holder. A principal is not blank, is at most MaxPrincipal bytes
// and is on one line. Each caller refuses it in its own words, at its own
// field; a token's principal also holds no < or >.
func IsPrincipal(s string) bool {
	return strings.TrimSpace(s) != "" && len(s) <= MaxPrincipal && !strings.ContainsAny(s, "\n\r")
}
