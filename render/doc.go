// Package render owns the templates of a page and what their Markdown
// becomes (spec/page-format.md): Liquid through github.com/osteele/liquid
// with the tags and filters a page has, the limits of a render, the lines
// in place of a render, chart blocks and rows on goldmark's block tree, the
// result's blocks as addresses count them, and the save-time check of a
// template. It knows nothing of the vault: callers hand it plain values.
//
// # API
//
//	Result(tmpl, run, subject, output, now, opts) string   get_run's page.result, or the line in its place
//	Runs(tmpl, views, subject, now, opts) string           get_definition's page.runs, or the line in its place
//	Glance(tmpl, views, run, subject, output, now, opts)   one string of a workflow's glance
//	Layout(markdown, format) string                        chart blocks and rows of rendered Markdown
//	ReadChart(info, body) (Chart, bool)                    a chart block that draws, as a client reads it
//	ChartKinds() []ChartKind                               the table of chart kinds, for a client that draws
//	Headline(result) string                                a result's first line, cut at 200 characters with …
//	Rejected(reason, kind, detail) string                  a rejected run's result
//	Blocks(markdown) []Block                               the top-level blocks: result/<n>, cells result-<n>-<m>
//	CheckTemplate(which, text, firstLine, views, subject)  the save-time check, issues at /source with document lines
//	LineBuilding, LineStalled, LineOutOfReach, LineFailed  the fixed lines of "Lines in place of a render"
//
// A render always returns text: the Markdown, or one line that says why it
// could not be rendered, never a render half done. Compiled templates are
// kept by their text (safe for concurrent use), so a read costs a render.
//
// # What a template reads
//
// result reads output, run (status, started, ended, version), subject
// (type, name, description, version), today and now; runs reads views,
// subject, today and now; glance reads views, output, run, subject, today
// and now; each also reads the names it makes with assign, for, increment
// and decrement, and forloop inside a for. JSON is decoded into this
// package's own values (value.go), which keep an object's keys in their
// order and have only their own fields. Reading a field a value lacks gives
// a missing value, which stops the render where it is written out, assigned,
// looped over, cased on or handed to a filter; a condition of if, elsif or
// unless reads it as false, and default reads it as null. A list renders as
// its items with no separators, an object as [object Object], a number as
// JavaScript writes it (4.800000000000001, 1e+21).
//
// The tags are those page-format.md allows: assign, if/elsif/else, unless,
// case/when, for with break and continue, cycle, increment, decrement,
// echo, liquid, raw, comment and #. osteele/liquid v1.6.0 lacks echo,
// liquid, #, increment and decrement and reads if, unless and case without
// the page's rule for missing fields, so template.go rewrites each template
// before osteele/liquid compiles it (the table there says how); every line
// keeps its number, so an error names the template's line.
//
// # Filters
//
// The filters are in one table, filters.go, each with an example that a
// test renders: Liquid's standard filters and clip, money, json, sum,
// number and percent.
//
// # Decisions where the spec is silent
//
//   - today is YYYY-MM-DD and now is the time of the read as JavaScript's
//     toISOString writes it (2026-11-01T09:45:00.000Z), both in UTC.
//     run.started and run.ended are the caller's text; "" reads as null.
//   - clip: n keeps at most n characters (code points), the ellipsis
//     included, and drops white space before the ellipsis.
//   - money rounds to cents, halves away from zero, and writes an amount
//     whose cents are 0 without them; USD, EUR, GBP, JPY and INR have a
//     symbol, another three-letter code is written before the amount
//     ("CHF 5.50"); a negative amount is "-$5.50".
//   - percent reads a ratio: 0.256 | percent is 26%; percent: 1 is 25.6%.
//   - number writes thousands separators into the number as JavaScript
//     writes it; number: n rounds to n decimals first.
//   - sum counts null items and items without the field as 0 and stops at
//     an item that is not a number.
//   - A list has the fields size, first and last and its items by index (a
//     negative index counts from the end); text has size; an object has
//     only its own keys, so size is its key's value where it has one.
//   - Filters in a condition pass a missing input on as missing, so the
//     condition is false, rather than stopping.
//   - A when of case, like case itself, stops at a missing field.
//   - The names a template holds (at most 1,000) are the variables it reads
//     plus the names it makes, counted at each place they are written.
//   - A line in place names the problem and its line: "Could not display
//     this run: output has no field posts, on line 5." The line is the
//     document's where Options.FirstLine is given. Past a limit it names the
//     limit: "…: it took more than 200 ms to render, the limit for a
//     template." (likewise the 5,000,000 of memory and the 64 KiB).
//   - Memory is charged for every byte a render writes and every character
//     or item a filter makes; time is checked at every filter, output,
//     write and pass of a loop.
//   - Chart blocks: the shape of a body is told by its field (lines,
//     values, columns or rows, text) and checked with words/shape; the
//     lines that say why a block fails, beside the spec's own example, are
//     in chart.go ("its data is not JSON.", "its data matches no shape; <the
//     first issue>", "there is no chart of the kind bar; did you mean
//     bars? The kinds are line, bars, …", "a line chart takes no roles.",
//     "the column "B" holds the text "y" in row 1, where y needs a
//     number.", "a share chart requires every value to be at least
//     0; Web is -2.", …). A failing block whose data has a shape shows that
//     data as a GFM table (a text shows its text); other bodies are shown as
//     a fenced code block. A null body is "No data for this chart yet."
//     whatever its info string says.
//   - The table of a series is sorted by time; a cell a line lacks is
//     empty; null is empty; numbers are written as JavaScript writes them.
//   - A replacement (a failing chart, a broken row) stands apart from the
//     lines around it, after and before a blank line.
//   - Rows at render: ::: row and :::row (trailing spaces allowed) open, :::
//     closes, --- separates, outside fenced blocks; a broken row shows its
//     non-empty cells, each apart, under its line. A row whose first problem
//     is that it is never closed says so before any other.
//   - Blocks: a thematic break is not counted; a broken row's cells count as
//     the blocks they hold; an HTML block counts with the kind html.
//   - The save-time check refuses reading run, subject or views through a
//     computed index (views[name]), since the field cannot be checked.
//   - glance is checked only for a workflow; result is refused for the
//     playbook.
package render
