// Package gomod finds the Go module around a folder: where quire looks for
// the .tools/ of its source tree (fold/module's tsc lookup), and what a
// resident engine and its front agree on (internal/resident). It imports
// the standard library alone, so the front stays small.
package gomod

import (
	"os"
	"path/filepath"
)

// Around is the nearest folder at or above dir that holds a go.mod, ""
// when none does (or dir is "").
func Around(dir string) string {
	if dir == "" {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			return ""
		}
		dir = up
	}
}
