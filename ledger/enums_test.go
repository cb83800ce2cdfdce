package ledger

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"quire/ledger/comments"
	"quire/words/address"
	"quire/words/event"
)

// The enum tags of the arguments, as register reads them: a list, a named
// set, or none.
func TestEnumTags(t *testing.T) {
	enum := func(op, arg string) []string {
		t.Helper()
		o, ok := Lookup(op)
		if !ok {
			t.Fatalf("no operation %s", op)
		}
		return o.Enums[arg]
	}
	for _, c := range []struct {
		op, arg string
		want    []string
	}{
		{"end_run", "status", []string{"succeeded", "rejected", "failed"}},
		{"list_runs", "status", []string{"started", "succeeded", "failed", "rejected"}},
		{"transition_run", "to", []string{"paused", "active", "archived"}},
		{"record_event", "event", event.Recordable()},
		{"resolve_comment", "how", comments.Hows},
		{"run_definition", "type", address.Types()},
		{"get_definition", "type", append(address.Types(), TypePage)},
		{"try_code", "state", nil}, // the workflow's state, no closed set
	} {
		if got := enum(c.op, c.arg); !slices.Equal(got, c.want) {
			t.Errorf("%s's %s: %q, want %q", c.op, c.arg, got, c.want)
		}
	}
	// Every operation's enums are of its arguments.
	for _, op := range Ops() {
		for arg := range op.Enums {
			if _, ok := jsonField(op.Args, arg); !ok {
				t.Errorf("%s has an enum for %s, which is not one of its arguments", op.Name, arg)
			}
		}
	}
}

func jsonField(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		if n, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); n == name {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

// A tag naming a set that does not exist, or listing an empty value, is
// the code's mistake: it stops the program at start.
func TestEnumTagMistakes(t *testing.T) {
	type args struct {
		A string `json:"a" enum:"@no_such_set"`
		B string `json:"b" enum:"x,,y"`
	}
	at := reflect.TypeFor[args]()
	for i := 0; i < at.NumField(); i++ {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("the tag %q was taken", at.Field(i).Tag.Get("enum"))
				}
			}()
			enumOf("test", at.Field(i))
		}()
	}
}
