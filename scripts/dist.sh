#!/bin/sh
# The release files without goreleaser, with go alone; make dist runs it.
# In DIST:
#
#   tairseach-mcp_V_OS_ARCH.tar.gz   one per target: a static binary, README.md
#                                    and LICENSE, named as .goreleaser.yaml names them
#   tairseach-mcp-V.mcpb             the MCP Bundle for Claude Desktop on macOS: one
#                                    universal binary (Apple silicon and Intel), made
#                                    from the two darwin builds by scripts/lipo
#   checksums.txt                    SHA-256 of the archives and bundles
#   server.json                      the MCP Registry's entry for the bundle, with
#                                    its sha256 (scripts/fill-release.sh)
#   tairseach-mcp.rb                 the Homebrew formula, with the archives' sha256
#
# V is the version without its v. Settings:
#
#   VERSION  stamped into the binary (default: scripts/version.sh, the
#            version Go gives this commit: v1.2.3 on a tag, else its
#            pseudo-version v1.2.4-0.20261125124842-1355916abcde)
#   TARGETS  os/arch list (default: the four release platforms)
#   BUNDLES  the bundles to write: darwin (universal; needs both darwin
#            targets), or an os/arch of TARGETS for a bundle of that binary
#            alone, named tairseach-mcp-V-OS-ARCH.mcpb (default: darwin when
#            TARGETS has both darwin targets, else none)
#   DIST     output directory, emptied first (default: dist)
#   SOURCE_DATE_EPOCH  time stamped on the bundles' entries (default: the
#            commit's time), so that a commit gives the same bundle bytes
set -eu

go=${GO:-go}
root=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)
version=${VERSION:-$(sh "$root/scripts/version.sh")}
targets=${TARGETS:-darwin/arm64 darwin/amd64 linux/amd64 linux/arm64}
out=${DIST:-dist}
# goreleaser's {{ .Version }}: the tag without its v.
fileversion=${version#v}

has_target() {
	case " $(echo $targets) " in *" $1 "*) return 0 ;; esac
	return 1
}
if [ -n "${BUNDLES+set}" ]; then
	bundles=$BUNDLES
elif has_target darwin/arm64 && has_target darwin/amd64; then
	bundles=darwin
else
	bundles=
fi
for b in $bundles; do
	case $b in
	darwin) has_target darwin/arm64 && has_target darwin/amd64 ||
		{ echo "BUNDLES=darwin needs darwin/arm64 and darwin/amd64 in TARGETS" >&2; exit 2; } ;;
	*/*) has_target "$b" || { echo "BUNDLES=$b: $b is not in TARGETS" >&2; exit 2; } ;;
	*) echo "BUNDLES=$b: want darwin or an os/arch of TARGETS" >&2; exit 2 ;;
	esac
done
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)}

if command -v sha256sum >/dev/null 2>&1; then
	sha256="sha256sum"
else
	sha256="shasum -a 256" # macOS
fi

case "$out" in
/ | . | .. | "$HOME" | "$root") echo "DIST=$out: name a directory of its own; it is emptied first" >&2; exit 2 ;;
esac
rm -rf "$out"
mkdir -p "$out"
out=$(CDPATH='' cd -- "$out" && pwd)
stage="$out/.stage"
cd "$root"

# Progress on stderr: each step as it starts and ends, and a line every
# PROGRESS_EVERY seconds (default 30) while it runs, since a cross-compiled
# build takes minutes on a small machine.
every=${PROGRESS_EVERY:-30}
steps=$(($(echo $targets $bundles | wc -w)))
case " $(echo $bundles) " in *" darwin "*) steps=$((steps + 1)) ;; esac # joining the darwin binaries
step=0
heartbeat=
trap '[ -z "$heartbeat" ] || kill "$heartbeat" 2>/dev/null' EXIT
echo "make dist: $steps steps into $out, version $version (several minutes on 2 cores)" >&2
# run WHAT CMD... runs CMD as the next step, saying so.
run() {
	what=$1
	shift
	step=$((step + 1))
	start=$(date +%s)
	echo "[$step/$steps] $what" >&2
	(
		trap 'kill "$s" 2>/dev/null; exit 0' TERM
		n=0
		while :; do
			sleep "$every" >/dev/null 2>&1 &
			s=$!
			wait "$s"
			n=$((n + every))
			echo "[$step/$steps] still $what (${n}s)" >&2
		done
	) &
	heartbeat=$!
	"$@"
	kill "$heartbeat" 2>/dev/null
	wait "$heartbeat" 2>/dev/null || true
	heartbeat=
	echo "[$step/$steps] done in $(($(date +%s) - start))s" >&2
}

for target in $targets; do
	os=${target%/*}
	arch=${target#*/}
	name="tairseach-mcp_${fileversion}_${os}_${arch}"
	mkdir -p "$stage/$name"
	run "building $name" env CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" $go build -trimpath \
		-ldflags "-s -w -X main.version=$version" \
		-o "$stage/$name/tairseach-mcp" ./cmd/tairseach-mcp
	cp README.md LICENSE "$stage/$name/"
	# The files at the top of the archive, as goreleaser packs them.
	tar -C "$stage/$name" -czf "$out/$name.tar.gz" tairseach-mcp README.md LICENSE
done

for b in $bundles; do
	case $b in
	darwin)
		bin="$stage/darwin_universal/tairseach-mcp"
		mkdir -p "$stage/darwin_universal"
		run "joining the darwin binaries into a universal one" $go -C scripts/lipo run . -output "$bin" \
			"$stage/tairseach-mcp_${fileversion}_darwin_arm64/tairseach-mcp" \
			"$stage/tairseach-mcp_${fileversion}_darwin_amd64/tairseach-mcp"
		platform=darwin
		bundle="tairseach-mcp-$fileversion.mcpb"
		;;
	*)
		bin="$stage/tairseach-mcp_${fileversion}_${b%/*}_${b#*/}/tairseach-mcp"
		platform=${b%/*}
		bundle="tairseach-mcp-$fileversion-${b%/*}-${b#*/}.mcpb"
		;;
	esac
	# The tools the manifest lists are those of the manifests the
	# Tairseach app ships (manifest/testdata/tairseach-manifests/NOTICE.md).
	run "bundling $bundle" $go run ./scripts/bundle -version "$fileversion" -binary "$bin" -platform "$platform" \
		-tools manifest/testdata/tairseach-manifests -mtime "$epoch" -o "$out/$bundle"
done
rm -rf "$stage"

(cd "$out" && $sha256 $(ls ./*.tar.gz ./*.mcpb 2>/dev/null) | sed 's| \./| |' >checksums.txt)
sh scripts/fill-release.sh "$out" "$version"
ls -l "$out" >&2
