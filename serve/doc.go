// Package serve is quire's transports over the one table of operations
// (ledger.Ops): MCP over stdio and streamable HTTP, the HTTP API under
// /v1/orgs/{org}, its OpenAPI 3.1 document, and the bearer tokens that say
// who may call what. It owns no behaviour of its own: every tool and every
// route is made from the table, with no glue per operation.
package serve
