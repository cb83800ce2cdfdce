package checker

import "fmt"

// Problem is one thing quire check found wrong, at its path (and line).
type Problem struct {
	Commit  string `json:"commit,omitempty"` // the commit of a problem quire check --history found
	Path    string `json:"path"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	if p.Commit != "" {
		return "commit " + short(p.Commit) + ": " + Problem{Path: p.Path, Line: p.Line, Message: p.Message}.String()
	}
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.Path, p.Line, p.Message)
	}
	return p.Path + ": " + p.Message
}

// CheckReport is what quire check found.
type CheckReport struct {
	Runs     int       `json:"runs"`
	Events   int       `json:"events"`
	Problems []Problem `json:"problems"`
	// Warnings are what looks wrong but breaks no rule of the capsule: a
	// run that recorded steps its pinned document does not have.
	Warnings []Problem `json:"warnings,omitempty"`
	// Read is what the check read again, the rest answered from the
	// record of the last check that passed (record.go).
	Read *ReadReport `json:"read,omitempty"`
	// History is what the walk over the git history did (check --history).
	History *HistoryReport `json:"history,omitempty"`
	// Views is how each page's views were verified (check --views).
	Views []PageCheck `json:"views,omitempty"`
}

// PageCheck is one page's views folded again from nothing and checked
// against their receipt: verified, differs or out_of_reach.
type PageCheck struct {
	Playbook string `json:"playbook"`
	Subject  string `json:"subject"`
	Verdict  string `json:"verdict"`
	Message  string `json:"message"`
}

// ReadReport is what a check read again: the run folders, and whether it
// read the vault as a whole (the index of things, git's state, the work
// tree against it, the histories, the warnings), which it does unless
// every stamp is the record's.
type ReadReport struct {
	Runs  int  `json:"runs"`
	Vault bool `json:"vault"`
}

// HistoryReport is what a walk over the history did.
type HistoryReport struct {
	Head    string `json:"head"`    // the commit the walk proved up to
	Commits int    `json:"commits"` // the commits this walk proved
	Proved  int    `json:"proved"`  // the commits proved in all, by this walk and earlier ones
	Reads   int    `json:"reads"`   // the git objects (commits, trees, blobs) this walk read
	Note    string `json:"note,omitempty"`
}

// RepairReport is what quire janitor's repair pass did and left.
type RepairReport struct {
	// Repaired says what quire janitor did, one sentence each.
	Repaired []string `json:"repaired"`
	// Left lists what needs a person, with what to do.
	Left []Problem `json:"left"`
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
