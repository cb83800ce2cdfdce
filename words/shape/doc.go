// Package shape owns the four output shapes of spec/output-shapes.md,
// series, categories, table and text: their JSON Schemas (draft 2020-12,
// $id https://on.auto/shapes/<name>, title <name>) and the check of a value
// against one of them, with the rules a schema cannot state. The fold
// sandbox checks views with it, the renderer's chart blocks their data, the
// vault's end_run a run's output.
//
// It is a leaf: it imports only the standard library, the JSON Schema
// validator github.com/santhosh-tekuri/jsonschema/v6 and words/refusal.
//
// # How a value is checked
//
// The schemas live in schemas/*.json, are embedded, and are compiled once, on
// first use, by the validator; a compiled schema is safe for concurrent use.
// CheckValue checks the decoded value itself (nothing is marshalled again)
// in two parts:
//
//   - The schema. The validator's errors are translated into issues in the
//     words below. Since the validator takes several milliseconds over the
//     2,000 points a series may hold, a plan read from the compiled schema
//     (fast.go) first says whether the value is valid, and only a value it
//     does not accept goes to the validator. The plan knows the keywords the
//     shapes use and declines a schema with any other; FuzzCheck and every
//     table test check that it and the validator agree.
//   - The rules a schema cannot state (rules.go, period.go). A rule looks
//     only at values of the type the schema asks for, so that a value of
//     the wrong type gives one issue, the schema's.
//
// The issues are sorted by path (byte order of the JSON pointer), then
// message, each given once, and all are given: callers cut them to the
// number they show (three for a rejection, 20 for output_invalid).
//
// Check first reads JSON text with its own decoder (decode.go), which reads
// what encoding/json reads, with json.Number for numbers, in a fraction of
// the time; objects come out compact (object.go), and std makes them maps
// for the validator. A number is so never rounded before it is checked: one
// no double holds, such as 1e400, is refused, since a fold and a template
// read numbers as doubles.
//
// A check must take under 5 ms for a valid series of 2,000 points over 20
// lines. BenchmarkCheckSeries2000 (from the text, each point an RFC 3339
// time with a value, a low and a high) and BenchmarkCheckValueSeries2000
// (from the value) report the clock's time and the CPU time per check,
// which on a machine shared with other work says more; the validator alone,
// BenchmarkValidatorSeries2000, takes more than the whole check.
//
// # Decisions where the spec is silent
//
//   - A line may have no points, marks may be empty and a table may have no
//     rows: the spec bounds them from above only. categories needs 1 value,
//     series 1 line and table 1 column, as the spec says.
//   - origin is checked for the form of every at, and need not be the at of a
//     point.
//   - A period that is no period leaves every at unchecked: the issue is the
//     period's.
//   - Only a point after a point whose at is good is checked for order, so
//     one bad at gives one issue, not two.
//   - More than 2,000 points across the lines is one issue at /lines, unless
//     one line alone holds more than 2,000, which is that line's issue.
//   - A name, a label and a unit count characters as Unicode code points.
//   - An RFC 3339 time takes "T" or "t", "Z" or "z" or an offset of ±hh:mm,
//     and any number of digits of a second's fraction, compared exactly. It
//     refuses a leap second (:60), which JavaScript's Date does not read,
//     and a day its month lacks.
//   - Years run from 0000 to 9999 in every form, as four digits.
//   - JSON text in anything but UTF-8, and text after the one value, is
//     refused at "". A member named twice keeps its last value, as
//     encoding/json keeps it.
//   - Format writes an issue at "" as its message alone.
//
// # The messages
//
// Each issue is at a JSON pointer into the value; "" is the whole value.
// The words of the spec are used where it gives them; the others follow
// their style. A test holds every message the tests see to this table, with
// each number read as any number.
//
//	Where                         Message
//	""                            Expected the name of a shape: series, categories, table, or text.
//	""                            Expected JSON in UTF-8.
//	""                            Expected JSON: the text ends before its value does.
//	""                            Expected JSON: the text holds more than one value.
//	""                            Expected JSON: the text is not JSON at byte 12.
//	a value of the wrong type     Expected an object.
//	                              Expected a list.
//	                              Expected text.
//	                              Expected a number.
//	/rows/i/j                     Expected a cell: text, a number, true, false or null.
//	a Go value JSON cannot hold   Expected a JSON value.
//	a value, low, high or cell    Expected a number that a 64-bit double holds.
//	a record without a field      Expected the field "at". (at the record; one for each field)
//	a field its record lacks      (at the field itself)
//	  ""                          Expected no such field: a series has only unit, period, origin, lines and marks.
//	  /lines/i/…                  Expected no such field: a line has only name and points.
//	  /lines/i/points/j/…         Expected no such field: a point has only at, value, low and high.
//	  /marks/i/…                  Expected no such field: a mark has only label and value.
//	  ""                          Expected no such field: categories have only unit and values.
//	  /values/i/…                 Expected no such field: a value has only name, value, low and high.
//	  ""                          Expected no such field: a table has only columns and rows.
//	  /columns/i/…                Expected no such field: a column has only name and unit.
//	  ""                          Expected no such field: a text has only text.
//	/lines                        Expected at least 1 line.
//	                              Expected at most 20 lines.
//	                              Expected at most 2,000 points across the lines.
//	/lines/i/points               Expected at most 2,000 points.
//	/marks                        Expected at most 8 marks.
//	/values                       Expected at least 1 value.
//	                              Expected at most 200 values.
//	/columns                      Expected at least 1 column.
//	                              Expected at most 50 columns.
//	/rows                         Expected at most 500 rows.
//	/rows/i                       Expected 3 cells, one for each column.
//	                              Expected 1 cell, one for each column.
//	…/name                        Expected a name of 1 to 64 characters.
//	…/label                       Expected a label of 1 to 64 characters.
//	…/unit                        Expected a unit of 1 to 64 characters.
//	/text                         Expected at most 65,536 bytes of text in UTF-8.
//	/period                       Expected a period: day, week, month, quarter or year.
//	/lines/i/name                 Expected a name no line before it has.
//	/values/i/name                Expected a name no value before it has.
//	/columns/i/name               Expected a name no column before it has.
//	…/low                         Expected a low at most its value.
//	…/high                        Expected a high at least its value.
//	/lines/i/points/j/at          Expected a time later than the point before it.
//	…/at and /origin              Expected a day in the form YYYY-MM-DD.
//	                              Expected a day its month has: 2026-02 has 28 days.
//	                              Expected a week in the form YYYY-Www.
//	                              Expected a week its year has: 2027 has 52 weeks.
//	                              Expected a month in the form YYYY-MM.
//	                              Expected a quarter in the form YYYY-Qn.
//	                              Expected a year in the form YYYY.
//	                              Expected an RFC 3339 date and time, such as 2026-10-15T09:30:00Z.
//
// Should a keyword be added to a schema without its words in translate.go,
// its issue reads "Expected a value of the shape <name> here.", and a test
// fails.
package shape
