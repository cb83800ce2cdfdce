package comments

import "quire/words/address"

// Comment is a comment as the comment operations answer it.
type Comment struct {
	ID         string `json:"id"`
	Playbook   string `json:"playbook,omitempty"`
	Address    string `json:"address"`
	Author     string `json:"author"`
	Created    string `json:"created"`
	Resolved   bool   `json:"resolved"`
	How        string `json:"how,omitempty"`
	ResolvedAt string `json:"resolved_at,omitempty"`
	ResolvedBy string `json:"resolved_by,omitempty"`
	Text       string `json:"text"`
	// Self is the comment's own address, as the activity names it.
	Self string `json:"self"`
	Path string `json:"path"`
	// Committed is false on a write's answer when the comment is recorded
	// but its commit is left to the next writer (see the ledger's
	// Run.Committed).
	Committed *bool `json:"committed,omitempty"`
}

// Comment is the comment of the playbook ("" the organization's) whose
// file, rel, holds f and text.
func (f Front) Comment(playbook, rel, text string) *Comment {
	return &Comment{ID: f.ID, Playbook: playbook, Address: f.Address, Author: f.Author, Created: f.Created,
		Resolved: f.Resolved, How: f.How, ResolvedAt: f.ResolvedAt, ResolvedBy: f.ResolvedBy, Text: text,
		Self: Self(playbook, f.ID), Path: rel}
}

// Store is the vault as the comments read it; the ledger implements it
// over the vault's index and files.
type Store interface {
	// Files are the paths, from the vault's root, of the comments the
	// index lists of the playbook ("" the organization's own), in the
	// order they were made.
	Files(playbook string) ([]string, error)
	// ReadFile reads a file of the vault by its path from the vault's root.
	ReadFile(rel string) ([]byte, error)
}

// Read reads the comment file rel of the playbook ("" the organization's).
func Read(s Store, playbook, rel string) (*Comment, error) {
	data, err := s.ReadFile(rel)
	if err != nil {
		return nil, err
	}
	f, text, err := Decode(rel, data)
	if err != nil {
		return nil, err
	}
	return f.Comment(playbook, rel, text), nil
}

// List reads the comments of a playbook (the organization's, with
// playbook ""), in the order they were made. A file that does not read or
// decode stops it, with an error naming the file.
func List(s Store, playbook string) ([]*Comment, error) {
	files, err := s.Files(playbook)
	if err != nil {
		return nil, err
	}
	out := make([]*Comment, 0, len(files))
	for _, rel := range files {
		c, err := Read(s, playbook, rel)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// Filter is what list_comments keeps; its zero value keeps every comment.
type Filter struct {
	// Under keeps the comments on an address Under holds (address.Contains).
	Under *address.Address
	// Address keeps the comments on exactly this address (a UUID in it
	// compared without regard to case).
	Address *address.Address
	// Resolved keeps the resolved ones (true) or the open ones (false).
	Resolved *bool
}

// Keep says whether the filter keeps c. With Under or Address, a comment
// whose address no longer parses (its file edited by hand) is not kept.
func (f Filter) Keep(c *Comment) bool {
	if f.Resolved != nil && c.Resolved != *f.Resolved {
		return false
	}
	if f.Under == nil && f.Address == nil {
		return true
	}
	on, err := address.Parse(c.Address)
	if err != nil {
		return false
	}
	on = ReadOn(on)
	if f.Under != nil && !address.Contains(*f.Under, on) {
		return false
	}
	if f.Address != nil && !(address.Contains(*f.Address, on) && address.Contains(on, *f.Address)) {
		return false
	}
	return true
}

// Select is the comments of cs the filter keeps, in their order; never
// nil, so that none is answered as an empty list.
func Select(cs []*Comment, f Filter) []*Comment {
	out := []*Comment{}
	for _, c := range cs {
		if f.Keep(c) {
			out = append(out, c)
		}
	}
	return out
}

// ReadOn is the address a comment made on a is read on. A comment on a
// page saved as a definition of its own is read on the page's subject,
// without a version; no definition type names a page yet, so every
// address is read as it is.
func ReadOn(a address.Address) address.Address { return a }
