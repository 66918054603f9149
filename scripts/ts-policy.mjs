// A real MCP client for the tool-policy tests: the official TypeScript SDK,
// over stdio or streamable HTTP. Usage: node ts-policy.mjs SPEC
// where SPEC is JSON: {"stdio": {"command": BIN, "args": [...]}} or
// {"http": {"url": URL, "headers": {...}}}, plus "calls": [{"name", "arguments"}].
// It lists the tools, makes the calls in order and prints one JSON object:
// {"tools": [the tools as listed], "listBytes": N, "calls": [the results]}.
// A call that throws (a JSON-RPC error) is {"thrown": message}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const spec = JSON.parse(process.argv[2]);
const transport = spec.stdio
  ? new StdioClientTransport({ command: spec.stdio.command, args: spec.stdio.args, stderr: "inherit" })
  : new StreamableHTTPClientTransport(new URL(spec.http.url), { requestInit: { headers: spec.http.headers || {} } });
const client = new Client({ name: "ts-policy", version: "0.0.0" });

const timeout = setTimeout(() => {
  console.error("ts-policy: timed out");
  process.exit(3);
}, 30000);

await client.connect(transport);
const listed = await client.listTools();
const out = { tools: listed.tools, listBytes: Buffer.byteLength(JSON.stringify({ tools: listed.tools })), calls: [] };
for (const c of spec.calls || []) {
  try {
    out.calls.push(await client.callTool({ name: c.name, arguments: c.arguments || {} }));
  } catch (e) {
    out.calls.push({ thrown: String(e && e.message) });
  }
}
await client.close();
clearTimeout(timeout);
console.log(JSON.stringify(out));
