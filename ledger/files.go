package ledger

import (
	"time"

	"errors"
	"io/fs"
	"os"
	"quire/vault"
	"quire/words/event"
)

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

func fileSize(abs string) int64 {
	fi, err := os.Stat(abs)
	if err != nil {
		return 0
	}
	return fi.Size()
}

type eventLine = event.Line

var formatTime = event.FormatTime

func sig(name string, when time.Time) vault.Signature { return vault.Signature{Name: name, When: when} }
