package main

// Install and uninstall give client files back byte for byte, and
// --print writes nothing at all.

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/geilt/tairseach-mcp/cmd/tairseach-mcp/internal/install"
	"github.com/geilt/tairseach-mcp/internal/clientconfig"
)

// roundTrips are client files as their owners write them: VS Code's
// JSONC with tabs, comments, trailing commas and inline arrays; Claude
// Desktop's plain JSON; Codex's TOML with comments. Install and uninstall
// must give each back byte for byte.
var roundTrips = []struct{ name, client, file string }{
	{"vscode_jsonc", "vscode", `{
	// Servers for Copilot's agent mode.
	"servers": {
		"github": {
			"type": "http",
			"url": "https://api.githubcopilot.com/mcp/", // remote
		},
		"fs": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],},
		/* more to come */
	},
	"inputs": [
		{"type": "promptString", "id": "token", "password": true},
	],
}
`},
	{"claude-desktop_json", "claude-desktop", `{
  "mcpServers": {
    "weather": {
      "command": "uvx",
      "args": ["mcp-weather", "--units=metric"],
      "env": {"WEATHER_KEY": "k"}
    }
  },
  "globalShortcut": "Alt+Space",
  "preferences": {"menuBarEnabled": false}
}
`},
	{"codex_toml", "codex", `# ~/.codex/config.toml
model = "gpt-5-codex"
approval_policy = "on-request" # ask first

[mcp_servers.github]
command = "npx"
args = [
  "-y",
  "@modelcontextprotocol/server-github", # the official one
]

[mcp_servers.github.env]
GITHUB_PERSONAL_ACCESS_TOKEN = "ghp_x"

# Profiles
[profiles.fast]
model = "o4-mini"`},
}

// TestInstallRoundTrip installs into each file of roundTrips and
// uninstalls: the file is then as it was, byte for byte.
func TestInstallRoundTrip(t *testing.T) {
	for _, rt := range roundTrips {
		t.Run(rt.name, func(t *testing.T) {
			home := installHome(t)
			path := configPathOf(t, rt.client)
			writeFixture(t, path, rt.file)
			var b strings.Builder
			fmt.Fprintf(&b, "-- before --\n%s", rt.file)
			for _, args := range [][]string{
				append(slices.Clone(fixedFlags), "install", rt.client),
				{"uninstall", rt.client},
			} {
				stdout, stderr, code := cli("", args...)
				if code != 0 {
					t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
				}
				b.WriteString(transcript(args, stdout, stderr, code, nil))
				after, _ := os.ReadFile(path)
				fmt.Fprintf(&b, "-- after: %s --\n%s", filepath.Base(path), after)
			}
			if after, _ := os.ReadFile(path); string(after) != rt.file {
				t.Errorf("uninstall did not restore the file:\n%s\nwant\n%s", after, rt.file)
			}
			if backup, _ := os.ReadFile(path + clientconfig.BackupSuffix); string(backup) != rt.file {
				t.Errorf("the backup is not the file before the first change:\n%s", backup)
			}
			s := strings.ReplaceAll(b.String(), exePath(t), "$EXE")
			checkGolden(t, filepath.Join("install", "roundtrip_"+rt.name), strings.ReplaceAll(s, home, "$HOME"))
		})
	}
}

// homeSnapshot is every path under home: kind, mode, size, time, content.
func homeSnapshot(t *testing.T, home string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		s := fmt.Sprintf("%v %d %v", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s += "\n" + string(b)
		}
		out[p] = s
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestInstallPrintWritesNothing runs install --print and uninstall
// --print for every client, over stdio and HTTP, with and without a file
// and before any token exists: HOME is as it was.
func TestInstallPrintWritesNothing(t *testing.T) {
	for _, c := range install.Clients {
		for _, existing := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, file %v", c.Name, existing), func(t *testing.T) {
				home := installHome(t)
				path := configPathOf(t, c.Name)
				if existing {
					writeFixture(t, path, fixture(t, c))
					if _, stderr, code := cli("", "install", c.Name); code != 0 { // an entry for uninstall to take out
						t.Fatalf("exit %d: %s", code, stderr)
					}
				}
				before := homeSnapshot(t, home)
				runs := [][]string{
					append(slices.Clone(fixedFlags), "--prefix", "p_", "install", c.Name, "--print"),
					{"--transport", "http", "install", c.Name, "--print"},
					{"uninstall", c.Name, "--print"},
				}
				if c.Name == "claude-desktop" {
					runs = append(runs, []string{"config", "claude"})
				}
				for _, args := range runs {
					stdout, stderr, code := cli("", args...)
					if code != 0 {
						t.Fatalf("%v: exit %d\n%s%s", args, code, stdout, stderr)
					}
					placeholder := "<the token in " + filepath.Join(home, ".tairseach", "mcp-token") + ">"
					if c.TokenRef != "" {
						placeholder = "Bearer ${TAIRSEACH_MCP_TOKEN}"
					}
					if args[0] == "--transport" && c.HTTP && !strings.Contains(stdout, placeholder) {
						t.Errorf("%v: no placeholder for the token:\n%s", args, stdout)
					}
				}
				if after := homeSnapshot(t, home); !maps.Equal(before, after) {
					t.Errorf("--print changed HOME:\nbefore %v\nafter  %v", slices.Sorted(maps.Keys(before)), slices.Sorted(maps.Keys(after)))
				}
			})
		}
	}
}
