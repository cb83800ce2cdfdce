// Package web is quire serve's pages: the vault in a browser
// (issue 16), server-rendered HTML (html/template) that works without
// JavaScript, mounted by package serve at /.
//
//	GET  /                                   the playbooks as cards: each workflow's glance, the latest runs
//	GET  /p/{playbook}                       the playbook's page (render_playbook_page) and its definitions
//	GET  /p/{playbook}/{type}/{name}         a definition: runs over its views with the standing, its
//	                                         versions, its runs (status, started, ended, executor, headline;
//	                                         50 a page, ?runs=<cursor> for older ones)
//	POST /p/{playbook}/{type}/{name}/try     "Try a change": try_page's dry run of the document the form
//	                                         holds beside today's page (render_page) and each view's
//	                                         changes; it saves nothing
//	GET  /p/{playbook}/runs/{run_id}         a run: its headline once, as its heading; why a paused run waits;
//	                                         what it was asked (its input, context.md, its definition's source
//	                                         at the pinned version); result over its output, its events as a
//	                                         timeline, its thread, artifacts, state (run.state.json:
//	                                         get_run_files) and the commits that recorded it (list_run_commits);
//	                                         each event's step links to its line (#L<n>) in that source,
//	                                         each commit to its changes
//	GET  /p/{playbook}/runs/{run_id}/commits/{commit}  what a commit changed in the run's folder
//	                                         (list_run_commits with commit): events added, thread appended,
//	                                         the state's fields before and after, artifacts and other files
//	GET  /p/{playbook}/runs/{run_id}/artifacts/{name...}  an artifact, as a download
//	POST /p/{playbook}/runs/{run_id}/transition  transition_run: resume or archive, for the executor or authorizer
//	POST /p/{playbook}/runs/{run_id}/end     end_run: succeeded (an output, JSON), rejected (reason, kind) or
//	                                         failed (detail), for the executor or authorizer
//	GET  /p/{playbook}/comments?address=…    the comments on one address, and the form that makes one
//	POST /p/{playbook}/comments              make_comment (address, text; author on a server without tokens)
//	GET  /login, POST /login, POST /logout   a token kept in a cookie
//	GET  /live[?playbook=…]                  Server-Sent Events: "change" {"playbook","what"}
//	GET  /assets/…                           package assets' embedded files
//
// # Every call goes through serve
//
// The pages read and write through the operations of the table only, by
// Options.Call, which package serve points at the one path every
// transport takes (scopes, the token's principal as author, refusals), so
// a page shows what its token may read and nothing else. A run's files
// (context.md, thread.md, run.state.json, the list of artifacts/) are get_run_files',
// its commits list_run_commits' (from the ledger's index of commits, no
// walk of the history); the package reads no file of the vault and runs
// no program (TestWebReadsNoFileOfTheVault). An artifact's download is
// streamed from ledger's OpenRunFile once get_run allowed the read.
// Headlines of a list of runs are ledger.Headlines over the runs
// list_runs answered.
//
// # Who
//
// A server without tokens (on loopback, to requests addressed to
// loopback) lets anyone read, and a comment carries the name given in its
// form, remembered in the cookie quire_name. Once the vault has a token,
// every page needs one: GET /login takes it and keeps it in the cookie
// quire_token (HttpOnly, SameSite=Strict, the browser's session; Secure
// with Options.Secure), and a page without it sends the person there. A
// request may also carry Authorization: Bearer. Every form (comments,
// login, logout) carries the CSRF value of its session: an HMAC-SHA256,
// under a secret of the server process's own (32 random bytes made at
// its start), of the session's id, the cookie quire_session (HttpOnly,
// SameSite=Strict, 32 random bytes, set by the first page read and made
// anew at login and logout), and of the token the request carries. It is
// compared in constant time; a form without it, or with another
// session's, is refused with 403 ("its CSRF value is missing or stale;
// reload the page and send it again"), as is a cross-origin POST
// (net/http's CrossOriginProtection, in serve). Since the token is in the
// value, a session id planted in a browser is of no use to the planter.
// A page shown before the server restarted has a value the new process
// refuses: the reload the refusal asks for shows a good one. A "back" or
// "next" path stays on this server.
//
// # Markdown, not HTML
//
// page.result and page.runs are Markdown; markdown.go makes them HTML
// with goldmark under the page format's rules: raw HTML (a block or
// inline) is written as text; a link is a link only for https: and http:
// (with a host) and mailto:, any other (javascript:, data:, a relative
// one) is its text; an image is a link to it reading "Image: <alt>", never
// an <img>; every link has rel="noopener noreferrer nofollow". A chart
// block that draws (render.ReadChart) becomes package assets' figure:
// data-kind, data-roles (a JSON object), data-address (its block's or
// cell's), data-cells on a figure block (a JSON list of its tiles'
// addresses, the cells of its block), its body in a script element of
// type application/json (with <, > and & written as \u escapes, so the
// body cannot close the element), and its data as the page format's table
// (render's own, the one a client that does not draw prints) folded in
// <details>. A block that fails is already its line and table in the
// Markdown the ledger rendered. Each page's head carries render's table of
// chart kinds (render.ChartKinds, by name) as package assets' doc says, so
// charts.js reads the roles of a kind from the table the server checks
// blocks against.
//
// Every page has Content-Security-Policy: default-src 'none'; script-src
// 'self'; style-src 'self'; img-src 'self'; connect-src 'self';
// font-src 'self'; form-action 'self'; frame-ancestors 'none';
// base-uri 'none' — no inline script or style, no third-party origin —
// with nosniff, Referrer-Policy no-referrer and X-Frame-Options DENY.
// An artifact is answered with its type by its name's extension
// (application/octet-stream otherwise), Content-Disposition: attachment,
// nosniff and CSP sandbox, so a browser never renders it as a page.
//
// # Addresses and comments
//
// Blocks are counted as render.Blocks counts them, so a block's address is
// the one get_run's blocks give: <playbook>/runs/<run_id>/result/<n>, a
// row's cell <playbook>/runs/<run_id>/parts/result-<n>-<m>; a definition's
// runs block <playbook>/definitions/<type>/<name>/<version>/parts/runs-<n>
// (cells runs-<n>-<m>); the playbook's page's playbooks/<playbook>/parts/
// runs-<n>; an event <playbook>/runs/<run_id>/events/<event_id>. Each
// carries data-address and shows it on hover (title), with its comments
// and a form folded in a <details>. A page reads its comments in one
// list_comments call, under the run, the definition (every version) or
// the playbook.
//
// # Live
//
// live.go: the ledger's Watch tells the hub of every event it records and
// of every move of a page's views (the keeper's KeeperOptions.Moved), and
// once a second, while a stream is open, the hub looks whether a
// playbook's history grew by another process's hand. A stream follows
// one playbook (or all, on /). assets/static/live.js fetches the page
// again on a change (at most one fetch at a time, 100 ms after the first
// change) and swaps each element marked data-live whose HTML differs,
// keeping a form a person is typing in and the threads they opened; it
// then dispatches "quire:updated" on document with {root} and calls
// window.quireCharts.draw(root) where charts.js offers it, so the
// figures swapped in are drawn. A stream ends when its token is no
// longer taken (Options.Stream: package serve ends it within a quarter
// of a second of the token's revocation or expiry, whichever process
// revoked it); EventSource's reconnection is then refused with 401, and
// the page stays as it was until it is reloaded.
package web
