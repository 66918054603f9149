// A real MCP client for the end-to-end tests of the macOS permissions: the
// official TypeScript SDK, over stdio or streamable HTTP, with an
// elicitation handler. Usage: node ts-permissions.mjs SPEC
// where SPEC is JSON: {"stdio": {"command": BIN, "args": [...]}} or
// {"http": {"url": URL, "headers": {...}}}, plus "tool" (the MCP name of a
// tool that needs a permission) and "permission" (its name), and "other"
// and "otherPermission", another such tool and its permission.
//
// The test starts the demo backend with the permission denied and changes
// it by rewriting the backend's --grants-file. The client prints one JSON
// object per line on stdout, and the test answers each as it says:
//   {"step": "denied"}        the tool is not listed and its call was
//                             answered: grant the permission
//   {"step": "granted"}       list_changed brought the tool back and it was
//                             called: make the permission not_determined
//   {"step": "done", ...}     everything it saw; see the end of the file
// After "granted" (the test then makes both permissions not_determined),
// once list_changed has taken both tools away, it calls the tool twice by
// name: its elicitation handler declines the one question, and the second
// call is not asked again. It then calls the other tool, whose question it
// accepts, which has the bridge call permissions.request; the demo's user
// then grants it, and list_changed brings the other tool back.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const spec = JSON.parse(process.argv[2]);
const transport = spec.stdio
  ? new StdioClientTransport({ command: spec.stdio.command, args: spec.stdio.args, stderr: "inherit" })
  : new StreamableHTTPClientTransport(new URL(spec.http.url), { requestInit: { headers: spec.http.headers || {} } });
const client = new Client({ name: "ts-permissions", version: "0.0.0" }, { capabilities: { elicitation: {} } });

const say = (o) => console.log(JSON.stringify(o));
const timeout = setTimeout(() => {
  console.error("ts-permissions: timed out");
  process.exit(3);
}, 60000);

// The answers the user gives, in order; every question is recorded.
const answers = ["decline", "accept"];
const questions = [];
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  questions.push({ message: req.params.message, schema: req.params.requestedSchema });
  const action = answers.shift() ?? "decline";
  return action === "accept" ? { action, content: { ask: true } } : { action };
});

let changes = 0;
let wake;
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
  changes++;
  wake?.();
});

const names = async () => (await client.listTools()).tools.map((t) => t.name);

// untilListed lists the tools after each notifications/tools/list_changed
// that arrives after the count of them was since, until want(names) holds;
// it fails after ms. The change is pushed, not polled for.
async function untilListed(since, want, ms, what) {
  const deadline = Date.now() + ms;
  for (;;) {
    while (changes === since) {
      if (Date.now() >= deadline) throw new Error(`no notifications/tools/list_changed bringing ${what} within ${ms} ms`);
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    since = changes;
    const listed = await names();
    if (want(listed)) return listed;
  }
}

// call returns what a client sees of a call: isError and the text, or the
// JSON-RPC error it raised.
async function call(name, args) {
  try {
    const r = await client.callTool({ name, arguments: args || {} });
    return { isError: !!r.isError, text: r.content.filter((c) => c.type === "text").map((c) => c.text).join("\n"), types: r.content.map((c) => c.type) };
  } catch (e) {
    return { thrown: String(e && e.message) };
  }
}
const check = async (permission) => JSON.parse((await call("tairseach_permissions_check", { permission })).text || "null");

await client.connect(transport);
const out = { step: "done", instructions: client.getInstructions() };

// Denied: the tool is not offered, and a call by name says how to grant it.
// The bridge reads the grants as it starts; a client that lists before
// then is told by list_changed.
out.denied = { tools: await names() };
if (out.denied.tools.includes(spec.tool)) {
  out.denied.listedBeforeGrantsRead = true;
  out.denied.tools = await untilListed(0, (n) => !n.includes(spec.tool), 10000, `the removal of ${spec.tool}`);
}
out.denied.call = await call(spec.tool);
let since = changes;
say({ step: "denied" });

// Granted in the backend: list_changed, listed, and the call works.
out.granted = { tools: await untilListed(since, (n) => n.includes(spec.tool), 20000, spec.tool) };
out.granted.call = await call(spec.tool);
since = changes;
say({ step: "granted" });

// Not determined: left out again; a call by name asks the user whether to
// ask macOS, once per permission. Declined: nothing is asked of the
// backend, and the next call is not asked again. Accepted (the other
// permission): the bridge calls permissions.request, which the demo's user
// grants.
out.undetermined = {
  tools: await untilListed(since, (n) => !n.includes(spec.tool) && !n.includes(spec.other), 20000, `the removal of ${spec.tool} and ${spec.other}`),
};
out.undetermined.declined = await call(spec.tool);
out.undetermined.declinedAgain = await call(spec.tool);
out.undetermined.checkAfterDecline = await check(spec.permission);
since = changes;
out.undetermined.accepted = await call(spec.other);
out.afterRequest = { tools: await untilListed(since, (n) => n.includes(spec.other), 20000, `${spec.other} after permissions.request`) };
out.afterRequest.check = await check(spec.otherPermission);
out.afterRequest.call = await call(spec.other);
out.questions = questions;

await client.close();
clearTimeout(timeout);
say(out);
