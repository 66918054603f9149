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
# drives the bridge with, into $dir as $democlient. The first build compiles
# the go-sdk and takes about a minute on 2 cores; say so before it starts.
build_democlient() {
  echo "building the demo MCP client (scripts/democlient): up to a minute the first time, Go caches it after"
  democlient="$dir/democlient"
  go build -o "$democlient" ./scripts/democlient
}
