// A client of quire's MCP server made with the official TypeScript SDK:
// node client.mjs <url of /mcp> <bearer token>
// It lists the tools, calls create_playbook and get_playbook (the SDK checks
// each answer against the tool's output schema), is refused once, and
// prints what it saw as one JSON object. Any failure exits 1.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token] = process.argv.slice(2);
if (!url) {
  console.error("usage: node client.mjs <url> [token]");
  process.exit(2);
}

function fail(msg) {
  console.error(msg);
  process.exit(1);
}

const headers = token ? { Authorization: `Bearer ${token}` } : {};
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
const client = new Client({ name: "quire-node-test", version: "1.0.0" });
await client.connect(transport);

const { tools } = await client.listTools();
const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
for (const name of ["create_playbook", "get_playbook", "list_playbooks"]) {
  if (!byName[name]) fail(`no tool ${name}`);
}
if (!byName.get_playbook.annotations?.readOnlyHint) fail("get_playbook is not read-only");
if (byName.create_playbook.inputSchema.type !== "object") fail("create_playbook's input schema is not an object");

const made = await client.callTool({ name: "create_playbook", arguments: { playbook: "node-test", name: "From Node" } });
if (made.isError) fail(`create_playbook: ${made.content[0].text}`);
if (made.structuredContent.playbook !== "node-test") fail(`create_playbook answered ${JSON.stringify(made.structuredContent)}`);

const got = await client.callTool({ name: "get_playbook", arguments: { playbook: "node-test" } });
if (got.isError) fail(`get_playbook: ${got.content[0].text}`);

const list = await client.callTool({ name: "list_playbooks", arguments: {} });
if (list.isError || !Array.isArray(list.structuredContent.items)) fail(`list_playbooks: ${JSON.stringify(list)}`);

const again = await client.callTool({ name: "create_playbook", arguments: { playbook: "node-test", name: "From Node" } });
if (!again.isError) fail("create_playbook twice was not refused");
const refusal = JSON.parse(again.content[0].text);

console.log(JSON.stringify({
  tools: tools.length,
  created: made.structuredContent.playbook,
  name: got.structuredContent.name,
  playbooks: list.structuredContent.items.length,
  refused: refusal.error.code,
}));
await client.close();
