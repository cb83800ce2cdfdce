// Package module checks and transpiles a page's TypeScript module, the
// data.module of the page format.
//
// # Transpiling
//
// Transpile turns the module into ES2023 ESM JavaScript with esbuild's Go
// API (types dropped, nothing bundled or minified). esbuild does not keep
// lines, so TranspileMapped also answers Lines, read from esbuild's source
// map: the TypeScript line of each JavaScript line, so that the sandbox
// can name an error's line in the module (and, adding the module's first
// line less one, in the document).
//
// # Checking
//
// Check is the check at save. In order:
//
//  1. The module rules, on the tokens of the small scanner of code that
//     the ledger's code nodes share (internal/jsscan: strings, template
//     literals with their ${} scanned as code, comments, regular
//     expression literals): fold exported with exactly
//     `export function fold(view: View, event: Event): View` (the
//     parameters' names are free); at the top level only type aliases,
//     interfaces and exported functions; no import, import(), import.meta,
//     require, eval, new Function, declare, async, await, exported
//     generator, enum, namespace or module, parameter property, export
//     list or default export; no export named answer; no type of its own
//     named as a declared type (View, Event, Json, Series, Categories,
//     Table, Text); at most 500 assignments to variables in one function
//     (assign.go says what counts).
//  2. esbuild's syntax check, with esbuild's words.
//  3. In Full mode, the type check: the native tsc (npm typescript@7) in
//     strict mode with exactOptionalPropertyTypes and noLib, run on a
//     directory of its own holding tsconfig.json, the sandbox's library,
//     quire.d.ts (Json, Series, Categories, Table, Text, Event, and View made
//     from data.views) and module.ts. Each diagnostic is quoted in tsc's
//     words with its code, such as "Cannot find name 'console'. (TS2304)".
//     tsc runs with --singleThreaded (faster on a small machine) under a
//     limit of 2 s unless told: the page format's "a check at save takes
//     at most 2 seconds". The limit is tsc's processor time, user and
//     system, which is the module's doing; the wall clock, which a loaded
//     machine stretches (several test packages at once, the race detector,
//     a busy server), stops tsc only at ten times the limit. So a module a
//     quiet machine takes is not refused on a busy one.
//
// Every problem is a refusal.Issue at its line in the document: the line
// in the module plus Source.FirstLine less one.
//
// # The sandbox's library
//
// The library is made from the compiler's own lib files at check time
// (lib.go), so it always matches the compiler: the ES2015–ES2025 files the
// sandbox has, with what the sandbox lacks taken out: no Promise (the type
// stays, the value goes), WeakRef, FinalizationRegistry, Intl, async
// iteration, shared memory, Temporal, decorators, disposables, DOM or
// timers; no eval and no value Function; no Math.random; no local-time
// method of Date, no Date called without new and no Date from several
// numbers; no toLocaleString. Names that are not declared do not type-check
// ("Cannot find name 'fetch'", "Property 'random' does not exist on type
// 'Math'"). The tests type-check a use of each and expect a refusal, so a
// compiler whose lib files moved a declaration fails them.
//
// # Finding the compiler
//
// Find looks at QUIRE_TSC, then the vault's `tsc:` (quire.yaml), then tsc
// on the PATH when `tsc --version` says 7 or later, then
// .tools/node_modules/.bin/tsc beside the executable and at the root of
// the source tree (the copy `make tools` installs), then the user's cache
// directory (CacheDir, where `quire tools install` puts typescript@7).
// Without one, its error names every place it looked. npm's JavaScript
// wrapper is resolved to the native
// binary of @typescript/typescript-<os>-<arch> beside it, whose directory
// also holds the lib files. Without a compiler, Check answers a refusal of
// code unavailable saying how to install it, unless the mode is
// SyntaxOnly (the vault's `typecheck: syntax-only`), which runs steps 1
// and 2 alone.
package module
