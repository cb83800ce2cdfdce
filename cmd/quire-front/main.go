// Command quire-front is quire as `make install` puts it on the PATH: a
// small front that hands `quire call OP` to the vault's resident engine
// (`quire-engine resident`, started on the first call and left after ten
// idle minutes) and runs quire-engine, the whole program beside it, with
// the same arguments for everything else. It links the standard library
// and internal/resident alone, so that it starts in a millisecond where the
// whole program spends some 50 ms before main (docs/resident.md).
package main

import (
	"os"

	"quire/internal/resident"
)

func main() {
	os.Exit(resident.Front(os.Args))
}
