package viewdiff_test

import (
	"encoding/json"
	"fmt"

	"quire/words/viewdiff"
)

func ExampleDiff() {
	var today, tried any
	json.Unmarshal([]byte(`{"revenue":{"points":[{"period":"2026-11-01","value":132.25}]}}`), &today)
	json.Unmarshal([]byte(`{"revenue":{"points":[{"period":"2026-11-01","value":140}]},"count":3}`), &tried)
	for _, c := range viewdiff.Diff(today, tried) {
		fmt.Printf("%s: %s -> %s\n", c.Pointer, c.Old, c.New)
	}
	// Output:
	// /count:  -> 3
	// /revenue/points/0/value: 132.25 -> 140
}
