package install

// Tests of where install finds each client's file and this binary.

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// tempHome is a temporary HOME, and no variable that moves a client's file.
func tempHome(t *testing.T) string {
	t.Helper()
	h := t.TempDir()
	t.Setenv("HOME", h)
	for _, v := range []string{"XDG_CONFIG_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "OPENCLAW_CONFIG_PATH", "OPENCLAW_STATE_DIR", "OPENCLAW_HOME"} {
		t.Setenv(v, "")
	}
	return h
}

func configPathOf(t *testing.T, name string) string {
	t.Helper()
	c, err := Find(name)
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.DefaultPath()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func writeFixture(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDefaultPaths(t *testing.T) {
	home := tempHome(t)
	want := map[string]string{
		"claude-desktop": ".config/Claude/claude_desktop_config.json",
		"claude-code":    ".claude.json",
		"cursor":         ".cursor/mcp.json",
		"vscode":         ".config/Code/User/mcp.json",
		"windsurf":       ".codeium/windsurf/mcp_config.json",
		"gemini":         ".gemini/settings.json",
		"openclaw":       ".openclaw/openclaw.json",
		"codex":          ".codex/config.toml",
	}
	if isDarwin {
		want["claude-desktop"] = "Library/Application Support/Claude/claude_desktop_config.json"
		want["vscode"] = "Library/Application Support/Code/User/mcp.json"
	}
	for _, c := range Clients {
		if _, ok := want[c.Name]; !ok {
			t.Errorf("client %s: no file to expect; add it to want in TestDefaultPaths", c.Name)
		}
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
