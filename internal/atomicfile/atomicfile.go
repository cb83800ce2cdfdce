// Package atomicfile is the one way quire replaces a file: a reader, or a
// restart after a crash, sees the old contents or the new ones whole, never
// a part. The vault's files and the fold's kept views both go through it.
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
func Write(path string, data []byte) (err error) {
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
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	crashpoint.Hit()
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
