// Package assets holds the files the browser loads from quire serve,
// embedded in the binary with go:embed: nothing is fetched from a CDN or
// at run time. static/ holds the style sheet (quire.css), the script that
// draws chart blocks (charts.js) and the vendored libraries it draws with
// (Observable Plot and the d3 it needs, at pinned versions, with their
// licenses beside them).
//
// The markup a page gives a chart block, which charts.js reads (the
// contract between the server's HTML and the script): once in the page,
// before the scripts, the table of chart kinds (render.ChartKinds, keyed
// by name), which charts.js reads a kind's roles from and keeps no copy of,
//
//	<script type="application/json" id="q-chart-kinds">
//	  {"bars":{"reads":["categories","table"],"needs":["x","y"],"optional":["color"]},…}
//	</script>
//
// and for each block
//
//	<figure class="q-chart" data-kind="scatter" data-roles='{"x":"Spend"}'
//	        data-address="close-the-month/runs/…/result/3" id="…">
//	  <script type="application/json" class="q-chart-data">{…the block's body…}</script>
//	  <div class="q-chart-draw"></div>  (charts.js draws the SVG here)
//	  <details class="q-chart-table" open><summary>Data</summary>
//	    …the block's figures as the page format's table, in HTML…
//	  </details>
//	</figure>
//
// data-kind is the kind of the info string (`chart scatter x=Spend …`),
// data-roles its roles as a JSON object; the JSON in the script elements is
// not executed (its type is not JavaScript), so the page's strict
// Content-Security-Policy (no inline script) allows it. The table is open,
// so that a page read without JavaScript shows its figures; charts.js
// folds it under the drawing. A block that fails
// its check is not a figure: it is the page format's line and table, as the
// Markdown gives it.
package assets

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var files embed.FS

// FS is the embedded static files, rooted at static/.
func FS() fs.FS {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // static is embedded above; it is always there
	}
	return sub
}

// Handler serves the static files; mount it with http.StripPrefix at the
// path the pages link them from (/assets/).
func Handler() http.Handler {
	fsrv := http.FileServer(http.FS(FS()))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		fsrv.ServeHTTP(w, r)
	})
}
