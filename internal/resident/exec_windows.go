package resident

import (
	"errors"
	"os"
	"os/exec"
)

// execEngine runs the engine with the same arguments, streams and
// environment and answers its exit code (Windows has no exec).
func execEngine(engine string, argv []string) int {
	cmd := exec.Command(engine, argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		os.Stderr.WriteString("quire: cannot run " + engine + ": " + err.Error() + "\n")
		return 1
	}
	return 0
}
