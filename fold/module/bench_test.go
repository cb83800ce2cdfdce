package module

import (
	"context"
	"testing"
)

// BenchmarkCheckFulfillOrder checks the fulfill-order page's module: the
// rules, esbuild and tsc.
func BenchmarkCheckFulfillOrder(b *testing.B) {
	c := compiler(b)
	src := Source{TS: readExample(b, "fulfill-order"), FirstLine: 30, Views: examples["fulfill-order"]}
	for b.Loop() {
		_, issues, err := Check(context.Background(), src, Options{Compiler: c, Timeout: testTimeout})
		if err != nil || issues != nil {
			b.Fatal(err, issues)
		}
	}
}
