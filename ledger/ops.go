package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strings"

	"quire/words/address"
	"quire/words/event"
	"quire/words/refusal"
)

// Op is one operation of the table that every interface serves: the CLI's
// `quire call`, the HTTP routes and the MCP tools are all made from it.
type Op struct {
	Name string
	// Description says what the operation does, what it changes and what
	// it refuses, for an agent to act on.
	Description string
	ReadOnly    bool
	Idempotent  bool
	// Scope is the token scope a caller needs: ScopeRead, ScopeWrite or
	// ScopeAdmin.
	Scope string
	// Method and Path are the HTTP route, relative to /v1/orgs/{org}.
	// Path segments in braces are filled from the arguments of those names;
	// a last segment {name...} takes the rest of the path, slashes and all.
	Method string
	Path   string
	// StatePath is the argument a refusal of the run's state is at, when
	// the layer that refused named none: transition_run's /to, end_run's
	// /status, record_event's /event (a run that is paused cannot pause).
	StatePath string
	// Args is the type of the arguments (a struct); Result of the answer.
	Args   reflect.Type
	Result reflect.Type
	// Enums are the closed sets of values the arguments that take one
	// take, by the argument's JSON name, in the order the schemas list
	// them: read at register from the enum tags of Args' fields (see
	// enumOf). Every door's schema and completion reads them here.
	Enums map[string][]string

	call func(ctx context.Context, l *Ledger, args any) (any, error)
}

// The token scopes (serve/tokens.go says what each grants).
const (
	ScopeRead  = "playbook:read"
	ScopeWrite = "playbook:write"
	ScopeAdmin = "admin"
	// ScopeDelegate is no operation's scope: it lets run_definition name
	// another executor or authorized_by than the caller's principal.
	ScopeDelegate = "playbook:delegate"
)

// Scopes are the token scopes, in the order a help lists them.
var Scopes = []string{ScopeRead, ScopeWrite, ScopeAdmin, ScopeDelegate}

var table = map[string]*Op{}

// enumSets are the closed sets an enum tag names as @name rather than
// listing them, for the sets the code keeps as a list of its own.
var enumSets = map[string]func() []string{
	// A definition's types, and a page (a definition of its own).
	"definition_types": func() []string { return append(address.Types(), TypePage) },
	// The types a run is of: a page is never run.
	"run_types":         address.Types,
	"comment_hows":      func() []string { return slices.Clone(CommentHows) },
	"recordable_events": event.Recordable,
}

// enumOf reads an argument's enum tag: `enum:"succeeded,rejected,failed"`
// lists its values, `enum:"@name"` names a set of enumSets. No tag is no
// closed set (nil).
func enumOf(op string, f reflect.StructField) []string {
	tag, ok := f.Tag.Lookup("enum")
	if !ok {
		return nil
	}
	if name, ok := strings.CutPrefix(tag, "@"); ok {
		set, known := enumSets[name]
		if !known {
			panic("ledger: " + op + "." + f.Name + " names the enum set " + name + ", which enumSets does not have")
		}
		return set()
	}
	values := strings.Split(tag, ",")
	if slices.Contains(values, "") {
		panic("ledger: " + op + "." + f.Name + " has an empty value in its enum tag " + tag)
	}
	return values
}

// register adds an operation with typed arguments and answer.
func register[A any, R any](op Op, h func(ctx context.Context, l *Ledger, a *A) (R, error)) {
	if _, dup := table[op.Name]; dup {
		panic("ledger: operation " + op.Name + " registered twice")
	}
	op.Args = reflect.TypeFor[A]()
	op.Result = reflect.TypeFor[R]()
	for i := 0; i < op.Args.NumField(); i++ {
		f := op.Args.Field(i)
		if values := enumOf(op.Name, f); values != nil {
			if op.Enums == nil {
				op.Enums = map[string][]string{}
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			op.Enums[name] = values
		}
	}
	h = withRequestID(op.Name, h)
	op.call = func(ctx context.Context, l *Ledger, args any) (any, error) {
		return h(ctx, l, args.(*A))
	}
	table[op.Name] = &op
}

// Ops lists the operations by name.
func Ops() []*Op {
	out := make([]*Op, 0, len(table))
	for _, op := range table {
		out = append(out, op)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup finds an operation by name.
func Lookup(name string) (*Op, bool) {
	op, ok := table[name]
	return op, ok
}

var rawMessageType = reflect.TypeOf(json.RawMessage(nil))

// Decode reads an operation's arguments from JSON, strictly: an unknown
// field, a value of the wrong type and a missing required field (one whose
// json tag has no omitempty) are refused at their path, and so is a
// number given outside its field's range tag (`range:"1,1000"`): left out
// it takes its default, given as 0 it is refused, not taken as left out.
func (op *Op) Decode(raw json.RawMessage) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, refusal.Invalid("", "the arguments of %s are not a JSON object: %v", op.Name, err)
	}
	known := map[string]bool{}
	for i := 0; i < op.Args.NumField(); i++ {
		f := op.Args.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || name == "" {
			continue
		}
		known[name] = true
		if !strings.Contains(opts, "omitempty") {
			if v, ok := fields[name]; !ok || string(v) == "null" {
				return nil, refusal.Invalid("/"+name, "%s needs %s", op.Name, name)
			}
		}
	}
	for name := range fields {
		if !known[name] {
			return nil, refusal.Invalid("/"+name, "%s takes no argument %q", op.Name, name)
		}
	}
	// Every JSON value an operation takes (data, input, output, ...) is
	// held to the limits of checkData, at its own path.
	for i := 0; i < op.Args.NumField(); i++ {
		f := op.Args.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if v, ok := fields[name]; ok && f.Type == rawMessageType {
			if err := checkData("/"+name, v); err != nil {
				return nil, err
			}
		}
	}
	args := reflect.New(op.Args).Interface()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(args); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, refusal.Invalid("/"+strings.ReplaceAll(te.Field, ".", "/"), "expected %s, not a JSON %s", te.Type, te.Value)
		}
		return nil, refusal.Invalid("", "%v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, refusal.Invalid("", "the arguments hold more than one JSON value")
	}
	v := reflect.ValueOf(args).Elem()
	for i := 0; i < op.Args.NumField(); i++ {
		f := op.Args.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		rng, ok := f.Tag.Lookup("range")
		if raw, given := fields[name]; !ok || !given || string(raw) == "null" || !v.Field(i).CanInt() {
			continue
		}
		var lo, hi int64
		if _, err := fmt.Sscanf(rng, "%d,%d", &lo, &hi); err != nil {
			panic("ledger: " + op.Name + "." + name + " has the range tag " + rng + ", not lo,hi")
		}
		if n := v.Field(i).Int(); n < lo || n > hi {
			return nil, refusal.Invalid("/"+name, "%d is out of range: %s takes %d to %d, or is left out for its default", n, name, lo, hi)
		}
	}
	return args, nil
}

// Call runs one operation with its arguments as JSON.
func (l *Ledger) Call(ctx context.Context, name string, raw json.RawMessage) (any, error) {
	op, ok := Lookup(name)
	if !ok {
		return nil, refusal.New(refusal.NotFound, "no operation %q; quire call --list shows them", name)
	}
	args, err := op.Decode(raw)
	if err != nil {
		return nil, err
	}
	return l.Invoke(ctx, op, args)
}

// Invoke runs an operation with decoded arguments (a pointer to its Args).
func (l *Ledger) Invoke(ctx context.Context, op *Op, args any) (any, error) {
	if reflect.TypeOf(args) != reflect.PointerTo(op.Args) {
		return nil, fmt.Errorf("ledger: %s takes *%s, not %T", op.Name, op.Args, args)
	}
	res, err := op.call(ctx, l, args)
	if err != nil {
		return nil, refusal.AtPath(err, op.StatePath)
	}
	return res, nil
}
