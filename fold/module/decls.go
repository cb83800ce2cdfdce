package module

import (
	"fmt"
	"strings"

	"quire/words/page"
)

// Shapes are the four output shapes a view may take.
var Shapes = []string{"series", "categories", "table", "text"}

// shapeType is the TypeScript type of each shape's name.
var shapeType = map[string]string{
	"series":     "Series",
	"categories": "Categories",
	"table":      "Table",
	"text":       "Text",
}

// baseDecls are the types the runtime declares for every module: Json, the
// four output shapes (output-shapes.md: every record takes the fields listed
// and no others) and the playbook's Event (page-format.md, The module).
const baseDecls = `type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Series = {
  unit?: string;
  period?: 'day' | 'week' | 'month' | 'quarter' | 'year';
  origin?: string;
  lines: { name: string; points: { at: string; value: number; low?: number; high?: number }[] }[];
  marks?: { label: string; value: number }[];
};
type Categories = {
  unit?: string;
  values: { name: string; value: number; low?: number; high?: number }[];
};
type Table = {
  columns: { name: string; unit?: string }[];
  rows: (string | number | boolean | null)[][];
};
type Text = { text: string };
type Event = {
  specversion?: string;
  id: string;
  type: string;
  source: string;
  subject?: string;
  time?: string;
  datacontenttype?: string;
  dataschema?: string;
  data?: Json;
  causationid?: string;
  correlationid?: string;
  caller?: string;
  definitionversion?: number;
  depth?: number;
  calldepth?: number;
  calledby?: string;
  triggerkind?: string;
  triggerreference?: string;
};
`

// View is one declared view: its name and its shape's name.
type View struct {
	Name  string
	Shape string
}

// declarations is the global declaration file of one module: the base
// types and View, built from the page's views in their order.
func declarations(views []View) (string, error) {
	var b strings.Builder
	b.WriteString(baseDecls)
	b.WriteString("type View = {")
	for i, v := range views {
		if !page.ValidViewName(v.Name) {
			return "", fmt.Errorf("module: %q is not a view's name", v.Name)
		}
		t, ok := shapeType[v.Shape]
		if !ok {
			return "", fmt.Errorf("module: view %q has no shape %q", v.Name, v.Shape)
		}
		if i > 0 {
			b.WriteString(";")
		}
		fmt.Fprintf(&b, " %s?: %s", v.Name, t)
	}
	b.WriteString(" };\n")
	return b.String(), nil
}
