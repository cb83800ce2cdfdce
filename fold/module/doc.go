// Package module checks and transpiles a page's TypeScript module, the
// `data.module` of the page format: esbuild (Go API) turns it into ES2023
// ESM JavaScript for the sandbox, and the native TypeScript compiler
// (`tsc` of npm typescript@7) type-checks it against the page's declared
// types and a library that declares only what the sandbox has.
package module
