package fold

import "encoding/json"

// standingFields is a standing as its fields say, without MarshalJSON.
type standingFields Standing

// standingOutOfReach is an out_of_reach standing: its state and version.
type standingOutOfReach struct {
	State   string `json:"state"`
	Version int    `json:"version"`
}

// MarshalJSON gives an out_of_reach standing with its version alone.
func (s Standing) MarshalJSON() ([]byte, error) {
	if s.State == StateOutOfReach {
		return json.Marshal(standingOutOfReach{s.State, s.Version})
	}
	return json.Marshal(standingFields(s))
}

// JSONForms gives a value of each Go type MarshalJSON writes, so that the
// schemas quire declares (serve's) say what a standing takes.
func (Standing) JSONForms() []any {
	return []any{standingFields{}, standingOutOfReach{}}
}
