// A real MCP client for the end-to-end tests of progress and confirmation:
// the official TypeScript SDK over stdio.
// Usage: node observe-client.mjs SCENARIO BIN [ARGS...]
// Prints one JSON object with what it saw on stdout; exits non-zero on error.
//
// Scenarios:
//   progress   call tairseach_demo_slow for 3 s with a 2 s request timeout that
//              progress notifications reset (resetTimeoutOnProgress)
//   accept     call tairseach_demo_echo, accepting the confirmation asked for
//   decline    the same, declining it
//   cancel     the same, dismissing it
//   noelicit   the same from a client without the elicitation capability
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [scenario, command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
const capabilities = scenario === "noelicit" || scenario === "progress" ? {} : { elicitation: { form: {} } };
const client = new Client({ name: "ts-observe", version: "0.0.0" }, { capabilities });

const out = { elicitations: [] };
if (capabilities.elicitation) {
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    out.elicitations.push(req.params);
    if (scenario === "accept") return { action: "accept", content: { confirm: true } };
    if (scenario === "cancel") return { action: "cancel" };
    return { action: "decline" };
  });
}

const timeout = setTimeout(() => {
  console.error("observe-client: timed out");
  process.exit(3);
}, 30000);

await client.connect(transport);
if (scenario === "progress") {
  out.progress = [];
  const start = Date.now();
  out.result = await client.callTool({ name: "tairseach_demo_slow", arguments: { ms: 3000 } }, undefined, {
    timeout: 2000,
    resetTimeoutOnProgress: true,
    onprogress: (p) => out.progress.push(p),
  });
  out.tookMs = Date.now() - start;
} else {
  out.result = await client.callTool({ name: "tairseach_demo_echo", arguments: { marker: "observe-" + scenario } });
}
await client.close();
clearTimeout(timeout);
console.log(JSON.stringify(out));
