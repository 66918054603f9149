#!/usr/bin/env bash
# make try: the README's "Try it without the app" in one go. Starts the demo
# backend on a temporary socket and runs tools, call, doctor, a shell pipe
# and the Go SDK client against it, then stops the backend. Linux and macOS.
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/backend.sh
# As on a Mac where Tairseach has not been granted Screen Recording.
start_demo_backend try --grants screen_recording=denied
echo "the demo backend serves a fictional address book on $sock, as an app that has not been granted screen recording"

# What the README has you export by hand.
export TAIRSEACH_MANIFESTS="$PWD/manifests.example" TAIRSEACH_SOCKET="$sock" TAIRSEACH_PROMPTS="$PWD/manifests.example/prompts"
echo "\$ export TAIRSEACH_MANIFESTS=$TAIRSEACH_MANIFESTS TAIRSEACH_SOCKET=$sock TAIRSEACH_PROMPTS=$TAIRSEACH_PROMPTS"

show() {
  echo
  echo "\$ $*"
  "$@"
}
show "$bin/tairseach-mcp" tools --all    # screen.capture is left out: screen recording is denied
show "$bin/tairseach-mcp" call contacts.search query=anna
show "$bin/tairseach-mcp" doctor           # says which permission is missing and how to grant it
req='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tairseach_contacts_get","arguments":{"id":"c-007"}}}'
echo
echo "\$ echo '$req' | bin/tairseach-mcp"
echo "# (the server reads the macOS permissions as it starts: leaving screen.capture out, it tells the session the tools changed)"
echo "$req" | "$bin/tairseach-mcp"
echo
build_democlient
echo "\$ go run ./scripts/democlient bin/tairseach-mcp --prompts-dir manifests.example/prompts    # an MCP client (the Go SDK's) starts the server, as Claude Desktop does"
"$democlient" "$bin/tairseach-mcp" --prompts-dir manifests.example/prompts
echo
echo "the backend is stopped; to keep one running, follow the README's \"Try it without the app\""
