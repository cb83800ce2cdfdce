package viewdiff

import (
	"encoding/json"
	"reflect"
	"testing"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestDiffNamesEachChangedValueByPointer(t *testing.T) {
	old := decode(t, `{"revenue":{"points":[1,2]},"label":"Oct","a/b":1,"gone":true}`)
	new := decode(t, `{"revenue":{"points":[1,3,4]},"label":"Oct","a/b":2,"new":null}`)
	got := Diff(old, new)
	want := []Change{
		{Pointer: "/a~1b", Old: 1.0, New: 2.0},
		{Pointer: "/gone", Old: true, Removed: true},
		{Pointer: "/new", New: nil, Added: true},
		{Pointer: "/revenue/points/1", Old: 2.0, New: 3.0},
		{Pointer: "/revenue/points/2", New: 4.0, Added: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Diff = %+v\nwant %+v", got, want)
	}
}

func TestDiffOfEqualValuesIsEmpty(t *testing.T) {
	v := decode(t, `{"x":[{"y":1}],"z":"s"}`)
	if got := Diff(v, decode(t, `{"z":"s","x":[{"y":1}]}`)); len(got) != 0 {
		t.Fatalf("Diff of equal values = %+v", got)
	}
}

func TestDiffOfAnotherKindIsOneChangeAtItsPointer(t *testing.T) {
	got := Diff(decode(t, `{"v":[1]}`), decode(t, `{"v":{"0":1}}`))
	if len(got) != 1 || got[0].Pointer != "/v" {
		t.Fatalf("Diff = %+v, want one change at /v", got)
	}
	if got := Diff(1.0, "1"); len(got) != 1 || got[0].Pointer != "" {
		t.Fatalf("Diff of two scalars = %+v, want one change at the root", got)
	}
}
