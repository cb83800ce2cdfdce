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
//	quire token create --principal ana --scope playbook:write [--expires 90d]
//	                                      tok, info, err := serve.NewToken(l, "ana", scopes, expiry); print tok once, info.ID
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
// 404 not_found, 409 conflict, 403 forbidden, 401 unauthenticated (no
// token, or one the vault does not know: revoked, expired or never made),
// 503 unavailable, and 413 (a body over 1 MiB, a sample_output over
// 256 KiB) and 500 (a panic) with the code that fits (invalid_input,
// unavailable); over MCP a tool error (isError) whose text and structured
// content are the refusal object. Every refusal has at least one issue
// (refusal.Error.Object sees to it), at the path of the argument at fault
// where there is one, "" (the whole call, or the body) where there is not.
//
// # HTTP
//
// A route is op.Method and /v1/orgs/{org} + op.Path; a segment in braces
// takes the argument of its name, and a last one {name...} the rest of the
// path, slashes and all (put_artifact's .../artifacts/reports/q3.csv; %2F
// works too). OpenAPI path templates take one segment, so the document
// writes it {name} and says in the parameter's description (and
// x-quire-rest-of-path) that it takes the rest. A GET (or DELETE) takes its arguments
// from the path and the query, coerced by the argument's Go type (an int
// from "3", a bool from "true", a list from repeated parameters, an object
// from JSON); a POST, PUT or PATCH from its JSON body, the path and the
// query, and the path wins only when it agrees with the body. Of the
// routes that fit a path, the one with the most literal segments serves it;
// a path that fits only other methods answers 405 with Allow. {org} must be
// quire.yaml's org, or 404. Answers are 200 with the operation's JSON.
//
// The Idempotency-Key header is the request_id of a writing operation: a
// retry with the same key answers the first answer and writes nothing
// (docs/vault-format.md, "Request ids"); a body's request_id that differs
// from the header is refused at /request_id; reads ignore the header. MCP
// tools and quire call take request_id as an argument.
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
// required), readOnlyHint and idempotentHint from the table,
// destructiveHint for the writes that change or take away what was there,
// openWorldHint false (a tool touches the vault alone), and structured
// content: the answer itself when it is an object, {"items": …} when it is
// a list. Every input property is described (argWords for the shared
// ones), a closed set is an enum, a range tag is minimum and maximum, and
// no argument is typed nullable. tools/list is what every agent pays for
// in tokens at start-up, so it stays under 42 KB (TestToolsListForAnAgent
// logs it): an output schema is on the reads of one thing alone (get_run,
// get_definition, explain_address…, once per answer type), its fields and
// their types without their words or the inside of a field's field, as {"type":"object","anyOf":[answer, refusal]}, since clients
// check a tool error's structured content too; a write answers what its
// read does, and /v1/openapi.json has every answer's schema in full. A
// type that marshals itself takes the schemas of the Go types it says it
// writes (JSONForms: fold.Standing, ledger.Glance), or else
// (json.RawMessage) a schema that allows any value; a pointer to one also
// allows null (see schema.go). The tests check every HTTP answer they get
// against its OpenAPI response schema and every tool result against its
// outputSchema (or, for a tool without one, the answer's schema), and
// that no declared schema allows null alone.
// Over stdio a message is one line of at most 2 MiB (MaxStdioMessage);
// the go-sdk's transport would end the session at a longer line or one
// that is not JSON, so a guard (stdio.go) answers those itself with a
// JSON-RPC error (-32600 with the request's id, found at the line's top
// level without keeping the line; -32700 for a line that is not JSON),
// the refusal object as its data, and the server keeps serving. Over
// HTTP a body over 1 MiB (and 64 KiB of envelope) is refused with 413.
// Resources: the template quire://{playbook}/runs/{run_id}/{file} reads
// definition.md, thread.md, run.state.json or run.jsonl of a run, found by
// get_run's path.
//
// # Who may do what
//
// Tokens are quire_ and 43 characters of base64url (32 random bytes),
// shown once; quire.yaml keeps their SHA-256 in hex with an id, the
// principal, the scopes, the time and the expiry (if any), committed: the
// token itself is never written anywhere. When each token was last used
// (to the minute) is kept in .quire/tokens-used.json, under the vault's
// .gitignore, so that a read makes no commit. Scopes: playbook:read,
// playbook:write, admin (each implying the ones before), and
// playbook:read:<playbook>, playbook:write:<playbook>, which grant only
// calls whose playbook argument names that playbook (so not
// list_playbooks or create_project). An operation's scope says what it
// writes: a playbook:read operation writes nothing (mark_activity_seen,
// which commits, needs playbook:write). A token is checked on every request
// (quire.yaml is read again when it changes, so a new or revoked token
// counts at once); an expired one is refused as an unknown one. A stream
// outlives the request that opened it, so the streams (the pages' GET
// /live, MCP's standalone GET /mcp) are held with their token
// (streams.go): four times a second while one is open, quire.yaml's stat
// is looked at (and the file read again when it changed), and a stream
// whose token is revoked, by this server or by any other process (quire
// token revoke), or has expired ends within a quarter of a second; opened
// again, it is refused with 401 as any request. With no
// token in quire.yaml, Run serves requests without one, addressed to
// localhost only, and only on a loopback address; it refuses to start on
// any other address. Once there is a token, every request needs one,
// loopback included, but GET /v1/openapi.json. ServeStdio and
// NewMCPServer trust their caller with every scope, and as whoever it
// names. The capsule's rules (who may transition a run) stay the ledger's.
//
// # Pages
//
// Handler also serves the browser's pages (package web) at /: every path
// but /v1/… and /mcp. They take no bearer header from a browser: web
// reads the token from its login cookie (or a bearer header), and serve
// lends it pages() — the same authentication (a server without tokens
// answers only requests addressed to loopback) and the same call path,
// so a page's read or comment is checked and acted as every other call.
// Run ends the pages' live streams when it shuts down.
//
// # Who acts
//
// A call with a token acts as the token's principal, in call.go's actAs,
// the one place every transport goes through (not per operation): the
// arguments that name a principal are actor, author, member, executor and
// authorized_by. One left out (or "") is the principal where the operation
// requires it, and always for actor and author (list_activity's optional
// member stays out). One that names anyone else is refused as forbidden at
// its path (/actor…), so a token cannot pass the capsule's rule 4 as the
// run's executor. The exception is a new run's executor and authorized_by:
// the scope playbook:delegate (or playbook:delegate:<playbook>, or admin)
// lets run_definition name others, as a person's token starting a run for
// an agent, or a scheduler's for the person who authorized it. It grants
// nothing else: run_definition still needs playbook:write.
package serve
