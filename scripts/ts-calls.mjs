// A real MCP client for the end-to-end tests of what tool calls return: the
// official TypeScript SDK over stdio, with its default limits (a stdio
// message over 10 MiB ends the session) and its validation of
// structuredContent against advertised outputSchemas.
// Usage: node ts-calls.mjs CALLS BIN [ARGS...]
// CALLS is a JSON array of {"name", "arguments"}; the calls are made one
// after another. Prints one JSON object: {"results": [...]}, each result
// {isError, textBytes, text (its first 500 characters), structured} or
// {thrown} when the client raised an error.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [callsJSON, command, ...args] = process.argv.slice(2);
const calls = JSON.parse(callsJSON);
const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
const client = new Client({ name: "ts-calls", version: "0.0.0" });
const transportErrors = [];
transport.onerror = (e) => transportErrors.push(String(e));

const timeout = setTimeout(() => {
  console.error("ts-calls: timed out");
  process.exit(3);
}, 150000);

await client.connect(transport);
await client.listTools(); // the client learns the outputSchemas it validates against
const results = [];
for (const call of calls) {
  try {
    const res = await client.callTool({ name: call.name, arguments: call.arguments ?? {} }, undefined, { timeout: 60000 });
    const text = (res.content ?? []).map((c) => c.text ?? "").join("");
    results.push({ isError: !!res.isError, textBytes: Buffer.byteLength(text), text: text.slice(0, 500), structured: res.structuredContent !== undefined });
  } catch (e) {
    results.push({ thrown: String(e) });
  }
}
await client.close();
clearTimeout(timeout);
console.log(JSON.stringify({ results, transportErrors }));
