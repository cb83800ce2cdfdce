package assets_test

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"quire/fold"
	"quire/internal/browser"
	"quire/render"
	"quire/serve/web/assets"
)

func TestMain(m *testing.M) {
	fold.ServeIfWorker()
	code := m.Run()
	browser.CloseShared()
	os.Exit(code)
}

// csp is the pages' Content-Security-Policy (serve/web's CSP): no inline
// script or style, nothing from another origin.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; font-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// fixture is one chart block of the fixture page and what it must draw:
// for each CSS selector (inside the block's drawing), how many elements.
type fixture struct {
	name, kind, roles, body string
	table                   string // the <details>' HTML, as the server writes it
	cells                   string // a figure's tiles' addresses (data-cells)
	want                    map[string]int
}

const (
	dots    = "svg g[aria-label=dot] circle"
	bars    = "svg g[aria-label=bar] rect"
	cells   = "svg g[aria-label=cell] rect"
	lines   = "svg g[aria-label=line] path"
	areas   = "svg g[aria-label=area] path"
	rules   = "svg g[aria-label=rule] line"
	legend  = ".q-legend-item"
	ramp    = ".q-legend-ramp .q-ramp-bar"
	texts   = "svg g[aria-label=text] text"
	failed  = ".q-chart-error"
	anySVG  = "svg.q-plot"
	anyHTML = ".q-table, .q-figures, .q-text"
)

var fixtures = []fixture{
	{name: "line", kind: "line", body: `{"unit":"USD","period":"day","lines":[
		{"name":"Revenue","points":[{"at":"2026-10-01","value":3},{"at":"2026-10-02","value":5},{"at":"2026-10-03","value":4},{"at":"2026-10-05","value":6}]},
		{"name":"Forecast","points":[{"at":"2026-10-01","value":4,"low":3,"high":5},{"at":"2026-10-02","value":4.5,"low":3.5,"high":6},{"at":"2026-10-03","value":5,"low":4,"high":7}]}],
		"marks":[{"label":"Target","value":5}]}`,
		// Revenue skips 10-04, so it draws as two runs: three lines in all.
		want: map[string]int{dots: 7, lines: 3, areas: 1, rules: 1, legend: 2}},
	{name: "line-origin", kind: "line", body: `{"period":"month","origin":"2026-03","lines":[{"name":"Sign-ups","points":[
		{"at":"2026-01","value":10},{"at":"2026-02","value":12},{"at":"2026-03","value":13},{"at":"2026-04","value":15,"low":12,"high":18},{"at":"2026-05","value":16,"low":12,"high":21}]}]}`,
		// observed to the origin, then ahead (dashed), and the origin's rule.
		want: map[string]int{dots: 5, lines: 2, areas: 1, rules: 1, legend: 0}},
	{name: "bars-categories", kind: "bars", body: `{"unit":"posts","values":[{"name":"LinkedIn","value":3},{"name":"X","value":3},{"name":"Instagram","value":2}]}`,
		want: map[string]int{bars: 3, legend: 0}},
	{name: "bars-by-color", kind: "bars", roles: `{"x":"Week","y":"Orders","color":"Channel"}`,
		body: `{"columns":[{"name":"Channel"},{"name":"Week"},{"name":"Orders","unit":"orders"}],"rows":[["Web","2026-W40",4],["Shop","2026-W40",2],["Web","2026-W41",5],["Shop","2026-W41",null],["Shop","2026-W42",1]]}`,
		// the row whose Orders is null is not drawn.
		want: map[string]int{bars: 4, legend: 2}},
	{name: "bars-by-order", kind: "bars", body: `{"columns":[{"name":"Channel"},{"name":"Posts"}],"rows":[["X",3],["LinkedIn",2]]}`,
		want: map[string]int{bars: 2, legend: 0}},
	{name: "stacked", kind: "stacked", body: `{"unit":"USD","period":"week","lines":[
		{"name":"Web","points":[{"at":"2026-W40","value":1},{"at":"2026-W41","value":2},{"at":"2026-W42","value":2}]},
		{"name":"Shop","points":[{"at":"2026-W40","value":2},{"at":"2026-W41","value":1},{"at":"2026-W42","value":3}]}]}`,
		want: map[string]int{areas: 2, legend: 2}},
	{name: "stacked-one-time", kind: "stacked", body: `{"lines":[{"name":"Web","points":[{"at":"2026-10-30T09:00:00Z","value":1}]},{"name":"Shop","points":[{"at":"2026-10-30T09:00:00Z","value":2}]}]}`,
		want: map[string]int{bars: 2, legend: 2}},
	{name: "share", kind: "share", body: `{"values":[{"name":"Web","value":2},{"name":"Marketplace","value":1},{"name":"Phone","value":0}]}`,
		want: map[string]int{bars: 3, legend: 3}},
	{name: "histogram", kind: "histogram", body: `{"unit":"orders","values":[{"name":"Under $25","value":1},{"name":"$25 to $50","value":4},{"name":"$50 to $100","value":3},{"name":"$100 and over","value":2}]}`,
		want: map[string]int{bars: 4, legend: 0}},
	{name: "scatter", kind: "scatter", roles: `{"x":"Spend","y":"Sign-ups","color":"Channel","mark":"Note"}`,
		body: `{"columns":[{"name":"Spend","unit":"USD"},{"name":"Sign-ups"},{"name":"Channel"},{"name":"Note"}],"rows":[[120,14,"Search","best"],[80,null,"Social",null],[60,9,"Social",null],[200,20,"Search",null]]}`,
		want: map[string]int{dots: 3, legend: 2, texts: 1}},
	{name: "bubble", kind: "bubble", body: `{"columns":[{"name":"Spend"},{"name":"Sign-ups"},{"name":"Reach"}],"rows":[[120,14,3000],[60,9,800],[200,20,5000]]}`,
		want: map[string]int{dots: 3, legend: 0}},
	{name: "heatmap", kind: "heatmap", body: `{"columns":[{"name":"Day"},{"name":"Hour"},{"name":"Tickets"}],"rows":[
		["2026-10-30","09",4],["2026-10-30","10",2],["2026-10-31","09",1],["2026-10-31","10",6],["2026-11-01","09",0],["2026-11-01","10",3]]}`,
		want: map[string]int{cells: 6, ramp: 1}},
	{name: "range", kind: "range", body: `{"unit":"hours","values":[{"name":"Support","value":30,"low":20,"high":45},{"name":"Sales","value":12,"low":10,"high":16},{"name":"Ops","value":8}]}`,
		// Ops has no low and high: its value is drawn alone.
		want: map[string]int{rules: 2, dots: 3}},
	{name: "range-table", kind: "range", roles: `{"value":"Likely"}`, body: `{"columns":[{"name":"Queue"},{"name":"Low"},{"name":"High"},{"name":"Likely"}],"rows":[["Support",20,45,30],["Sales",10,16,null],["Ops",null,9,8]]}`,
		want: map[string]int{rules: 2, dots: 1}},
	{name: "funnel", kind: "funnel", body: `{"values":[{"name":"Visits","value":1000},{"name":"Carts","value":120},{"name":"Orders","value":40}]}`,
		want: map[string]int{bars: 3, texts: 3}},
	{name: "calendar", kind: "calendar", body: `{"period":"day","unit":"posts","lines":[{"name":"Posts","points":[
		{"at":"2026-10-26","value":3},{"at":"2026-10-27","value":1},{"at":"2026-10-28","value":0},{"at":"2026-10-29","value":2},{"at":"2026-10-30","value":5},
		{"at":"2026-11-02","value":4},{"at":"2026-11-03","value":2},{"at":"2027-01-04","value":1}]}]}`,
		want: map[string]int{cells: 8, ramp: 1}},
	{name: "timeline", kind: "timeline", roles: `{"color":"Owner","mark":"Note"}`, body: `{"columns":[{"name":"Task"},{"name":"From"},{"name":"To"},{"name":"Owner"},{"name":"Note"}],"rows":[
		["Close","2026-10-01","2026-10-03","Ann",null],["Audit","2026-10-02T09:00:00Z","2026-10-05T17:00:00Z","Bo","late"],["Report","2026-10-06",null,"Ann",null],["File","2026-W41","2026-W41","Bo",null]]}`,
		want: map[string]int{bars: 3, legend: 2, texts: 1}},
	{name: "table", kind: "table", body: `{"columns":[{"name":"Order"},{"name":"Total","unit":"USD"}],"rows":[["A-1043",132.25],["A-1044",null],["<img src=/evil.png onerror=alert(1)>",7]]}`,
		want: map[string]int{"table.q-table tbody tr": 3, "table.q-table th": 2, "td.q-num": 3, "img": 0}},
	{name: "figure", kind: "figure", cells: `["shop/runs/r1/result/1/0","shop/runs/r1/result/1/1"]`,
		body: `{"unit":"USD","values":[{"name":"Revenue","value":242.75,"low":200,"high":260},{"name":"Refunds","value":12}]}`,
		want: map[string]int{".q-figure": 2, ".q-figure-range": 1, `.q-figure[data-address="shop/runs/r1/result/1/1"]`: 1}},
	{name: "text", kind: "text", body: `{"text":"**Closed** on time."}`, table: `<p><strong>Closed</strong> on time.</p>`,
		want: map[string]int{".q-text strong": 1}},
	{name: "hostile", kind: "bars", body: `{"values":[{"name":"<img src=/evil.png onerror=alert(1)>","value":2},{"name":"<script>alert(2)</script>","value":1}]}`,
		want: map[string]int{bars: 2, "img": 0, "script": 0}},
}

// page writes the fixture page: one block per fixture, in the markup of
// package assets' doc.
func page(fx []fixture) string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><meta charset="utf-8"><title>charts</title>
<link rel="stylesheet" href="/assets/quire.css"><link rel="stylesheet" href="/assets/charts.css">
<script src="/assets/vendor/d3.min.js" defer></script><script src="/assets/vendor/plot.umd.min.js" defer></script><script src="/assets/charts.js" defer></script>
`)
	// The table of kinds, as the layout writes it from render's.
	table := map[string]render.ChartKind{}
	for _, k := range render.ChartKinds() {
		table[k.Name] = k
	}
	js, _ := json.Marshal(table)
	fmt.Fprintf(&b, `<script type="application/json" id="q-chart-kinds">%s</script>`+"\n", js)
	b.WriteString(`</head><body><main>`)
	for i, f := range fx {
		roles := f.roles
		if roles == "" {
			roles = "{}"
		}
		fmt.Fprintf(&b, `<h3>%s</h3><figure class="q-chart" data-kind="%s" data-roles="%s" data-address="fixture/%s" id="chart-%d"`,
			html.EscapeString(f.name), f.kind, html.EscapeString(roles), f.name, i+1)
		if f.cells != "" {
			fmt.Fprintf(&b, ` data-cells="%s"`, html.EscapeString(f.cells))
		}
		b.WriteString(">\n")
		body := strings.NewReplacer("<", `\u003c`, ">", `\u003e`, "&", `\u0026`).Replace(f.body)
		fmt.Fprintf(&b, `<script type="application/json" class="q-chart-data">%s</script>`+"\n", body)
		b.WriteString(`<div class="q-chart-draw"></div>` + "\n")
		table := f.table
		if table == "" {
			table = "<pre>" + html.EscapeString(f.body) + "</pre>"
		}
		fmt.Fprintf(&b, "<details class=\"q-chart-table\" open><summary>Data</summary>\n%s</details>\n</figure>\n", table)
	}
	b.WriteString("</main></body></html>")
	return b.String()
}

// server serves the fixture page under the pages' CSP, and the assets.
func server(t testing.TB, body string) *httptest.Server {
	mux := http.NewServeMux()
	mux.Handle("/assets/", http.StripPrefix("/assets/", assets.Handler()))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/favicon.ico" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Security-Policy", csp)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// waitDrawn waits until every figure of the page is drawn (or failed).
func waitDrawn(t testing.TB, p *browser.Page, n int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		got, err := p.Count("figure.q-chart[data-drawn]")
		if err != nil {
			t.Fatal(err)
		}
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d figures drawn after %v; errors: %q", got, n, d, p.Errors())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Every kind of the page format draws, under the pages' CSP, the marks,
// legend entries and cells its data asks for, with no error in the console,
// and data shown as text: no dialog, no request but the page's own.
func TestChartsDrawEveryKind(t *testing.T) {
	srv := server(t, page(fixtures))
	p := browser.NewPage(t)
	if err := p.Viewport(900, 800); err != nil {
		t.Fatal(err)
	}
	if err := p.Open(srv.URL + "/"); err != nil {
		t.Fatal(err)
	}
	waitDrawn(t, p, len(fixtures), 10*time.Second)
	kinds := map[string]bool{}
	for i, f := range fixtures {
		kinds[f.kind] = true
		fig := fmt.Sprintf("#chart-%d", i+1)
		var state string
		if err := p.Eval(fmt.Sprintf(`document.querySelector(%q).dataset.drawn`, fig), &state); err != nil {
			t.Fatal(err)
		}
		if state != "true" {
			msg, _ := p.Text(fig + " .q-chart-error")
			t.Errorf("%s: not drawn: %s", f.name, msg)
			continue
		}
		want := map[string]int{failed: 0}
		if f.kind == "table" || f.kind == "figure" || f.kind == "text" {
			want[anyHTML] = 1
		} else {
			want[anySVG] = 1
		}
		for sel, n := range f.want {
			want[sel] = n
		}
		for sel, n := range want {
			got, err := p.Count(fig + " .q-chart-draw " + strings.ReplaceAll(sel, ", ", ", "+fig+" .q-chart-draw "))
			if err != nil {
				t.Fatal(err)
			}
			if got != n {
				t.Errorf("%s: %d × %s, want %d", f.name, got, sel, n)
			}
		}
	}
	// Every kind of render's table has a drawing in charts.js.
	for _, k := range render.ChartKinds() {
		if !kinds[k.Name] {
			t.Errorf("no fixture draws %s", k.Name)
		}
	}
	// The data came in as text: the hostile names are shown, not run.
	var shown string
	if err := p.Eval(`[...document.querySelectorAll("#chart-21 svg text, #chart-18 td")].map(e => e.textContent).join("|")`, &shown); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(shown, "<img src=/evil.png") || !strings.Contains(shown, "<script>alert(2)") {
		t.Errorf("the hostile names are not shown as text: %q", shown)
	}
	if errs := p.Errors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
	if d := p.Dialogs(); len(d) > 0 {
		t.Errorf("dialogs opened: %q", d)
	}
	for _, r := range p.Requests() {
		if !strings.HasPrefix(r, srv.URL+"/") || strings.Contains(r, "evil") {
			t.Errorf("a request the page must not make: %s", r)
		}
	}

	// Light, dark and 360 px wide. The whole page (long) only in the long
	// variant; in make test what the viewport shows, each width checked.
	long := os.Getenv("QUIRE_TEST_LONG") != ""
	dir := browser.ScreenshotDir(t)
	shots := []struct {
		file, scheme string
		width        int64
	}{{"charts-light.png", "light", 900}, {"charts-dark.png", "dark", 900}, {"charts-360.png", "light", 360}}
	for _, s := range shots {
		if err := p.ColorScheme(s.scheme); err != nil {
			t.Fatal(err)
		}
		if err := p.Viewport(s.width, 800); err != nil {
			t.Fatal(err)
		}
		if s.width != 900 {
			// The drawings follow their width: wait for the redraw.
			deadline := time.Now().Add(5 * time.Second)
			for {
				var wide float64
				if err := p.Eval(`Math.max(...[...document.querySelectorAll("svg.q-plot")].map(s => s.getBoundingClientRect().right))`, &wide); err != nil {
					t.Fatal(err)
				}
				if wide <= float64(s.width) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("at %d px a drawing still reaches %v px", s.width, wide)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		shot := p.ScreenshotView
		if long {
			shot = p.Screenshot
		}
		if err := shot(filepath.Join(dir, s.file)); err != nil {
			t.Fatal(err)
		}
	}
	if errs := p.Errors(); len(errs) > 0 {
		t.Errorf("console errors after the redraws: %q", errs)
	}
	t.Logf("screenshots of every kind in %s", dir)
}

// A block charts.js cannot draw says so in one line, shows its data table,
// and reports the error to the console.
func TestChartThatCannotDrawShowsItsTable(t *testing.T) {
	srv := server(t, page([]fixture{
		{name: "no-column", kind: "scatter", roles: `{"x":"Nope"}`, body: `{"columns":[{"name":"Spend"},{"name":"Sign-ups"}],"rows":[[1,2]]}`},
		{name: "unknown", kind: "sparkline", body: `{"values":[{"name":"A","value":1}]}`},
	}))
	p := browser.NewPage(t)
	if err := p.Open(srv.URL + "/"); err != nil {
		t.Fatal(err)
	}
	waitDrawn(t, p, 2, 10*time.Second)
	var got []string
	if err := p.Eval(`[...document.querySelectorAll("figure")].map(f => f.dataset.drawn + ":" + f.querySelector(".q-chart-error").textContent + ":" + f.querySelector("details").open)`, &got); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`failed:Couldn’t draw this chart: the role x names the column "Nope", which the table does not have. Its data is below.:true`,
		`failed:Couldn’t draw this chart: there is no chart of the kind sparkline. Its data is below.:true`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := len(p.Errors()); n != 2 {
		t.Errorf("%d console errors, want one for each block: %q", n, p.Errors())
	}
}

// open serves a page of the fixtures, opens it at width × 800 in en-US
// (the numbers the tests read are written as en-US writes them) and waits
// until every figure is drawn.
func open(t *testing.T, fx []fixture, width int64) *browser.Page {
	t.Helper()
	srv := server(t, page(fx))
	p := browser.NewPage(t)
	if _, err := chromedp.Call(p.Context(), emulation.SetLocaleOverride, emulation.SetLocaleOverrideParams{Locale: "en-US"}); err != nil {
		t.Fatal(err)
	}
	if err := p.Viewport(width, 800); err != nil {
		t.Fatal(err)
	}
	if err := p.Open(srv.URL + "/"); err != nil {
		t.Fatal(err)
	}
	waitDrawn(t, p, len(fx), 10*time.Second)
	if errs := p.Errors(); len(errs) > 0 {
		t.Fatalf("console errors: %q", errs)
	}
	return p
}

// daySeries is a calendar's series: a value for each day from the first
// of January of the year from to the last of December of the year to.
func daySeries(from, to int) string {
	var pts []string
	for d := time.Date(from, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() <= to; d = d.AddDate(0, 0, 1) {
		pts = append(pts, fmt.Sprintf(`{"at":"%s","value":%d}`, d.Format("2006-01-02"), d.Day()%5))
	}
	return `{"period":"day","unit":"posts","lines":[{"name":"Posts","points":[` + strings.Join(pts, ",") + `]}]}`
}

// The calendar labels each month over the week its first day is in, in
// any year: 2026, 2027 (whose February and March begin in other weeks than
// 2026's), the leap year 2028, and two years drawn one above the other.
func TestCalendarMonthsOverTheirFirstWeek(t *testing.T) {
	fx := []fixture{
		{name: "2026", kind: "calendar", body: daySeries(2026, 2026)},
		{name: "2027", kind: "calendar", body: daySeries(2027, 2027)},
		{name: "2028", kind: "calendar", body: daySeries(2028, 2028)},
		{name: "2027-2028", kind: "calendar", body: daySeries(2027, 2028)},
	}
	p := open(t, fx, 900)
	// For each first of a month, the month's label nearest above its cell
	// (in the cell's own year) must stand over the cell's column.
	var wrong []string
	err := p.Eval(`[...document.querySelectorAll("figure")].flatMap(fig => {
		const labels = [...fig.querySelectorAll("svg text")].map(t => ({ text: t.textContent, box: t.getBoundingClientRect() }));
		return [...fig.querySelectorAll("svg rect")].flatMap(cell => {
			const title = cell.querySelector("title");
			const m = title && /^(\w{3}) 1, (\d{4}):/.exec(title.textContent);
			if (!m) return [];
			const box = cell.getBoundingClientRect();
			const above = labels.filter(l => l.text === m[1] && l.box.bottom <= box.top + 0.5)
				.sort((a, b) => b.box.bottom - a.box.bottom);
			if (!above.length) return [fig.id + ": no label " + m[1] + " above " + title.textContent];
			const mid = (above[0].box.left + above[0].box.right) / 2;
			return mid >= box.left - 0.5 && mid <= box.right + 0.5 ? [] :
				[fig.id + ": " + m[1] + " " + m[2] + " labelled at x=" + mid.toFixed(1) + ", its first week is " + box.left.toFixed(1) + " to " + box.right.toFixed(1)];
		});
	})`, &wrong)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range wrong {
		t.Error(w)
	}
	var months int
	if err := p.Eval(`[...document.querySelectorAll("svg rect title")].filter(t => / 1, \d{4}:/.test(t.textContent)).length`, &months); err != nil {
		t.Fatal(err)
	}
	if months != 12*5 {
		t.Errorf("%d firsts of a month drawn, want 60", months)
	}
}

// bars over a table draws a bar for each row, grouped by color: rows at
// the same x stand side by side, each from the baseline to its own value,
// never stacked into one column.
func TestBarsDrawOneBarForEachRow(t *testing.T) {
	fx := []fixture{
		{name: "x-repeats", kind: "bars", body: `{"columns":[{"name":"Day"},{"name":"Posts"}],"rows":[["Mon",3],["Mon",5],["Tue",2]]}`},
		{name: "x-and-color-repeat", kind: "bars", roles: `{"x":"Week","y":"Orders","color":"Channel"}`,
			body: `{"columns":[{"name":"Channel"},{"name":"Week"},{"name":"Orders"}],"rows":[["Web","2026-W40",4],["Web","2026-W40",2],["Shop","2026-W40",1],["Shop","2026-W41",3]]}`},
	}
	p := open(t, fx, 900)
	type bar struct{ Left, Right, Top, Bottom float64 }
	for i, f := range fx {
		var got []bar
		if err := p.Eval(fmt.Sprintf(`[...document.querySelectorAll("#chart-%d svg g[aria-label=bar] rect")].map(r => {
			const b = r.getBoundingClientRect();
			return { Left: b.left, Right: b.right, Top: b.top, Bottom: b.bottom };
		})`, i+1), &got); err != nil {
			t.Fatal(err)
		}
		var rows [][]any
		var body struct{ Rows [][]any }
		if err := json.Unmarshal([]byte(f.body), &body); err != nil {
			t.Fatal(err)
		}
		rows = body.Rows
		if len(got) != len(rows) {
			t.Errorf("%s: %d bars, want one for each of the %d rows", f.name, len(got), len(rows))
			continue
		}
		for j, b := range got {
			for _, o := range got[:j] {
				if b.Left < o.Right-0.5 && o.Left < b.Right-0.5 {
					t.Errorf("%s: bars %v and %v overlap across: stacked, not side by side", f.name, o, b)
				}
			}
			if d := b.Bottom - got[0].Bottom; d > 0.5 || d < -0.5 {
				t.Errorf("%s: a bar ends at %v, another at %v: not all on the baseline", f.name, b.Bottom, got[0].Bottom)
			}
		}
		// Each bar is as tall as its own row's value.
		unit := (got[0].Bottom - got[0].Top) / rows[0][len(rows[0])-1].(float64)
		for j, b := range got {
			want := rows[j][len(rows[j])-1].(float64) * unit
			if d := b.Bottom - b.Top - want; d > 1 || d < -1 {
				t.Errorf("%s: bar %d is %.1f px tall, want %.1f (its value %v)", f.name, j+1, b.Bottom-b.Top, want, rows[j][len(rows[j])-1])
			}
		}
	}
}

// A number is written to its data: a whole amount without cents, any
// other with its own decimals (an amount with at least its cents), a sum's
// rounding error or an unrounded division to two decimals; and a number
// and its unit are never parted.
func TestNumbersWrittenToTheirData(t *testing.T) {
	fx := []fixture{
		{name: "money", kind: "figure", body: `{"unit":"USD","values":[{"name":"Revenue","value":182450},{"name":"Average order","value":242.75},
			{"name":"Fee","value":12.5},{"name":"Per call","value":0.125},{"name":"Sum","value":4.800000000000001},{"name":"Year","value":1234567.5}]}`},
		{name: "plain", kind: "figure", body: `{"values":[{"name":"Tickets","value":182450},{"name":"Share","value":0.125},{"name":"Sum","value":4.800000000000001},
			{"name":"Average","value":12.333333333333334},{"name":"Hours","value":3.5},{"name":"Small","value":0.0012345}]}`},
		{name: "unit", kind: "figure", body: `{"unit":"orders","values":[{"name":"Orders","value":12}]}`},
	}
	want := [][]string{
		{"$182,450", "$242.75", "$12.50", "$0.125", "$4.80", "$1,234,567.50"},
		{"182,450", "0.125", "4.8", "12.33", "3.5", "0.0012"},
		{"12\u00a0orders"},
	}
	p := open(t, fx, 900)
	for i, f := range fx {
		var got []string
		if err := p.Eval(fmt.Sprintf(`[...document.querySelectorAll("#chart-%d .q-figure-value")].map(e => e.textContent)`, i+1), &got); err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, " | ") != strings.Join(want[i], " | ") {
			t.Errorf("%s: %q, want %q", f.name, got, want[i])
		}
	}

	// At 360 px, each value stays on one line, inside its tile.
	if err := p.Viewport(360, 800); err != nil {
		t.Fatal(err)
	}
	var broken []string
	if err := p.Eval(`[...document.querySelectorAll(".q-figure-value")].flatMap(v => {
		const r = document.createRange();
		r.selectNodeContents(v);
		const lines = new Set([...r.getClientRects()].map(b => Math.round(b.top))).size;
		const tile = v.parentElement.getBoundingClientRect(), box = r.getBoundingClientRect();
		return lines === 1 && box.right <= tile.right + 0.5 ? [] : [v.textContent + ": " + lines + " lines, to x=" + box.right + " in a tile to " + tile.right];
	})`, &broken); err != nil {
		t.Fatal(err)
	}
	for _, b := range broken {
		t.Error(b)
	}
}

// An axis over whole numbers (counts) has only whole ticks; one over
// fractions keeps its fractional ticks.
func TestWholeNumbersGetWholeTicks(t *testing.T) {
	fx := []fixture{
		{name: "bars", kind: "bars", body: `{"unit":"posts","values":[{"name":"LinkedIn","value":3},{"name":"X","value":3},{"name":"Instagram","value":2}]}`},
		{name: "histogram", kind: "histogram", body: `{"values":[{"name":"1","value":1},{"name":"2","value":2}]}`},
		{name: "line", kind: "line", body: `{"period":"day","lines":[{"name":"Tickets","points":[{"at":"2026-10-01","value":1},{"at":"2026-10-02","value":3},{"at":"2026-10-03","value":2}]}]}`},
		{name: "stacked", kind: "stacked", body: `{"period":"day","lines":[{"name":"A","points":[{"at":"2026-10-01","value":1},{"at":"2026-10-02","value":0}]},{"name":"B","points":[{"at":"2026-10-01","value":1},{"at":"2026-10-02","value":2}]}]}`},
		{name: "scatter", kind: "scatter", body: `{"columns":[{"name":"Calls"},{"name":"Sales"}],"rows":[[1,2],[3,1],[2,4]]}`},
		{name: "range", kind: "range", body: `{"values":[{"name":"Support","value":2,"low":1,"high":3}]}`},
		{name: "fractions", kind: "bars", body: `{"values":[{"name":"A","value":0.5},{"name":"B","value":1.2}]}`},
	}
	p := open(t, fx, 900)
	for i, f := range fx {
		var ticks []string
		if err := p.Eval(fmt.Sprintf(`[...document.querySelectorAll("#chart-%d svg g[aria-label='y-axis tick label'] text, #chart-%[1]d svg g[aria-label='x-axis tick label'] text")].map(t => t.textContent)`, i+1), &ticks); err != nil {
			t.Fatal(err)
		}
		var fractional []string
		for _, tick := range ticks {
			if strings.Contains(tick, ".") {
				fractional = append(fractional, tick)
			}
		}
		if f.name == "fractions" {
			if len(fractional) == 0 {
				t.Errorf("%s: ticks %q, want fractions among them", f.name, ticks)
			}
			continue
		}
		if len(ticks) < 2 || len(fractional) > 0 {
			t.Errorf("%s: ticks %q, want two or more, each a whole number", f.name, ticks)
		}
	}
}

// A chart's data table is open on a page read without JavaScript, so the
// page shows its figures; with JavaScript it is folded under the drawing
// (and a kind drawn as HTML, which is its table, keeps none).
func TestChartTablesOpenWithoutJavaScript(t *testing.T) {
	fx := []fixture{fixtures[0], fixtures[3], fixtures[17], fixtures[18]} // line, bars-by-color, table, figure
	srv := server(t, page(fx))
	type state struct {
		Kind         string
		Open, Hidden bool
		Height       float64
	}
	tables := `[...document.querySelectorAll("figure")].map(f => {
		const d = f.querySelector("details");
		return { Kind: f.dataset.kind, Open: d.open, Hidden: d.hidden, Height: d.getBoundingClientRect().height };
	})`

	off := browser.NewPage(t)
	if _, err := chromedp.Call(off.Context(), emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	if err := off.Open(srv.URL + "/"); err != nil {
		t.Fatal(err)
	}
	// With scripts off, Eval still reads the page (it is the debugger's).
	var got []state
	if err := off.Eval(tables, &got); err != nil {
		t.Fatal(err)
	}
	for _, s := range got {
		// Open, it shows more than its summary's line.
		if !s.Open || s.Hidden || s.Height < 40 {
			t.Errorf("without JavaScript the %s chart's table is %+v, want open and shown", s.Kind, s)
		}
	}
	if n, _ := off.Count("figure[data-drawn]"); n != 0 {
		t.Errorf("%d figures drawn with JavaScript off", n)
	}

	on := open(t, fx, 900)
	got = nil
	if err := on.Eval(tables, &got); err != nil {
		t.Fatal(err)
	}
	for _, s := range got {
		html := s.Kind == "table" || s.Kind == "figure"
		if html && !s.Hidden || !html && (s.Open || s.Hidden) {
			t.Errorf("with JavaScript the %s chart's table is %+v, want folded (a kind drawn as HTML: hidden)", s.Kind, s)
		}
	}
}
