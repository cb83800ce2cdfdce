package pagecheck

import (
	"context"
	"testing"
	"time"

	"quire/words/page"
)

// BenchmarkCheckFulfillOrder is the whole save-time check of the
// fulfill-order page: page.Parse, the module's rules, esbuild and tsc (the
// templates' checker is render's and is not included).
func BenchmarkCheckFulfillOrder(b *testing.B) {
	doc := []byte(read(b, "fulfill-order.yaml"))
	opts := Options{Module: compilerOpts(b), Budget: time.Minute}
	for b.Loop() {
		_, _, issues, err := CheckDocument(context.Background(), doc, page.Where{Form: page.InWorkflow}, opts)
		if err != nil || issues != nil {
			b.Fatal(err, issues)
		}
	}
}
