package fsys

import "golang.org/x/sys/unix"

const openPath = unix.O_RDONLY
