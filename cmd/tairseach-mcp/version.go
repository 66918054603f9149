package main

import "runtime/debug"

// versionString is the stamped version, else what Go recorded in the
// binary: the module version of a go install, or the commit of a build in
// a checkout ("dev (a1b2c3d4e5f6, modified)").
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
	v := "dev"
	if mv := bi.Main.Version; mv != "" && mv != "(devel)" {
		v = mv
	}
	var rev string
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return v
	}
	if v != "dev" && !modified {
		// A module version already names its commit.
		return v
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified {
		rev += ", modified"
	}
	return v + " (" + rev + ")"
}
