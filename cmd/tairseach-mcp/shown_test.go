package main

// What a person is shown of outside words (the model's, a manifest's, a
// client's file, a command line a client's file holds) is what they are:
// a character that renders as nothing or as something else is shown
// escaped, wherever the words are said.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMessagesShowInvisibleCharactersEscaped: an unknown tool, an argument
// given twice, an unknown client, a flag's value, an unknown flag, a member
// of a client's file that install leaves out and a backend a manifest names
// in doctor and tools, each holding U+3164 (a Hangul filler, which renders as
// nothing and which fmt's %q prints as it is), show it escaped.
func TestMessagesShowInvisibleCharactersEscaped(t *testing.T) {
	const filler = "\u3164"
	home := installHome(t)
	noFeatureDirs(t)
	manifests := filepath.Join(home, "manifests")
	writeFixture(t, filepath.Join(manifests, "other.json"), `{"manifest_version": "1.0.0", "id": "other", "name": "Other", "version": "1",
  "tools": [{"name": "other.ping", "description": "Ping.", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}],
  "implementation": {"methods": {"other.ping": "other.ping"}, "socket": "/run/other`+filler+`.sock"}}`)
	path := configPathOf(t, "openclaw")
	writeFixture(t, path, `{"mcpServers": {"tairseach": {"command": "/x", "disabled`+filler+`": true}}}`)
	for _, tt := range []struct {
		name string
		args []string
		want string // in the output, escaped
	}{
		{"unknown tool", []string{"--manifests", exampleDir, "--socket", fixedSocket, "call", "contacts_list" + filler}, `unknown tool "contacts_list\u3164"`},
		{"argument given twice", []string{"--manifests", exampleDir, "--socket", fixedSocket, "call", "demo.echo", "id" + filler + "=1", "id" + filler + "=2"}, `argument "id\u3164" given twice`},
		{"unknown client", []string{"install", "cursor" + filler}, `unknown client "cursor\u3164"`},
		{"a flag's value", []string{"--transport", "stdio" + filler, "tools"}, `--transport "stdio\u3164": want stdio or http`},
		{"an unknown flag", []string{"--socket" + filler, "x", "tools"}, `--socket\u3164`},
		{"a member install leaves out", []string{"--manifests", exampleDir, "--socket", fixedSocket, "install", "openclaw"}, `left out its "disabled\u3164"`},
		{"a backend doctor reaches", []string{"--manifests", manifests, "--socket", fixedSocket, "doctor"}, `backend /run/other\u3164.sock`},
		{"a backend tools lists", []string{"--manifests", manifests, "--socket", fixedSocket, "tools"}, `/run/other\u3164.sock`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := cli("", tt.args...)
			out := stdout + stderr
			if strings.Contains(out, filler) || !strings.Contains(out, tt.want) {
				t.Errorf("exit %d; want %s, and no U+3164 as it is:\n%s", code, tt.want, strings.ReplaceAll(out, filler, "<U+3164>"))
			}
		})
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}
