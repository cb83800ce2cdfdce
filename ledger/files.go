package ledger

import (
	"errors"
	"io/fs"
	"os"
)

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

func fileSize(abs string) int64 {
	fi, err := os.Stat(abs)
	if err != nil {
		return 0
	}
	return fi.Size()
}
