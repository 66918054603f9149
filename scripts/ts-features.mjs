// A real MCP client for the end-to-end tests of resources, prompts,
// completion and pictures: the official TypeScript SDK, over stdio or
// streamable HTTP. Usage: node ts-features.mjs SPEC
// where SPEC is JSON: {"stdio": {"command": BIN, "args": [...]}} or
// {"http": {"url": URL, "headers": {...}}}, plus "log" (the URI of a log
// file resource) and "prompt" (the name of a prompt file the test adds).
//
// It prints one JSON object per line on stdout, the test answering each by
// changing files:
//   {"step": "subscribed"}      it subscribed to the log: append a line to it
//   {"step": "updated", "uri"}  notifications/resources/updated arrived
//   {"step": "prompts-listed"}  it listed the prompts: add the prompt file
//   {"step": "prompt-listed"}   notifications/prompts/list_changed arrived
//                               and prompts/list shows the new prompt
//   {"step": "done", ...}       everything it saw; see the end of the file
// A request that fails is recorded as {"code", "message"} of its JSON-RPC
// error, so the test can check the code.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { PromptListChangedNotificationSchema, ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { createHash } from "node:crypto";

const spec = JSON.parse(process.argv[2]);
const transport = spec.stdio
  ? new StdioClientTransport({ command: spec.stdio.command, args: spec.stdio.args, stderr: "inherit" })
  : new StreamableHTTPClientTransport(new URL(spec.http.url), { requestInit: { headers: spec.http.headers || {} } });
// The client tells the transport the negotiated revision; the stdio
// transport has no use for it, so record it here for both.
let negotiated;
const setVersion = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (v) => {
  negotiated = v;
  setVersion?.(v);
};
const client = new Client({ name: "ts-features", version: "0.0.0" });

const say = (o) => console.log(JSON.stringify(o));
const timeout = setTimeout(() => {
  console.error("ts-features: timed out");
  process.exit(3);
}, 40000);

// queue holds what a notification handler saw; next resolves with the
// oldest, or rejects after ms.
function queue() {
  const items = [];
  let wake;
  return {
    push(x) {
      items.push(x);
      wake?.();
    },
    async next(ms, what) {
      const deadline = Date.now() + ms;
      while (items.length === 0) {
        if (Date.now() >= deadline) throw new Error(`no ${what} within ${ms} ms`);
        await new Promise((resolve) => {
          const timer = setTimeout(resolve, deadline - Date.now());
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      return items.shift();
    },
  };
}
const updated = queue();
const promptsChanged = queue();
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updated.push(n.params.uri));
client.setNotificationHandler(PromptListChangedNotificationSchema, () => promptsChanged.push(true));

// attempt returns the result of f, or the JSON-RPC error it raised.
async function attempt(f) {
  try {
    return { result: await f() };
  } catch (e) {
    return { code: e.code, message: String(e.message) };
  }
}

await client.connect(transport);
const out = { step: "done", protocolVersion: negotiated, capabilities: client.getServerCapabilities() };

out.resources = (await client.listResources()).resources.map((r) => r.uri);
out.templates = (await client.listResourceTemplates()).resourceTemplates;
out.log = (await client.readResource({ uri: spec.log })).contents[0];

// Subscribe, and the test appends.
await client.subscribeResource({ uri: spec.log });
say({ step: "subscribed" });
say({ step: "updated", uri: await updated.next(5000, "notifications/resources/updated") });

// A new prompt file: list_changed, then listed.
await client.listPrompts();
say({ step: "prompts-listed" });
for (;;) {
  await promptsChanged.next(5000, "notifications/prompts/list_changed bringing the new prompt");
  const names = (await client.listPrompts()).prompts.map((p) => p.name);
  if (names.includes(spec.prompt)) {
    out.prompts = names;
    break;
  }
}
say({ step: "prompt-listed" });
out.newPrompt = await attempt(() => client.getPrompt({ name: spec.prompt, arguments: { who: "Ada" } }));
out.findContact = await attempt(() => client.getPrompt({ name: "find-contact", arguments: { who: "Ada", channel: "email" } }));

// A template resource: its variable is the socket call's params.
out.contact = await attempt(() => client.readResource({ uri: "tairseach://contacts/c-002" }));

// Bad input, each answered with a JSON-RPC error.
out.bad = {
  unknownURI: await attempt(() => client.readResource({ uri: "tairseach://nothing" })),
  escapeEncoded: await attempt(() => client.readResource({ uri: "tairseach://contacts/..%2Fx" })),
  escapeDots: await attempt(() => client.readResource({ uri: "tairseach://contacts/.." })),
  escapeSlash: await attempt(() => client.readResource({ uri: "tairseach://contacts/c-001/x" })),
  escapeQuery: await attempt(() => client.readResource({ uri: "tairseach://contacts/c-001%3Fx=1" })),
  unknownPrompt: await attempt(() => client.getPrompt({ name: "no-such-prompt" })),
  missingArgument: await attempt(() => client.getPrompt({ name: "find-contact", arguments: {} })),
  undeclaredArgument: await attempt(() => client.getPrompt({ name: "find-contact", arguments: { who: "Ada", colour: "blue" } })),
  outsideEnum: await attempt(() => client.getPrompt({ name: "find-contact", arguments: { who: "Ada", channel: "pigeon" } })),
};

// screen.capture: the client decodes the image block.
const shot = await client.callTool({ name: "tairseach_screen_capture", arguments: {} });
out.shot = {
  isError: !!shot.isError,
  types: shot.content.map((c) => c.type),
  text: shot.content[0]?.text,
  images: shot.content
    .filter((c) => c.type === "image")
    .map((c) => {
      const bytes = Buffer.from(c.data, "base64");
      return { mimeType: c.mimeType, size: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") };
    }),
};

out.completion = await attempt(() =>
  client.complete({ ref: { type: "ref/resource", uri: "tairseach://contacts/{id}" }, argument: { name: "id", value: "a" } }),
);

await client.close();
clearTimeout(timeout);
say(out);
