// Package page reads a page, the page format's mapping of data, result,
// runs and glance, from where it goes, with the line of each of its parts.
//
// Where the page goes (Where.Form):
//
//   - InWorkflow: the top-level key page of a workflow's YAML document;
//   - InFunction: the key page of a function's front matter (a Markdown
//     document opening with a line of ---); lines count in the whole
//     document;
//   - ForPlaybook: the YAML text update_playbook takes in page, which is
//     the page mapping; its issues are under /page;
//   - AsDefinition: a definition of the type page, the page mapping with
//     the key of naming its subject.
//
// A document without page, with page: {} or with page: null has no page:
// Parse answers nil.
//
// Parse refuses, each as a refusal.Issue under /source (or /page) with its
// line in the whole document: a page that is not a mapping; an unknown or
// repeated key; glance outside a workflow's page, not a mapping, with a
// key that is not text or is twice in one mapping, nesting deeper than 16
// levels or holding more than 1,000 values; data that is not a
// mapping, lacks language, source.events, views or module, or has another
// key; a language other than typescript; filters that
// quire/words/filter's Parse refuses (0 or more than 8, not mappings, without a type,
// an attribute Event does not name, a value other than data not written
// out, data not a mapping), each at the line of the filter or its value; 0 or more than 8 views, a view's name not
// of the form [a-z][a-z0-9_]{0,31}, a name twice, a shape other than series,
// categories, table or text; result, runs or data.module that is not text;
// result in the playbook's page; data without runs and runs without data;
// templates over 32 KiB together (at the page's line). Two refusals have
// no line (Line 0) since they concern the whole document: a document over
// 65,536 bytes, and YAML so broken that its parser names no line.
//
// The module and the templates are checked at save by
// quire/ledger/pagecheck, which needs fold/module and is handed render's
// template checker: this package imports nothing above the words, so
// fold, render, the ledger and the CLI may all read a page.
//
// DataHash hashes the data key so that the keeper rebuilds the views only
// when data changed.
package page
