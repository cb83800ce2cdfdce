package jsonptr_test

import (
	"fmt"

	"quire/words/jsonptr"
)

func ExampleAppend() {
	fmt.Println(jsonptr.Append("/data", "a/b"))
	fmt.Println(jsonptr.Append("/schemas", "m~n"))
	// Output:
	// /data/a~1b
	// /schemas/m~0n
}
