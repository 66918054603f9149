#!/bin/sh
# Fills in the templates of the files that describe a release, from the
# checksums.txt of DIR (scripts/dist.sh calls it after writing the files):
#
#   DIR/server.json       packaging/mcp-registry/server.json, for the MCP
#                         Registry: the bundle tairseach-mcp-V.mcpb and its sha256
#   DIR/tairseach-mcp.rb  packaging/homebrew/tairseach-mcp.rb.tmpl: the four
#                         archives and their sha256
#
# Each is written only when checksums.txt lists all it needs, and only for
# a release: both point at the files of a GitHub release of tag vVERSION,
# which a commit that is not tagged (a pseudo-version, +dirty, dev) can
# never have.
#
#   sh scripts/fill-release.sh DIR VERSION
set -eu

[ $# -eq 2 ] || { echo "usage: fill-release.sh DIR VERSION" >&2; exit 2; }
dir=$1
v=${2#v}
root=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)
sums="$dir/checksums.txt"

# A release version is vMAJOR.MINOR.PATCH with an optional pre-release,
# and not Go's pseudo-version of an untagged commit (…-TIME-HASH).
if ! echo "$v" | grep -Eq '^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$' ||
	echo "$v" | grep -Eq '[0-9]{14}-[0-9a-f]{12}$'; then
	echo "no server.json and no tairseach-mcp.rb: $2 is not a release (a commit without a tag, or changes not" \
		"committed), and both would point at release files that can never exist; commit, tag the commit" \
		"(git tag v1.2.3) and run make dist again" >&2
	exit 0
fi

# sum FILE prints the sha256 checksums.txt gives FILE, or nothing.
sum() {
	awk -v f="$1" '$2 == f { print $1 }' "$sums"
}

mcpb=$(sum "tairseach-mcp-$v.mcpb")
if [ -n "$mcpb" ]; then
	sed -e "s/@VERSION@/$v/g" -e "s/@MCPB_SHA256@/$mcpb/g" \
		"$root/packaging/mcp-registry/server.json" >"$dir/server.json"
else
	echo "no server.json: checksums.txt has no tairseach-mcp-$v.mcpb" >&2
fi

darwin_arm64=$(sum "tairseach-mcp_${v}_darwin_arm64.tar.gz")
darwin_amd64=$(sum "tairseach-mcp_${v}_darwin_amd64.tar.gz")
linux_arm64=$(sum "tairseach-mcp_${v}_linux_arm64.tar.gz")
linux_amd64=$(sum "tairseach-mcp_${v}_linux_amd64.tar.gz")
if [ -n "$darwin_arm64" ] && [ -n "$darwin_amd64" ] && [ -n "$linux_arm64" ] && [ -n "$linux_amd64" ]; then
	sed -e "s/@VERSION@/$v/g" \
		-e "s/@SHA256_DARWIN_ARM64@/$darwin_arm64/" -e "s/@SHA256_DARWIN_AMD64@/$darwin_amd64/" \
		-e "s/@SHA256_LINUX_ARM64@/$linux_arm64/" -e "s/@SHA256_LINUX_AMD64@/$linux_amd64/" \
		"$root/packaging/homebrew/tairseach-mcp.rb.tmpl" >"$dir/tairseach-mcp.rb"
else
	echo "no tairseach-mcp.rb: the Homebrew formula needs the four archives" >&2
fi
