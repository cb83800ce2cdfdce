package history

import (
	"bytes"
	"fmt"

	"quire/words/event"
)

// File is one event file held in memory (as a commit holds it), for
// Replay. Owner, Run, Subject and Version complete its lines written by
// hand, as Source.Owner and the run's state complete those of the work
// tree's files.
type File struct {
	Name    string // its path in the vault
	Data    []byte
	Owner   string
	Run     bool
	Subject string
	Version int
}

// Replay answers the history a rebuild would make of files (the
// playbook's events.jsonl, then its runs' run.jsonl in the index's order,
// as Source.Files lists them): every record in seq order, each line as
// Page presents it. It reads nothing but files and writes nothing: a page
// rendered as of a commit folds the history of that commit's files.
func Replay(files []File) ([]Record, error) {
	all := make([][]*placed, len(files))
	byName := make(map[string]*File, len(files))
	for i := range files {
		all[i] = scanLines(files[i].Name, bytes.NewReader(files[i].Data))
		byName[files[i].Name] = &files[i]
	}
	at, err := number(all)
	if err != nil {
		return nil, err
	}
	filled := map[string]*filledFile{}
	out := make([]Record, len(at))
	for i, p := range at {
		f := byName[p.file]
		raw := f.Data[p.off : p.off+int64(p.n)-1]
		line, err := event.Parse(raw)
		if err != nil {
			return nil, fmt.Errorf("%s at byte %d: %v", p.file, p.off, err)
		}
		line.Seq = int64(i + 1)
		if line.ID == "" && f.Owner != "" {
			ff := filled[p.file]
			if ff == nil {
				ff = newFilledFile(f.Owner, f.Run, f.Subject, f.Version, f.Data)
				filled[p.file] = ff
			}
			if err := ff.fill(p.file, p.off, &line); err != nil {
				return nil, err
			}
		}
		out[i] = Record{Seq: line.Seq, File: p.file, Line: line, Raw: raw}
	}
	return out, nil
}
