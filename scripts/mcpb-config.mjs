// Prints, as JSON, the command, args and env that an MCPB host (Claude
// Desktop) runs for an unpacked bundle: the bundle's mcp_config with
// ${__dirname}, ${HOME} and ${user_config.*} replaced by the official
// @anthropic-ai/mcpb library (getMcpConfigForManifest), the user's values
// over the manifest's defaults. The bundle tests start what it prints.
//
//   node scripts/mcpb-config.mjs DIR HOME '{"read_only": true}'
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { getMcpConfigForManifest } from "@anthropic-ai/mcpb";

const [dir, home, userConfig = "{}"] = process.argv.slice(2);
if (!dir || !home) {
  console.error("usage: node scripts/mcpb-config.mjs DIR HOME [USER_CONFIG_JSON]");
  process.exit(2);
}
const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
const config = await getMcpConfigForManifest({
  manifest,
  extensionPath: dir,
  systemDirs: { HOME: home },
  userConfig: JSON.parse(userConfig),
  pathSeparator: "/",
});
if (!config) {
  console.error("mcpb-config: no mcp_config (a required user_config value is missing?)");
  process.exit(1);
}
process.stdout.write(JSON.stringify(config) + "\n");
