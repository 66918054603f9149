package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
)

// TestInstructionsKeywordsFirst: on the manifests the Tairseach app ships,
// the instructions of initialize (2025-11-25) and of server/discover
// (2026-07-28) fit in the 2 KB Claude Code keeps, and begin with what the
// tools are about: every toolset served named in the first sentence,
// before the rules for reading results. Also when every macOS permission is
// denied, which adds the longest line about what is not offered.
func TestInstructionsKeywordsFirst(t *testing.T) {
	requireCorpus(t)
	reg, err := manifest.Load(corpusDir, manifest.Options{Prefix: "tairseach_"})
	if err != nil {
		t.Fatal(err)
	}
	// The toolsets served: all, and with every permission denied those
	// with a tool that needs none.
	all, free := map[string]bool{}, map[string]bool{}
	for _, tool := range reg.Tools {
		w := strings.ReplaceAll(policy.ToolsetOf(tool), "-", " ")
		all[w] = true
		if len(tool.Permissions) == 0 {
			free[w] = true
		}
	}
	denyAll := "contacts=denied,calendar=denied,reminders=denied,location=denied,photos=denied,camera=denied," +
		"microphone=denied,screen_recording=denied,accessibility=denied,full_disk_access=denied,automation=denied"
	for _, grants := range []string{"", denyAll} {
		for _, proto := range protocols {
			name := "granted"
			if grants != "" {
				name = "denied"
			}
			t.Run(name+"/"+protoName(proto), func(t *testing.T) {
				e := newEnv(t)
				e.manifests, _ = filepath.Abs(corpusDir)
				startBackend(t, e.socket, "--grants", grants)
				cs := connect(t, e, proto)
				text := cs.InitializeResult().Instructions
				t.Logf("%d bytes: %s", len(text), text)
				if len(text) > mcpserver.MaxInstructionsBytes {
					t.Errorf("instructions of %d bytes; Claude Code keeps %d", len(text), mcpserver.MaxInstructionsBytes)
				}
				first, _, _ := strings.Cut(text, ". ")
				if !strings.HasPrefix(first, "Tairseach tools for the user's own Mac") {
					t.Errorf("the instructions begin %q, not with what the tools are about", first)
				}
				served := all
				if grants != "" {
					served = free
				}
				_, list, _ := strings.Cut(first, ": ")
				named := map[string]bool{}
				for _, w := range strings.Split(list, ", ") {
					named[w] = true
				}
				for w := range all {
					if named[w] != served[w] {
						t.Errorf("toolset %q: served %v, named in the first sentence %v: %q", w, served[w], named[w], first)
					}
				}
				if grants != "" && !strings.Contains(text, "not offered") {
					t.Errorf("every permission denied, yet the instructions do not say what is not offered: %q", text)
				}
			})
		}
	}
}
