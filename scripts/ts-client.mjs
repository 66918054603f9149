// A real MCP client for the end-to-end tests: the official TypeScript SDK
// over stdio. Usage: node ts-client.mjs SCENARIO BIN [ARGS...]
// Prints one JSON object with what it saw on stdout; exits non-zero on error.
//
// Scenarios:
//   basic         connect, list, call a tool that succeeds and one that fails, disconnect
//   list-changed  connect, list, print {"ready":true}, wait for
//                 notifications/tools/list_changed, list again, disconnect
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [scenario, command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
const client = new Client({ name: "ts-e2e", version: "0.0.0" });

let changed;
const listChanged = new Promise((resolve) => (changed = resolve));
client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed());

const timeout = setTimeout(() => {
  console.error("ts-client: timed out");
  process.exit(3);
}, 20000);

await client.connect(transport);
const out = {
  serverInfo: client.getServerVersion(),
  capabilities: client.getServerCapabilities(),
  tools: (await client.listTools()).tools.map((t) => t.name),
};

if (scenario === "basic") {
  out.status = await client.callTool({ name: "tairseach_server_status", arguments: {} });
  out.search = await client.callTool({ name: "tairseach_contacts_search", arguments: { query: "a", limit: 2 } });
  out.fail = await client.callTool({ name: "tairseach_demo_fail", arguments: {} });
} else if (scenario === "list-changed") {
  console.log(JSON.stringify({ ready: true }));
  await listChanged;
  out.toolsAfter = (await client.listTools()).tools.map((t) => t.name);
} else {
  throw new Error(`unknown scenario ${scenario}`);
}

await client.close();
clearTimeout(timeout);
console.log(JSON.stringify(out));
