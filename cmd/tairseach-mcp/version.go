package main

import "runtime/debug"

// version is stamped at build time with -ldflags "-X main.version=…";
// versionString falls back to what Go recorded in the binary.
var version = "dev"

// versionString is the stamped version (make build, make dist and
// goreleaser stamp what scripts/version.sh prints), else the version Go
// recorded in the binary, which is the same string for the same commit:
// the tag (v1.2.3) or Go's pseudo-version
// (v1.2.4-0.20261125124842-1355916abcde), "+dirty" with changes not
// committed. A build with no version control information (-buildvcs=false,
// or outside a checkout) is "dev".
func versionString() string {
	if version != "dev" && version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	return buildInfoVersion(bi)
}

func buildInfoVersion(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	return "dev"
}
