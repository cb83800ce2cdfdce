// Package jsonptr writes JSON Pointers (RFC 6901): the paths a refusal's
// issues name, and the pointers of a schema's $ref. A reference token
// writes ~ as ~0 and / as ~1, in that order, so that a token's ~1 is not
// read back as a slash. Reading a pointer back (and refusing a ~ that
// escapes nothing) is words/address's, for a step.
package jsonptr

import "strings"

// Escape writes one reference token of a JSON Pointer: ~ as ~0, then / as
// ~1. A token holding neither is answered as it is, without a copy.
func Escape(token string) string {
	if !strings.ContainsAny(token, "~/") {
		return token
	}
	return strings.ReplaceAll(strings.ReplaceAll(token, "~", "~0"), "/", "~1")
}

// Append is the pointer of the member token under ptr: ptr, a slash and
// the token escaped. Append("", "a/b") is "/a~1b".
func Append(ptr, token string) string { return ptr + "/" + Escape(token) }
