package shape

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// series2000 is a valid series of 20 lines of 100 points each, 2,000 in
// all, each an RFC 3339 time with a value, a low and a high: the most a
// series holds, in the form that is slowest to check.
func series2000() []byte {
	var b strings.Builder
	b.WriteString(`{"unit":"orders","lines":[`)
	for l := 0; l < 20; l++ {
		if l > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"line %d","points":[`, l)
		for p := 0; p < 100; p++ {
			if p > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"at":"2026-%02d-%02dT%02d:30:00.125+01:00","value":%d.5,"low":%d,"high":%d}`,
				1+p/28, 1+p%28, p%24, 100+p, 90+p, 120+p)
		}
		b.WriteString(`]}`)
	}
	b.WriteString(`],"marks":[{"label":"Average","value":150}]}`)
	return []byte(b.String())
}

func BenchmarkCheckSeries2000(b *testing.B) {
	doc := series2000()
	if is := Check("series", doc); len(is) != 0 {
		b.Fatalf("not valid: %v", is)
	}
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	defer cpuPerOp(b)()
	for b.Loop() {
		Check("series", doc)
	}
}

func BenchmarkCheckValueSeries2000(b *testing.B) {
	var v any
	if err := json.Unmarshal(series2000(), &v); err != nil {
		b.Fatal(err)
	}
	if is := CheckValue("series", v); len(is) != 0 {
		b.Fatalf("not valid: %v", is)
	}
	b.ReportAllocs()
	defer cpuPerOp(b)()
	for b.Loop() {
		CheckValue("series", v)
	}
}

// BenchmarkValidatorSeries2000 is the validator alone, which CheckValue
// spares a valid value (fast.go).
func BenchmarkValidatorSeries2000(b *testing.B) {
	var v any
	if err := json.Unmarshal(series2000(), &v); err != nil {
		b.Fatal(err)
	}
	s := compiled()["series"].schema
	b.ReportAllocs()
	defer cpuPerOp(b)()
	for b.Loop() {
		if err := s.Validate(v); err != nil {
			b.Fatal(err)
		}
	}
}

// cpuPerOp reports the process's CPU time per operation beside the time
// on the clock, which on a machine shared with other work says more.
func cpuPerOp(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	}
}
