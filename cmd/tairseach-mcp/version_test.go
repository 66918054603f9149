package main

import (
	"runtime/debug"
	"testing"
)

func TestBuildInfoVersion(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	tests := []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"go install of a tag", debug.BuildInfo{Main: debug.Module{Version: "v0.3.1"}}, "v0.3.1"},
		{"go install of a commit", debug.BuildInfo{Main: debug.Module{Version: "v0.3.2-0.20261101120000-a1b2c3d4e5f6"}}, "v0.3.2-0.20261101120000-a1b2c3d4e5f6"},
		{"checkout, clean", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("a1b2c3d4e5f60718293a4b5c6d7e8f9012345678", "false")}, "dev (a1b2c3d4e5f6)"},
		{"checkout, modified", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("a1b2c3d4e5f60718293a4b5c6d7e8f9012345678", "true")}, "dev (a1b2c3d4e5f6, modified)"},
		{"nothing recorded", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := buildInfoVersion(&tt.bi); got != tt.want {
				t.Errorf("buildInfoVersion = %q, want %q", got, tt.want)
			}
		})
	}
}
