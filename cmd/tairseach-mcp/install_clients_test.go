package main

// Tests of where install finds each client's file and this binary.

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestClientTables: the clients install's help lists, and the README's and
// docs/clients.md's tables, are the rows of mcpClients, each by its title,
// and no other. docs/clients.md opens with the first, Claude Desktop, and
// its table has the others.
func TestClientTables(t *testing.T) {
	var names, titles []string
	for _, c := range mcpClients {
		names, titles = append(names, c.name), append(titles, c.title)
	}
	stdout, stderr, code := cli("", "install", "--help")
	_, list, ok := strings.Cut(stdout, "Clients and their files (macOS; ~/.config on Linux):\n")
	if code != 0 || !ok {
		t.Fatalf("install --help: exit %d, no list of clients\n%s%s", code, stdout, stderr)
	}
	list, _, _ = strings.Cut(list, "\n\n")
	var listed []string
	for _, line := range strings.Split(list, "\n") {
		listed = append(listed, strings.Fields(line)[0])
	}
	if !slices.Equal(listed, names) {
		t.Errorf("install --help lists the clients %q; install knows %q", listed, names)
	}

	row := regexp.MustCompile("^\\| ([^|]+) \\| `tairseach-mcp install ([a-z0-9-]+)` \\|")
	for _, tt := range []struct {
		page, header string
		skip         int // rows of mcpClients the page has elsewhere
	}{
		{"README.md", "| client | add it | check it |", 0},
		{"docs/clients.md", "| client | command | file (macOS; Linux) | entry |", 1},
	} {
		_, table, ok := strings.Cut(string(readFile(t, filepath.Join(repoRoot, tt.page))), "\n"+tt.header+"\n")
		if !ok {
			t.Errorf("%s has no table of clients (%q)", tt.page, tt.header)
			continue
		}
		table, _, _ = strings.Cut(table, "\n\n")
		got := map[string]string{}
		var order []string
		for _, line := range strings.Split(table, "\n")[1:] {
			m := row.FindStringSubmatch(line)
			if m == nil {
				t.Errorf("%s: a row of the table of clients names no client: %s", tt.page, line)
				continue
			}
			got[m[2]], order = m[1], append(order, m[2])
		}
		want := names[tt.skip:]
		if !slices.Equal(slices.Sorted(slices.Values(order)), slices.Sorted(slices.Values(want))) {
			t.Errorf("%s's table of clients has %q; install knows %q", tt.page, order, want)
		}
		for i, n := range want {
			if title, ok := got[n]; ok && title != titles[tt.skip+i] {
				t.Errorf("%s: %s is called %q, and %q in install's messages", tt.page, n, title, titles[tt.skip+i])
			}
		}
	}
}

func TestDefaultPaths(t *testing.T) {
	home := installHome(t)
	want := map[string]string{
		"claude-desktop": ".config/Claude/claude_desktop_config.json",
		"claude-code":    ".claude.json",
		"cursor":         ".cursor/mcp.json",
		"vscode":         ".config/Code/User/mcp.json",
		"windsurf":       ".codeium/windsurf/mcp_config.json",
		"gemini":         ".gemini/settings.json",
		"codex":          ".codex/config.toml",
	}
	if isDarwin {
		want["claude-desktop"] = "Library/Application Support/Claude/claude_desktop_config.json"
		want["vscode"] = "Library/Application Support/Code/User/mcp.json"
	}
	for name, rel := range want {
		if got := configPathOf(t, name); got != filepath.Join(home, rel) {
			t.Errorf("%s: %s, want $HOME/%s", name, got, rel)
		}
	}
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(home, "cc"))
	if got := configPathOf(t, "claude-code"); got != filepath.Join(home, "cc", ".claude.json") {
		t.Errorf("claude-code with CLAUDE_CONFIG_DIR: %s", got)
	}
	t.Setenv("CODEX_HOME", filepath.Join(home, "cx"))
	if got := configPathOf(t, "codex"); got != filepath.Join(home, "cx", "config.toml") {
		t.Errorf("codex with CODEX_HOME: %s", got)
	}
	if !isDarwin {
		t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "xdg"))
		if got := configPathOf(t, "vscode"); got != filepath.Join(home, "xdg", "Code", "User", "mcp.json") {
			t.Errorf("vscode with XDG_CONFIG_HOME: %s", got)
		}
	}
}

const isDarwin = runtime.GOOS == "darwin"

func TestHomebrewOpt(t *testing.T) {
	prefix := t.TempDir()
	cellar := filepath.Join(prefix, "Cellar", "tairseach-mcp", "1.2.3", "bin", "tairseach-mcp")
	writeFixture(t, cellar, "")
	if got := homebrewOpt(cellar); got != cellar {
		t.Errorf("without an opt link: %s, want the Cellar path", got)
	}
	if err := os.MkdirAll(filepath.Join(prefix, "opt"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "Cellar", "tairseach-mcp", "1.2.3"), filepath.Join(prefix, "opt", "tairseach-mcp")); err != nil {
		t.Fatal(err)
	}
	if got, want := homebrewOpt(cellar), filepath.Join(prefix, "opt", "tairseach-mcp", "bin", "tairseach-mcp"); got != want {
		t.Errorf("with an opt link: %s, want %s", got, want)
	}
	for _, p := range []string{"/usr/local/bin/tairseach-mcp", filepath.Join(prefix, "Cellar", "x", "bin", "tairseach-mcp")} {
		if got := homebrewOpt(p); got != p {
			t.Errorf("homebrewOpt(%s) = %s", p, got)
		}
	}
}
