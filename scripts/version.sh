#!/bin/sh
# Prints the version make build and make dist stamp into the binaries: the
# version Go itself gives a build of this commit (go install, go build in a
# clone), so that every way of building names a commit the same way.
#
#   v1.2.3                                   the commit tagged v1.2.3
#   v1.2.4-0.20261125124842-1355916abcde     a commit after the tag v1.2.3
#   v0.0.0-20261125124842-1355916abcde       a commit before the first tag
#   …+dirty                                  with changes not committed
#   dev                                      outside a git checkout
#
# The middle part is the commit's time (UTC), the last its hash: Go's
# pseudo-version (go help module-get). Tags are semantic versions, v1.2.3.
set -eu

rev=$(git rev-parse --verify -q HEAD 2>/dev/null) || { echo dev; exit 0; }
dirty=
# As Go counts it: any change to a tracked file, or a file not ignored.
[ -z "$(git status --porcelain 2>/dev/null)" ] || dirty=+dirty

# The highest semantic-version tag, of those reachable from HEAD.
tag=$(git tag --merged "$rev" --list 'v[0-9]*' --sort=-v:refname 2>/dev/null |
	grep -E '^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$' | head -n 1) || tag=
if [ -n "$tag" ] && [ "$(git rev-parse "$tag^{commit}")" = "$rev" ]; then
	echo "$tag$dirty"
	exit 0
fi

time=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%d%H%M%S "$rev")
hash=$(echo "$rev" | cut -c1-12)
case "$tag" in
"") base=v0.0.0- ;;
*-*) base=$tag.0. ;; # a pre-release, v1.2.3-rc.1: v1.2.3-rc.1.0.TIME-HASH
*)
	patch=${tag##*.}
	base=${tag%.*}.$((patch + 1))-0.
	;;
esac
echo "$base$time-$hash$dirty"
