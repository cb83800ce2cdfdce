package render

import (
	"io"
	"math"
	"strconv"

	"github.com/osteele/liquid/expressions"
	lrender "github.com/osteele/liquid/render"
	"github.com/osteele/liquid/values"
)

// The tags this package writes itself, and the filters of the rewrite.

// truthy is Liquid's truth, with a missing field false: that is how a
// condition of if, elsif or unless reads a field a value may lack.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case missing:
		return false
	}
	return true
}

func ifCompiler(polarity bool) lrender.BlockCompiler {
	return func(node lrender.BlockNode) (func(io.Writer, lrender.Context) error, error) {
		type branch struct {
			test expressions.Expression // nil for else
			body *lrender.BlockNode
			neg  bool
		}
		expr, err := expressions.Parse(node.Args)
		if err != nil {
			return nil, err
		}
		self := node
		branches := []branch{{expr, &self, !polarity}}
		for _, cl := range node.Clauses {
			switch cl.Name {
			case "qelse":
				branches = append(branches, branch{nil, cl, false})
			default:
				t, err := expressions.Parse(cl.Args)
				if err != nil {
					return nil, err
				}
				branches = append(branches, branch{t, cl, false})
			}
		}
		return func(w io.Writer, ctx lrender.Context) error {
			for _, b := range branches {
				if b.test == nil {
					return ctx.RenderBlock(w, b.body)
				}
				v, err := ctx.Evaluate(b.test)
				if err != nil {
					return err
				}
				if truthy(v) != b.neg {
					return ctx.RenderBlock(w, b.body)
				}
			}
			return nil
		}, nil
	}
}

func caseCompiler(node lrender.BlockNode) (func(io.Writer, lrender.Context) error, error) {
	expr, err := expressions.Parse(node.Args)
	if err != nil {
		return nil, err
	}
	type when struct {
		exprs []expressions.Expression // nil for else
		body  *lrender.BlockNode
	}
	var whens []when
	for _, cl := range node.Clauses {
		if cl.Name == "qelse" {
			whens = append(whens, when{nil, cl})
			continue
		}
		stmt, err := expressions.ParseStatement(expressions.WhenStatementSelector, cl.Args)
		if err != nil {
			return nil, err
		}
		whens = append(whens, when{stmt.When.Exprs, cl})
	}
	eval := func(ctx lrender.Context, e expressions.Expression) (any, error) {
		v, err := ctx.Evaluate(e)
		if err != nil {
			return nil, err
		}
		if m, ok := v.(missing); ok {
			return nil, &errStop{m.what}
		}
		return v, nil
	}
	return func(w io.Writer, ctx lrender.Context) error {
		sel, err := eval(ctx, expr)
		if err != nil {
			return err
		}
		for _, wh := range whens {
			if wh.exprs == nil {
				return ctx.RenderBlock(w, wh.body)
			}
			for _, e := range wh.exprs {
				v, err := eval(ctx, e)
				if err != nil {
					return err
				}
				if values.ValueOf(sel).Equal(values.ValueOf(v)) {
					return ctx.RenderBlock(w, wh.body)
				}
			}
		}
		return nil
	}, nil
}

func echoTag(args string) (func(io.Writer, lrender.Context) error, error) {
	expr, err := expressions.Parse(args)
	if err != nil {
		return nil, err
	}
	return func(w io.Writer, ctx lrender.Context) error {
		v, err := ctx.Evaluate(expr)
		if err != nil {
			return err
		}
		s, _ := v.(string)
		_, err = io.WriteString(w, s)
		return err
	}, nil
}

// counterTag is increment (step 1) and decrement (step -1): increment
// writes the counter, then adds 1; decrement subtracts 1, then writes it. A
// counter starts at 0, and the template reads it by its name.
func counterTag(step int) lrender.TagCompiler {
	return func(name string) (func(io.Writer, lrender.Context) error, error) {
		return func(w io.Writer, ctx lrender.Context) error {
			n, _ := ctx.Get(name).(int)
			if step < 0 {
				n--
				ctx.Set(name, n)
				_, err := io.WriteString(w, strconv.Itoa(n))
				return err
			}
			ctx.Set(name, n+1)
			_, err := io.WriteString(w, strconv.Itoa(n))
			return err
		}, nil
	}
}

func envOf(rest []any) *filterEnv {
	if len(rest) > 0 {
		if env, ok := rest[len(rest)-1].(*filterEnv); ok {
			return env
		}
	}
	return &filterEnv{st: &rstate{deadline: farFuture}}
}

// outFilter writes the value of an output.
func outFilter(in any, rest ...any) (any, error) {
	env := envOf(rest)
	if err := env.st.tick(); err != nil {
		return nil, err
	}
	if m, ok := in.(missing); ok {
		return nil, &errStop{m.what}
	}
	return display(in), nil
}

// strictFilter stops the render at a missing value: what assign and for read.
func strictFilter(in any, rest ...any) (any, error) {
	if m, ok := in.(missing); ok {
		return nil, &errStop{m.what}
	}
	return lift(in, "the value"), nil
}

// intFilter reads a loop's limit or offset as a whole number.
func intFilter(in any, rest ...any) (any, error) {
	switch v := in.(type) {
	case missing:
		return nil, &errStop{v.what}
	case int:
		return v, nil
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<31 {
			return int(v), nil
		}
	}
	return nil, &errStop{"a loop's limit and offset are whole numbers"}
}
