// Package serve is quire's transports over the one table of operations
// (ledger.Ops): MCP over stdio and streamable HTTP, the HTTP API under
// /v1/orgs/{org}, its OpenAPI 3.1 document, and the bearer tokens that say
// who may call what. It owns no behaviour of an operation: every tool and
// every route is made from the table, so an operation added to ledger is
// served everywhere with no glue here.
//
// # What the commands call
//
//	quire serve [--addr 127.0.0.1:8080]   serve.Run(ctx, l, serve.Options{Addr: addr, OnStart: keeper})
//	quire mcp                             serve.ServeStdio(ctx, l)
//	quire token create --principal ana --scope playbook:write …
//	                                      tok, err := serve.CreateToken(l, "ana", scopes); print tok once
//	quire token list / revoke <id>        serve.ListTokens(l), serve.RevokeToken(l, id)
//
// Handler(l, opts) is the same HTTP surface as an http.Handler, for tests
// and for embedding; NewMCPServer(l) the MCP server for other transports.
//
// # One call, every transport
//
// An MCP tool call and an HTTP request take the same path (call.go): the
// arguments as a JSON object, sample_output held to 256 KiB and 512 levels,
// the token's scope checked, the token's principal written into actor (or
// author, where an operation has no actor) when the call names none, strict
// decoding by op.Decode, then l.Invoke. A panic below answers a refusal and
// the server goes on. A refusal keeps its code and words on every
// interface: over HTTP the refusal object with 400 invalid_input,
// 404 not_found, 409 conflict, 403 forbidden, 503 unavailable, and
// 401 (no or bad token), 413 (a body over 1 MiB, a sample_output over
// 256 KiB) and 500 (a panic) with the code that fits (forbidden,
// invalid_input, unavailable); over MCP a tool error (isError) whose text
// and structured content are the refusal object.
//
// # HTTP
//
// A route is op.Method and /v1/orgs/{org} + op.Path; a segment in braces
// takes the argument of its name. A GET (or DELETE) takes its arguments
// from the path and the query, coerced by the argument's Go type (an int
// from "3", a bool from "true", a list from repeated parameters, an object
// from JSON); a POST, PUT or PATCH from its JSON body, the path and the
// query, and the path wins only when it agrees with the body. Of the
// routes that fit a path, the one with the most literal segments serves it;
// a path that fits only other methods answers 405 with Allow. {org} must be
// quire.yaml's org, or 404. Answers are 200 with the operation's JSON.
//
// Bodies are read through http.MaxBytesReader and refused past 1 MiB; the
// server has header, read, write and idle timeouts (Options); cross-origin
// browser writes are refused (http.CrossOriginProtection).
//
// # MCP
//
// One tool per operation, named as the operation, with op.Description, an
// input schema inferred from op.Args by github.com/google/jsonschema-go
// (jsonschema tags are descriptions, fields without omitempty are
// required), readOnlyHint and idempotentHint from the table, and structured
// content: the answer itself when it is an object, {"items": …} when it is
// a list. The output schema is {"type":"object","anyOf":[answer, refusal]},
// since clients check a tool error's structured content too. A type that
// marshals itself takes the schemas of the Go types it says it writes
// (JSONForms: fold.Standing, ledger.Glance), or else (json.RawMessage) a
// schema that allows any value; a pointer to one also allows null (see
// schema.go). The tests check every HTTP answer they get against its
// OpenAPI response schema and every tool result against its outputSchema,
// and that no declared schema allows null alone.
// Resources: the template quire://{playbook}/runs/{run_id}/{file} reads
// definition.md, thread.md, run.state.json or run.jsonl of a run, found by
// get_run's path.
//
// # Who may do what
//
// Tokens are quire_ and 43 characters of base64url (32 random bytes),
// shown once; quire.yaml keeps their SHA-256 in hex with an id, the
// principal, the scopes and the time, committed. Scopes: playbook:read,
// playbook:write, admin (each implying the ones before), and
// playbook:read:<playbook>, playbook:write:<playbook>, which grant only
// calls whose playbook argument names that playbook (so not
// list_playbooks or create_project). A token is checked on every request
// (quire.yaml is read again when it changes, so a new or revoked token
// counts at once). With no token in quire.yaml, Run serves requests without
// one, addressed to localhost only, and only on a loopback address; it
// refuses to start on any other address. ServeStdio and NewMCPServer trust
// their caller with every scope. The capsule's rules (who may transition a
// run) stay the ledger's.
package serve
