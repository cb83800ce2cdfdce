package fold

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"quire/internal/atomicfile"
)

// kept is what the keeper writes of one page, in one file, after a page of
// records that moved the views (see step): the views and the standing together, so a reader never sees
// the views of one checkpoint beside the standing of another.
type kept struct {
	Format    int             `json:"format"`
	ID        string          `json:"id"`
	Version   int             `json:"version"`
	DataHash  string          `json:"data_hash"`
	Seq       int64           `json:"seq"`
	SeqAt     time.Time       `json:"seq_at"`
	SeqID     string          `json:"seq_id"` // the id of record Seq
	Chain     string          `json:"chain"`  // the history's chain through Seq
	Folded    int64           `json:"folded"`
	LastEvent *LastEvent      `json:"last_event"`
	Live      bool            `json:"live"`
	Stalled   *Stall          `json:"stalled"`
	NewestAt  time.Time       `json:"newest_at"`
	Views     json.RawMessage `json:"views"`

	// written is the Seq of this page's file on disk: a checkpoint that
	// moved past records its filters passed over is written only now and
	// then (unwrittenRecords), not at every boundary.
	written int64
}

// unwrittenRecords is how far a live page's checkpoint may move past
// records its filters take none of before it is written: a restart reads
// at most so many records again, and folds none of them. Writing it at
// every boundary cost a thousand pages a thousand fsyncs a boundary.
const unwrittenRecords = 5000

// keptFormat is the version of the file's format; a file of another is
// thrown away and the views rebuilt (they are derived state).
const keptFormat = 2 // 2: the checkpoint's record id and chain

func keptPath(dir, id string) string {
	h := sha256.Sum256([]byte(id))
	return filepath.Join(dir, "views-"+hex.EncodeToString(h[:12])+".json")
}

func readKept(dir, id string) (*kept, error) {
	b, err := os.ReadFile(keptPath(dir, id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var k kept
	if json.Unmarshal(b, &k) != nil || k.Format != keptFormat || k.ID != id || len(k.Views) == 0 {
		return nil, nil // derived state that cannot be read is rebuilt
	}
	k.written = k.Seq
	return &k, nil
}

func writeKept(dir string, k *kept) error {
	k.Format = keptFormat
	b, err := json.Marshal(k)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(keptPath(dir, k.ID), b); err != nil {
		return fmt.Errorf("fold: keeping views: %w", err)
	}
	k.written = k.Seq
	return nil
}
