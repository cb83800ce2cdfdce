package shape_test

import (
	"fmt"

	"quire/words/shape"
)

// A run's output of a shape is checked against it: each issue at its JSON
// pointer, in the words the output-shapes spec gives.
func ExampleCheck() {
	fmt.Println(shape.Names())
	ok := `{"lines":[{"name":"revenue","points":[{"at":"2026-10-31T00:00:00Z","value":182450}]}]}`
	fmt.Println(len(shape.Check("series", []byte(ok))))
	for _, is := range shape.Check("series", []byte(`{"lines":[{"name":"revenue","points":[{"at":"2026-10-31T00:00:00Z","value":"a lot"}]}]}`)) {
		fmt.Println(shape.Format(is))
	}
	// Output:
	// [series categories table text]
	// 0
	// /lines/0/points/0/value: Expected a number.
}
