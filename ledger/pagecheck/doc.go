// Package pagecheck is a page's check at save, what quire/words/page's
// Parse leaves to it because it needs more than the words: the module
// through quire/fold/module (its rules, esbuild's syntax check and tsc's
// type check, each problem at its line of the document, counted from the
// line after `module: |`), and each template through the caller's
// TemplateChecker, whose contract is on its type. render provides the
// checker; the ledger passes it in, so pagecheck does not import render.
// CheckDocument is page.Parse then Check, as create_definition,
// update_definition and update_playbook run it.
package pagecheck
