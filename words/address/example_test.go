package address_test

import (
	"fmt"

	"quire/words/address"
)

// An address names one thing of the vault; Parse reads it, refuses what
// breaks its rules at the segment that breaks them, and String writes it
// back as it was given.
func ExampleParse() {
	a, err := address.Parse("finance/definitions/workflow/close-the-week/4/steps/do/1/review")
	if err != nil {
		panic(err)
	}
	fmt.Println(a.Kind, a.Playbook, a.Name, a.Version, a.Step)
	fmt.Println(a.String())
	fmt.Println(address.CommentTakes(a))

	_, err = address.Parse("finance/definitions/workflow/Close/1")
	fmt.Println(err)
	// Output:
	// step finance close-the-week 4 do/1/review
	// finance/definitions/workflow/close-the-week/4/steps/do/1/review
	// true
	// /address: <name> "Close" (segment 4) must be 3 to 48 lowercase letters, digits and hyphens, beginning with a letter
}
