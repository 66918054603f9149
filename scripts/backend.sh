# Sourced by demo.sh and try.sh: start_demo_backend NAME [FLAGS...] starts
# the demo backend with FLAGS on a socket in a new temporary directory (dir,
# sock), and stops it and removes the directory when the script exits. The
# binaries are in $BIN (make's, bin by default).
bin=${BIN:-bin}
start_demo_backend() {
  dir=$(mktemp -d "${TMPDIR:-/tmp}/tairseach-$1.XXXXXX")
  sock="$dir/tairseach.sock"
  backend_pid=
  trap 'stop_demo_backend' EXIT INT TERM
  "$bin/tairseach-demo" --socket "$sock" "${@:2}" 2>"$dir/backend.log" &
  backend_pid=$!
  for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
  [ -S "$sock" ] || { cat "$dir/backend.log" >&2; echo "the demo backend did not start" >&2; exit 1; }
}

stop_demo_backend() {
  if [ -n "$backend_pid" ]; then kill "$backend_pid" 2>/dev/null && wait "$backend_pid" 2>/dev/null; fi
  rm -rf "$dir"
}

# build_democlient builds scripts/democlient, the Go SDK client the demo
# drives the bridge with, into $dir as $democlient. It is built as make build
# builds the bridge (CGO_ENABLED=0, -trimpath), so that every package it
# needs, the go-sdk and the standard library, is already in Go's build cache
# and only the client itself is compiled and linked: seconds, where a build
# with other settings compiled them all again (2½ minutes on 2 busy cores).
build_democlient() {
  echo "building the demo MCP client (scripts/democlient) from what make build compiled"
  democlient="$dir/democlient"
  CGO_ENABLED=0 go build -trimpath -o "$democlient" ./scripts/democlient
}
