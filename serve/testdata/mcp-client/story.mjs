// A whole run driven through quire's MCP server by the official TypeScript
// SDK's client, as a third-party agent host would:
//   node story.mjs <config.json>
// config: {"url": <.../mcp>, "token": <bearer>, "reader": <bearer of another
// principal>} over streamable HTTP, or {"command": …, "args": […], "env": {…}}
// over stdio; with "source" (the workflow's document, with a page that has
// data) and "playbook_page"; "short": true makes a playbook, reads it and
// is refused once, and stops. The tools are listed first, so the SDK checks
// every structured result against its tool's output schema (and throws
// "Structured content does not match the tool's output schema" if one does
// not); each call below is checked again here. Any failure exits 1; the
// last line is one JSON object of what it saw.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const cfg = JSON.parse(readFileSync(process.argv[2], "utf8"));

function fail(msg) {
  console.error(msg);
  process.exit(1);
}

async function connect(token) {
  const transport = cfg.url
    ? new StreamableHTTPClientTransport(new URL(cfg.url), { requestInit: { headers: token ? { Authorization: `Bearer ${token}` } : {} } })
    : new StdioClientTransport({ command: cfg.command, args: cfg.args, env: cfg.env, stderr: "inherit" });
  const client = new Client({ name: "quire-sdk-story", version: "1.0.0" });
  await client.connect(transport);
  const { tools } = await client.listTools(); // the SDK checks output only for tools it has listed
  return { client, tools };
}

let calls = 0;
async function call(client, name, args, refused) {
  let res;
  try {
    res = await client.callTool({ name, arguments: args });
  } catch (e) {
    fail(`${name}: ${e.message}`);
  }
  calls++;
  if (res.structuredContent === undefined) fail(`${name}: no structured content`);
  if (refused !== undefined) {
    if (!res.isError || res.structuredContent.error?.code !== refused) fail(`${name}: want ${refused}, got ${JSON.stringify(res)}`);
  } else if (res.isError) {
    fail(`${name}: ${res.content[0].text}`);
  }
  return res.structuredContent;
}

const { client, tools } = await connect(cfg.token);
const project = (await call(client, "create_project", { name: "Finance" })).uid;
await call(client, "create_playbook", { playbook: "finance", name: "Finance" });
await call(client, "create_playbook", { playbook: "finance", name: "Finance" }, "conflict");
if (cfg.short) {
  // The short variant: connected, listed, a write, a read and a refusal.
  const pb = await call(client, "get_playbook", { playbook: "finance" });
  console.log(JSON.stringify({ tools: tools.length, calls, playbook: pb.playbook }));
  await client.close();
  process.exit(0);
}
const def = { playbook: "finance", type: "workflow", name: "close-the-month" };
await call(client, "create_definition", { ...def, source: cfg.source });
const run = await call(client, "run_definition", { ...def, member_of: [project], executor: "ana", authorized_by: "ana" });
const actor = "ana"; // the token's principal over HTTP; over stdio the caller names itself
await call(client, "record_event", { playbook: "finance", run_id: run.run_id, event: "step_started", step: "do/0/work", actor });
await call(client, "record_event", { playbook: "finance", run_id: run.run_id, event: "step_completed", step: "do/0/work", detail: "Reconciled 412 entries", actor });
await call(client, "append_thread", { playbook: "finance", run_id: run.run_id, text: "Reconciled; the close is next.", actor });
await call(client, "end_run", { playbook: "finance", run_id: run.run_id, status: "succeeded", output: { month: "2026-10", revenue: 182450 }, actor });
const got = await call(client, "get_run", { playbook: "finance", run_id: run.run_id });
if (got.state !== "complete") fail(`get_run: ${JSON.stringify(got)}`);
await call(client, "get_run", { playbook: "finance", run_id: "019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3e" }, "not_found");
await call(client, "list_runs", { playbook: "finance" });
await call(client, "list_playbook_events", { playbook: "finance" });
const definition = await call(client, "get_definition", def);
const rendered = await call(client, "render_page", def);
await call(client, "update_playbook", { playbook: "finance", page: cfg.playbook_page });
const playbookPage = await call(client, "render_playbook_page", { playbook: "finance" });
for (const [what, page] of [["get_definition", definition.page], ["render_page", rendered.page], ["render_playbook_page", playbookPage.page]]) {
  if (!page?.standing?.state) fail(`${what}: no page.standing: ${JSON.stringify(page)}`);
}

// Another principal reads what the first wrote.
let reader = "";
if (cfg.reader) {
  const r = await connect(cfg.reader);
  const read = await call(r.client, "get_definition", def);
  await call(r.client, "create_playbook", { playbook: "other", name: "Other" }, "forbidden");
  reader = read.page.standing.state;
  await r.client.close();
}

console.log(JSON.stringify({
  tools: tools.length,
  calls,
  result: got.page?.result ?? "",
  standing: definition.page.standing.state,
  glance: definition.page.glance ?? null,
  reader,
}));
await client.close();
