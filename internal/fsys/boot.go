package fsys

import (
	"os"
	"strings"
	"sync"
)

// BootID names the machine's boot: it changes when the machine starts
// again (a power cut, a crash of the kernel, a reboot), never while it
// runs. Linux gives it (/proc/sys/kernel/random/boot_id); elsewhere it is
// "", and whoever relies on it does without.
//
// A file written and not synced is the kernel's until its pages are
// written out: a process killed leaves it whole, only the machine's stop
// can lose it, and only across a change of BootID. So what must be synced
// in an order only for a machine's stop may be synced later, once a
// record of the boot it was written in (synced) says which files to check
// when the boot is not that one (ledger/history's records: stamp.go).
var BootID = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
})
