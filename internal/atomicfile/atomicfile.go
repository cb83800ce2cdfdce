// Package atomicfile is the one way quire replaces a file: a reader, or a
// restart after a crash, sees the old contents or the new ones whole, never
// a part (Write; Replace, for a derived file, promises it to readers and
// killed processes, not across the machine's own stop). The vault's files
// and the fold's kept views both go through it.
package atomicfile

import (
	"os"
	"path/filepath"

	"quire/internal/crashpoint"
)

// Write replaces the file at path with data: it writes a temporary file
// named ".<name>.tmp…" in the same folder (a name the vault's committer
// passes over), fsyncs it, renames it over path and fsyncs the folder. On
// any error the temporary file is removed and path is left as it was.
func Write(path string, data []byte) error { return replace(path, data, true) }

// Replace is Write without the two fsyncs, for a file derived from others
// that are durable (a run's run.state.json, from its run.jsonl): a reader
// and a process that was killed see the old contents or the new whole;
// after the machine itself stopped the file may be as it was before, or
// empty, and is derived again. The fsyncs were two of a boundary's five.
func Replace(path string, data []byte) error { return replace(path, data, false) }

func replace(path string, data []byte, durable bool) (err error) {
	dir := filepath.Dir(path)
	crashpoint.Hit()
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	crashpoint.Hit()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if durable {
		if err = f.Sync(); err != nil {
			return err
		}
	}
	if err = f.Close(); err != nil {
		return err
	}
	crashpoint.Hit()
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	if !durable {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
