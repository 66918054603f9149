#!/bin/sh
# Release archives without goreleaser: static binaries cross-compiled with
# go build, one tar.gz per platform named as .goreleaser.yaml names them,
# and checksums.txt. make dist runs it.
#
#   VERSION  stamped into the binary (default: scripts/version.sh, the
#            version Go gives this commit: v1.2.3 on a tag, else its
#            pseudo-version v1.2.4-0.20261125124842-1355916abcde)
#   TARGETS  os/arch list (default: the four release platforms)
#   DIST     output directory, emptied first (default: dist)
set -eu

go=${GO:-go}
version=${VERSION:-$(sh "$(dirname "$0")/version.sh")}
targets=${TARGETS:-darwin/arm64 darwin/amd64 linux/amd64 linux/arm64}
out=${DIST:-dist}
# goreleaser's {{ .Version }}: the tag without its v.
fileversion=${version#v}

if command -v sha256sum >/dev/null 2>&1; then
	sha256="sha256sum"
else
	sha256="shasum -a 256" # macOS
fi

case "$out" in
/ | . | .. | "$HOME") echo "DIST=$out: name a directory of its own; it is emptied first" >&2; exit 2 ;;
esac
rm -rf "$out"
mkdir -p "$out"
for target in $targets; do
	os=${target%/*}
	arch=${target#*/}
	name="tairseach-mcp_${fileversion}_${os}_${arch}"
	stage="$out/.stage/$name"
	mkdir -p "$stage"
	echo "building $name" >&2
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch $go build -trimpath \
		-ldflags "-s -w -X main.version=$version" \
		-o "$stage/tairseach-mcp" ./cmd/tairseach-mcp
	cp README.md "$stage/"
	# The files at the top of the archive, as goreleaser packs them.
	tar -C "$stage" -czf "$out/$name.tar.gz" tairseach-mcp README.md
done
rm -rf "$out/.stage"
(cd "$out" && $sha256 ./*.tar.gz | sed 's| \./| |' >checksums.txt)
ls -l "$out" >&2
