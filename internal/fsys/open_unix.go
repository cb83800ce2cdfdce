//go:build linux || darwin

package fsys

import (
	"errors"
	"io"
	"os"
	"syscall"
)

// OpenFile is os.OpenFile for a file that is not a pipe, a socket or a
// terminal: a vault's files and folders. os.OpenFile offers every file it
// opens to the runtime's poller, which on Linux is five system calls more
// than the open (two fcntls to make it non-blocking, the poller's
// epoll_ctl refused for a regular file, two fcntls back): at some twelve
// opens an append through quire serve, a tenth of its system calls.
// A file made by os.NewFile is not offered (one fcntl), and reads and
// writes block as they would have. The error is os.OpenFile's.
func OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	for {
		fd, err := syscall.Open(name, flag|syscall.O_CLOEXEC, uint32(perm.Perm()))
		if err == nil {
			return os.NewFile(uintptr(fd), name), nil
		}
		if !errors.Is(err, syscall.EINTR) {
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
	}
}

// Open is os.Open through OpenFile.
func Open(name string) (*os.File, error) { return OpenFile(name, os.O_RDONLY, 0) }

// ReadFile is os.ReadFile through OpenFile.
func ReadFile(name string) ([]byte, error) {
	f, err := Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := 512
	if fi, err := f.Stat(); err == nil && fi.Size() < 1<<40 {
		size += int(fi.Size())
	}
	data := make([]byte, 0, size)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return data, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
}
