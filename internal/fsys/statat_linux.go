package fsys

import "golang.org/x/sys/unix"

// openPath opens a folder only to stat below it (no read permission asked).
const openPath = unix.O_PATH
