#!/usr/bin/env bash
# make demo: start the demo backend on a temporary socket, run the bridge
# against manifests.example/ under a real MCP client, then stop everything.
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/backend.sh
echo "starting the demo backend"
start_demo_backend demo
build_democlient

# What is shown is what runs: each command line is printed from the array
# it is run with.
args=("$bin/tairseach-mcp" --manifests manifests.example --prompts-dir manifests.example/prompts --socket "$sock" --log-level warn)
printf -v shown '%q ' "${args[@]}"
echo "running under the demo client, which starts it as Claude Desktop would: ${shown% }"
echo "(the bridge's log lines go to stderr and are shown as they happen)"
"$democlient" "${args[@]}"

echo
echo "== the same from a shell pipe (one request in, one response line out):"
req='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tairseach_contacts_get","arguments":{"id":"c-001"}}}'
args=("$bin/tairseach-mcp" --manifests manifests.example --socket "$sock" --log-level warn)
printf -v shown '%q ' "${args[@]}"
echo "\$ echo '$req' | ${shown% }"
echo "$req" | "${args[@]}"
echo
echo "demo finished; the backend is stopped and $dir removed"
