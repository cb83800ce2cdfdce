// Package fsys holds the few file-system calls quire makes that differ
// between operating systems: a file's inode and stat times, the vault's
// whole-file lock, opening a file without following a symbolic link,
// mapping a pack into memory, and asking whether a process is alive.
//
// Linux is the platform quire is tested on; macOS and Windows are built in
// CI, not tested. Where Windows has no equivalent the fallback is weaker,
// and said so at the function:
//   - Stat answers ok=false (no inode, device, owner or change time), so
//     the git index's entries carry zeros there and a file counts as
//     unchanged by size and modification time alone, as git for Windows does.
//   - OpenNoFollow checks the last component with Lstat before opening: a
//     link swapped in between the check and the open is followed
//     (O_NOFOLLOW closes that window on Linux and macOS).
//   - Map reads the file into memory instead of mapping it.
package fsys
