//go:build unix

package resident

import (
	"os"
	"syscall"
)

// execEngine replaces the front with the engine, given the same arguments
// and environment: the engine is then the process the caller started.
func execEngine(engine string, argv []string) int {
	err := syscall.Exec(engine, argv, os.Environ())
	os.Stderr.WriteString("quire: cannot run " + engine + ": " + err.Error() + "\n")
	return 1
}
