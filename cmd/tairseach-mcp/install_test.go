package main

// Tests of install and uninstall: each client's file under a temporary
// HOME, before and after, as golden files in testdata/install.

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tailscale/hujson"
)

// installHome is a temporary HOME with no TAIRSEACH_* settings.
func installHome(t *testing.T) string {
	t.Helper()
	cleanEnv(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("TAIRSEACH_MCP_TOKEN", "")
	t.Setenv("TAIRSEACH_MCP_CALL_TIMEOUT", "")
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("CODEX_HOME", "")
	return home
}

// fixtures are client files with another server and settings of their own,
// in an order that is not alphabetical.
var fixtures = map[string]string{
	"mcpServers": `{
  "theme": "dark",
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_x"}
    }
  },
  "numStartups": 12,
  "alpha": {"nested": [1, 2, {"b": null}]}
}
`,
	"servers": `{
  "servers": {
    "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"}
  },
  "inputs": []
}
`,
	"mcp_servers": `# Codex
model = "o3"

[mcp_servers.github]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github"]
env = { GITHUB_PERSONAL_ACCESS_TOKEN = "ghp_x" }

[profiles.fast]
model = "o4-mini"
`,
}

// exePath is what os.Executable resolves to in this test process.
func exePath(t *testing.T) string {
	exe, err := executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// dirSnapshot is every file in dir: name → content, and mtimes.
func dirSnapshot(t *testing.T, dir string) (files map[string]string, mtimes map[string]time.Time) {
	t.Helper()
	files, mtimes = map[string]string{}, map[string]time.Time{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := e.Info()
		files[e.Name()] = string(b)
		mtimes[e.Name()] = fi.ModTime()
	}
	return files, mtimes
}

// installGolden is the golden text of one run: the file before, the
// command's transcript, and every file of the directory after.
func installGolden(t *testing.T, home, before string, args []string, stdout, stderr string, code int, dir string) string {
	t.Helper()
	var b strings.Builder
	if before == "" {
		before = "(no file)\n"
	}
	fmt.Fprintf(&b, "-- before --\n%s", before)
	b.WriteString(transcript(args, stdout, stderr, code, nil))
	files, _ := dirSnapshot(t, dir)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "-- after: %s --\n%s", n, files[n])
	}
	s := strings.ReplaceAll(b.String(), exePath(t), "$EXE")
	return strings.ReplaceAll(s, home, "$HOME")
}

var fixedFlags = []string{"--manifests", "/srv/tairseach/manifests", "--socket", fixedSocket}

func configPathOf(t *testing.T, name string) string {
	t.Helper()
	c, err := findClient(name)
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.defaultPath()
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

// TestInstallClients installs into a missing file and into a file with
// another server, runs it again, and uninstalls, for every client.
func TestInstallClients(t *testing.T) {
	for _, c := range mcpClients {
		t.Run(c.name, func(t *testing.T) {
			t.Run("fresh", func(t *testing.T) {
				home := installHome(t)
				path := configPathOf(t, c.name)
				args := append(slices.Clone(fixedFlags), "install", c.name)
				stdout, stderr, code := cli("", args...)
				if code != 0 {
					t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
				}
				modes := map[string]os.FileMode{path: 0o600}
				if filepath.Dir(path) != home {
					modes[filepath.Dir(path)] = 0o700
				}
				for p, want := range modes {
					if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
						t.Errorf("%s: %v, mode %v; want %v", p, err, fi.Mode().Perm(), want)
					}
				}
				checkGolden(t, filepath.Join("install", c.name+"_fresh"), installGolden(t, home, "", args, stdout, stderr, code, filepath.Dir(path)))
			})

			t.Run("merge, again, uninstall", func(t *testing.T) {
				home := installHome(t)
				path := configPathOf(t, c.name)
				dir := filepath.Dir(path)
				before := fixtures[c.key]
				writeFixture(t, path, before)
				args := append(slices.Clone(fixedFlags), "install", c.name)
				stdout, stderr, code := cli("", args...)
				if code != 0 {
					t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
				}
				if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
					t.Errorf("the file's mode was not kept: %v %v", fi.Mode(), err)
				}
				checkGolden(t, filepath.Join("install", c.name+"_merge"), installGolden(t, home, before, args, stdout, stderr, code, dir))

				// Again: nothing written, no second backup.
				files, mtimes := dirSnapshot(t, dir)
				time.Sleep(10 * time.Millisecond)
				stdout, stderr, code = cli("", args...)
				if code != 0 || !strings.Contains(stdout, "nothing changed") {
					t.Errorf("second install: exit %d, stdout %q, stderr %q; want nothing changed", code, stdout, stderr)
				}
				files2, mtimes2 := dirSnapshot(t, dir)
				if !maps.Equal(files, files2) || !maps.Equal(mtimes, mtimes2) {
					t.Errorf("second install changed the directory:\nbefore %v\nafter  %v", mtimes, mtimes2)
				}

				// Uninstall: back to the first file, byte for byte; the
				// backup is the one install made.
				installed, _ := os.ReadFile(path)
				uargs := []string{"uninstall", c.name}
				stdout, stderr, code = cli("", uargs...)
				if code != 0 {
					t.Fatalf("uninstall: exit %d\n%s%s", code, stdout, stderr)
				}
				if after, _ := os.ReadFile(path); string(after) != before {
					t.Errorf("uninstall did not restore the file:\n%s\nwant\n%s", after, before)
				}
				checkGolden(t, filepath.Join("install", c.name+"_uninstall"), installGolden(t, home, string(installed), uargs, stdout, stderr, code, dir))

				// Nothing left to remove.
				stdout, stderr, code = cli("", uargs...)
				if code != 0 || !strings.Contains(stdout, "no tairseach entry") {
					t.Errorf("second uninstall: exit %d, stdout %q, stderr %q", code, stdout, stderr)
				}
			})
		})
	}
}

// TestInstallHTTP writes URL entries with the bearer token for the clients
// that take them.
func TestInstallHTTP(t *testing.T) {
	for _, c := range mcpClients {
		if c.urlKey == "" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			home := installHome(t)
			tokenFile := filepath.Join(home, "token")
			if err := os.WriteFile(tokenFile, []byte("0123456789abcdef0123456789abcdef\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			path := configPathOf(t, c.name)
			args := append(slices.Clone(fixedFlags), "--transport", "http", "--listen", "0.0.0.0:9876", "--auth-token-file", tokenFile, "install", c.name)
			stdout, stderr, code := cli("", args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
			}
			checkGolden(t, filepath.Join("install", c.name+"_http"), installGolden(t, home, "", args, stdout, stderr, code, filepath.Dir(path)))
		})
	}
	t.Run("before the server ever ran", func(t *testing.T) {
		// The entry gets the token the server will use: install makes it,
		// 0600, as the server's first start would; --print shows a
		// placeholder and makes nothing.
		home := installHome(t)
		tokenPath := filepath.Join(home, ".tairseach", "mcp-token")
		stdout, stderr, code := cli("", "--transport", "http", "install", "cursor", "--print")
		if code != 0 || !strings.Contains(stdout, `"Authorization": "Bearer <the token in `+tokenPath+`>"`) || !strings.Contains(stderr, "placeholder") {
			t.Errorf("--print: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		if _, err := os.Stat(filepath.Join(home, ".tairseach")); err == nil {
			t.Errorf("--print made %s", filepath.Join(home, ".tairseach"))
		}
		stdout, stderr, code = cli("", "--transport", "http", "install", "cursor")
		b, err := os.ReadFile(tokenPath)
		if code != 0 || err != nil {
			t.Fatalf("exit %d, token file: %v\nstdout:\n%s\nstderr:\n%s", code, err, stdout, stderr)
		}
		written, _ := os.ReadFile(configPathOf(t, "cursor"))
		if token := strings.TrimSpace(string(b)); len(token) != 64 || !strings.Contains(string(written), `"Authorization": "Bearer `+token+`"`) {
			t.Errorf("token %q not in the entry:\n%s", token, written)
		}
		if fi, err := os.Stat(tokenPath); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("token file mode %v, %v; want 0600", fi.Mode().Perm(), err)
		}
	})
	t.Run("token from ~/.tairseach/mcp-token", func(t *testing.T) {
		home := installHome(t)
		writeToken(t, home, "fedcba9876543210fedcba9876543210")
		stdout, stderr, code := cli("", "--transport", "http", "install", "cursor", "--print")
		if code != 0 || !strings.Contains(stdout, `"Authorization": "Bearer fedcba9876543210fedcba9876543210"`) || !strings.Contains(stdout, `"url": "http://127.0.0.1:8765/mcp"`) {
			t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
	})
}

// writeToken writes ~/.tairseach/mcp-token as the server makes it: only the
// owner may read it.
func writeToken(t *testing.T, home, token string) {
	t.Helper()
	dir := filepath.Join(home, ".tairseach")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mcp-token"), []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestInstallCases: the cases one client is enough for.
func TestInstallCases(t *testing.T) {
	t.Run("install_unparseable", func(t *testing.T) {
		home := installHome(t)
		path := configPathOf(t, "claude-desktop")
		before := "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}\n    \"b\": {\"command\": \"y\"}\n  }\n}\n"
		writeFixture(t, path, before)
		args := []string{"install", "claude-desktop"}
		stdout, stderr, code := cli("", args...)
		if code != 1 || !strings.Contains(stderr, path+":4:5: not valid JSON: invalid character") {
			t.Errorf("exit %d, stderr %q: want 1 and a message naming the file, the line and the column", code, stderr)
		}
		checkGolden(t, filepath.Join("install", "install_unparseable"), installGolden(t, home, before, args, stdout, stderr, code, filepath.Dir(path)))
	})

	t.Run("install_unparseable_toml", func(t *testing.T) {
		home := installHome(t)
		path := configPathOf(t, "codex")
		before := "model = \"o3\"\n[mcp_servers.a]\nargs = [\"x\"\n"
		writeFixture(t, path, before)
		args := []string{"install", "codex"}
		stdout, stderr, code := cli("", args...)
		if code != 1 || !strings.Contains(stderr, path+":3:") || !strings.Contains(stderr, "not valid TOML") {
			t.Errorf("exit %d, stderr %q: want 1 and a message naming the file, the line and the column", code, stderr)
		}
		checkGolden(t, filepath.Join("install", "install_unparseable_toml"), installGolden(t, home, before, args, stdout, stderr, code, filepath.Dir(path)))
	})

	t.Run("install_not_an_object", func(t *testing.T) {
		home := installHome(t)
		path := configPathOf(t, "cursor")
		before := "[]\n"
		writeFixture(t, path, before)
		args := []string{"uninstall", "cursor"}
		stdout, stderr, code := cli("", args...)
		if code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
		checkGolden(t, filepath.Join("install", "install_not_an_object"), installGolden(t, home, before, args, stdout, stderr, code, filepath.Dir(path)))
	})

	t.Run("install_print", func(t *testing.T) {
		home := installHome(t)
		path := configPathOf(t, "cursor")
		before := fixtures["mcpServers"]
		writeFixture(t, path, before)
		args := append(slices.Clone(fixedFlags), "install", "cursor", "--print")
		stdout, stderr, code := cli("", args...)
		if code != 0 {
			t.Errorf("exit %d", code)
		}
		checkGolden(t, filepath.Join("install", "install_print"), installGolden(t, home, before, args, stdout, stderr, code, filepath.Dir(path)))
	})

	t.Run("install_env", func(t *testing.T) {
		home := installHome(t)
		t.Setenv("TAIRSEACH_SOCKET", "/run/tairseach-env/tairseach.sock")
		t.Setenv("TAIRSEACH_MANIFESTS", "~/manifests")
		t.Setenv("TAIRSEACH_MCP_CALL_TIMEOUT", "1m")
		path := configPathOf(t, "claude-code")
		args := []string{"--prefix", "ts_", "install", "claude-code"}
		stdout, stderr, code := cli("", args...)
		if code != 0 {
			t.Errorf("exit %d", code)
		}
		checkGolden(t, filepath.Join("install", "install_env"), installGolden(t, home, "", args, stdout, stderr, code, filepath.Dir(path)))
	})

	t.Run("install_http_left_out", func(t *testing.T) {
		home := installHome(t)
		t.Setenv("TAIRSEACH_MCP_LISTEN", "127.0.0.1:9999")
		path := configPathOf(t, "claude-desktop")
		args := append(slices.Clone(fixedFlags), "--transport", "http", "--stateless", "--linger", "install", "claude-desktop")
		stdout, stderr, code := cli("", args...)
		if code != 0 {
			t.Errorf("exit %d", code)
		}
		got, _ := os.ReadFile(path)
		for _, bad := range []string{"transport", "listen", "stateless", "linger"} {
			if strings.Contains(string(got), bad) {
				t.Errorf("the stdio entry carries %s:\n%s", bad, got)
			}
		}
		checkGolden(t, filepath.Join("install", "install_http_left_out"), installGolden(t, home, "", args, stdout, stderr, code, filepath.Dir(path)))
	})

	t.Run("uninstall_missing_file", func(t *testing.T) {
		installHome(t)
		stdout, stderr, code := cli("", "uninstall", "windsurf")
		if code != 0 || !strings.Contains(stdout, "does not exist; no tairseach entry to remove") {
			t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		if _, err := os.Stat(configPathOf(t, "windsurf")); err == nil {
			t.Error("uninstall created the file")
		}
	})

	t.Run("changed flags: updated, and the one backup kept", func(t *testing.T) {
		installHome(t)
		path := configPathOf(t, "cursor")
		writeFixture(t, path, fixtures["mcpServers"])
		for _, prefix := range []string{"a_", "b_", "c_"} {
			if _, stderr, code := cli("", "--prefix", prefix, "install", "cursor"); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
		}
		if _, stderr, code := cli("", "uninstall", "cursor"); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		files, _ := dirSnapshot(t, filepath.Dir(path))
		if len(files) != 2 || files["mcp.json"+backupSuffix] != fixtures["mcpServers"] || files["mcp.json"] != fixtures["mcpServers"] {
			t.Errorf("want mcp.json as it was and one backup of it; files: %v", files)
		}
	})

	t.Run("--config through a symlink", func(t *testing.T) {
		home := installHome(t)
		real := filepath.Join(home, "dotfiles", "claude.json")
		writeFixture(t, real, "{}")
		link := filepath.Join(home, "link.json")
		if err := os.Symlink(real, link); err != nil {
			t.Fatal(err)
		}
		if _, stderr, code := cli("", "install", "claude-desktop", "--config", link); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("the symlink was replaced: %v %v", fi.Mode(), err)
		}
		if b, _ := os.ReadFile(real); !strings.Contains(string(b), `"tairseach"`) {
			t.Errorf("the linked file was not written:\n%s", b)
		}
	})

	t.Run("config claude prints what install --print would write", func(t *testing.T) {
		installHome(t)
		writeFixture(t, configPathOf(t, "claude-desktop"), fixtures["mcpServers"])
		a, _, c1 := cli("", append(slices.Clone(fixedFlags), "config", "claude")...)
		b, _, c2 := cli("", append(slices.Clone(fixedFlags), "install", "claude-desktop", "--print")...)
		if c1 != 0 || c2 != 0 || a != b || !strings.Contains(a, `"github"`) || !strings.Contains(a, `"--socket=`+fixedSocket+`"`) {
			t.Errorf("config claude (exit %d):\n%s\ninstall --print (exit %d):\n%s", c1, a, c2, b)
		}
	})

	t.Run("duplicate entries: the one a parser keeps is updated, the others go", func(t *testing.T) {
		installHome(t)
		path := configPathOf(t, "cursor")
		writeFixture(t, path, `{"mcpServers": {"tairseach": {"command": "/old/one"}, "x": {"command": "y"}, "tairseach": {"command": "/old/two"}}}`)
		for range 2 {
			if _, stderr, code := cli("", "install", "cursor"); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
		}
		b, _ := os.ReadFile(path)
		want := `{"mcpServers": {"x": {"command": "y"}, "tairseach": {"command": "` + exePath(t) + `","args":[]}}}`
		if !sameJSON(b, []byte(want)) || strings.Count(string(b), `"tairseach":`) != 1 {
			t.Errorf("want x, then one new tairseach entry:\n%s", b)
		}
	})

	t.Run("a token tightens a file others can read", func(t *testing.T) {
		home := installHome(t)
		writeToken(t, home, "fedcba9876543210fedcba9876543210")
		path := configPathOf(t, "windsurf")
		writeFixture(t, path, "{}\n") // 0644
		_, stderr, code := cli("", "--transport", "http", "install", "windsurf")
		if code != 0 || !strings.Contains(stderr, "now 0600") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
		for _, p := range []string{path, path + backupSuffix} {
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: mode %v, %v; want 0600", p, fi.Mode().Perm(), err)
			}
		}
	})

	t.Run("unknown client", func(t *testing.T) {
		installHome(t)
		_, stderr, code := cli("", "install", "emacs")
		if code != 2 || !strings.Contains(stderr, "claude-desktop, claude-code, cursor, vscode, windsurf, gemini, codex") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
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

func TestParseJSONFile(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"a":1,"a":2}`, ""},
		{``, ""},
		{"  \n", ""},
		{"{\n  // comment\n  \"a\": [1, 2,],\n}", ""},
		{`{"a":1} {}`, "1:9: invalid character '{' after top-level value"},
		{`{"a":1`, "1:7: the file ends inside a value"},
		{`"x"`, "the top level is a string"},
		{`null`, "the top level is null"},
		{"{\n  \"a\": 1\n  \"b\": 2\n}", "3:3: invalid character '\"' after object value"},
		{"{\n  /* open", "2:3: the file ends inside a value"},
	} {
		_, err := parseJSONFile([]byte(tt.in), "mcpServers")
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("parseJSONFile(%q) = %v, want %q", tt.in, err, tt.want)
		}
	}
}

const isDarwin = runtime.GOOS == "darwin"

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
			if backup, _ := os.ReadFile(path + backupSuffix); string(backup) != rt.file {
				t.Errorf("the backup is not the file before the first change:\n%s", backup)
			}
			s := strings.ReplaceAll(b.String(), exePath(t), "$EXE")
			checkGolden(t, filepath.Join("install", "roundtrip_"+rt.name), strings.ReplaceAll(s, home, "$HOME"))
		})
	}
}

// TestJSONLayouts adds the entry to server maps laid out every way, and
// takes it out again.
func TestJSONLayouts(t *testing.T) {
	entry := []byte(`{"command":"/bin/ts","args":["--a"]}`)
	for _, tt := range []struct {
		in, installed string
		back          string // after uninstall, when not in
	}{
		{in: `{"mcpServers": {}}`, installed: `{"mcpServers": {"tairseach": {"command": "/bin/ts", "args": ["--a"]}}}`},
		{in: `{"mcpServers": {"a": 1}}`, installed: `{"mcpServers": {"a": 1, "tairseach": {"command": "/bin/ts", "args": ["--a"]}}}`},
		{in: `{"mcpServers":{"a":1}}`, installed: `{"mcpServers":{"a":1,"tairseach": {"command": "/bin/ts", "args": ["--a"]}}}`},
		{in: "{\n  \"mcpServers\": {}\n}\n", installed: "{\n  \"mcpServers\": {\n    \"tairseach\": {\n      \"command\": \"/bin/ts\",\n      \"args\": [\n        \"--a\"\n      ]\n    }\n  }\n}\n"},
		{
			in:        "{\n  \"mcpServers\": {\n  }\n}\n",
			installed: "{\n  \"mcpServers\": {\n    \"tairseach\": {\n      \"command\": \"/bin/ts\",\n      \"args\": [\n        \"--a\"\n      ]\n    }\n  }\n}\n",
			back:      "{\n  \"mcpServers\": {}\n}\n",
		},
		{
			in:        "{\n  \"other\": true\n}",
			installed: "{\n  \"other\": true,\n  \"mcpServers\": {\n    \"tairseach\": {\n      \"command\": \"/bin/ts\",\n      \"args\": [\n        \"--a\"\n      ]\n    }\n  }\n}",
			back:      "{\n  \"other\": true,\n  \"mcpServers\": {}\n}", // the map install made stays, empty
		},
		{
			in:        "{\n\t\"mcpServers\": {\n\t\t\"a\": 1, // one\n\n\t\t// the end\n\t},\n}\n",
			installed: "{\n\t\"mcpServers\": {\n\t\t\"a\": 1, // one\n\n\t\t// the end\n\t\t\"tairseach\": {\n\t\t\t\"command\": \"/bin/ts\",\n\t\t\t\"args\": [\n\t\t\t\t\"--a\"\n\t\t\t]\n\t\t},\n\t},\n}\n",
		},
		{
			in:        "{\n  \"mcpServers\": {\n    \"a\": 1,\n  },\n}",
			installed: "{\n  \"mcpServers\": {\n    \"a\": 1,\n    \"tairseach\": {\n      \"command\": \"/bin/ts\",\n      \"args\": [\n        \"--a\"\n      ]\n    },\n  },\n}",
		},
		{
			in:        "{\n  \"mcpServers\": {\n    \"a\": 1}}",
			installed: "{\n  \"mcpServers\": {\n    \"a\": 1,\n    \"tairseach\": {\n      \"command\": \"/bin/ts\",\n      \"args\": [\n        \"--a\"\n      ]\n    }}}",
		},
		{
			in:        "{\r\n  \"mcpServers\": {\r\n    \"a\": 1\r\n  }\r\n}\r\n",
			installed: "{\r\n  \"mcpServers\": {\r\n    \"a\": 1,\r\n    \"tairseach\": {\r\n      \"command\": \"/bin/ts\",\r\n      \"args\": [\r\n        \"--a\"\r\n      ]\r\n    }\r\n  }\r\n}\r\n",
		},
		{
			in:        "{\n  \"mcpServers\": { // none yet\n  }\n}\n",
			installed: "{\n  \"mcpServers\": { // none yet\n    \"tairseach\": {\n      \"command\": \"/bin/ts\",\n      \"args\": [\n        \"--a\"\n      ]\n    }\n  }\n}\n",
		},
		{
			in:        "{\"mcpServers\": null}",
			installed: "{\"mcpServers\": {\"tairseach\": {\"command\": \"/bin/ts\", \"args\": [\"--a\"]}}}",
			back:      "{\"mcpServers\": {}}",
		},
	} {
		f, err := parseJSONFile([]byte(tt.in), "mcpServers")
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		if err := f.set(entry); err != nil {
			t.Errorf("%q: set: %v", tt.in, err)
			continue
		}
		if got := string(f.bytes()); got != tt.installed {
			t.Errorf("install into %q:\n got %q\nwant %q", tt.in, got, tt.installed)
			continue
		}
		f, err = parseJSONFile([]byte(tt.installed), "mcpServers")
		if err != nil {
			t.Fatal(err)
		}
		if found, same, err := f.entry(entry); !found || !same || err != nil {
			t.Errorf("%q: entry() = %v, %v, %v after install", tt.in, found, same, err)
		}
		if err := f.remove(); err != nil {
			t.Fatal(err)
		}
		want := tt.in
		if tt.back != "" {
			want = tt.back
		}
		if got := string(f.bytes()); got != want {
			t.Errorf("uninstall from %q:\n got %q\nwant %q", tt.installed, got, want)
		}
	}
}

// TestTOMLFile edits Codex files laid out every way, and refuses those
// whose entry it cannot edit by its table.
func TestTOMLFile(t *testing.T) {
	entry := serverEntry{command: `/opt/t "s"\bin`, args: []string{"--a=b\tc", "é"}}
	block := tomlEntry("mcp_servers", entry, "url")
	const want = "[mcp_servers.tairseach]\ncommand = \"/opt/t \\\"s\\\"\\\\bin\"\nargs = [\"--a=b\\tc\", \"é\"]\n"
	if string(block) != want {
		t.Fatalf("tomlEntry:\n%s\nwant\n%s", block, want)
	}
	doc, err := decodeTOML(block)
	if err != nil {
		t.Fatal(err)
	}
	if got := doc["mcp_servers"].(map[string]any)["tairseach"].(map[string]any)["command"]; got != entry.command {
		t.Errorf("command decodes as %q", got)
	}

	for _, tt := range []struct{ name, in, installed, removed string }{
		{name: "empty", in: "", installed: want, removed: ""},
		{name: "round trip", in: "a = 1\n", installed: "a = 1\n\n" + want, removed: "a = 1\n"},
		{name: "no final line break", in: "a = 1", installed: "a = 1\n\n" + strings.TrimSuffix(want, "\n"), removed: "a = 1"},
		{
			name:      "CRLF",
			in:        "a = 1\r\n",
			installed: "a = 1\r\n\r\n" + strings.ReplaceAll(want, "\n", "\r\n"),
			removed:   "a = 1\r\n",
		},
		{
			name:      "old entry with a subtable, between others",
			in:        "a = 1\n\n[mcp_servers.tairseach] # ours\ncommand = \"old\"\n\n[mcp_servers.tairseach.env]\nX = \"y\"\n\n# the next one\n[b]\nc = [\n  2,\n]\n",
			installed: "a = 1\n\n" + want + "\n# the next one\n[b]\nc = [\n  2,\n]\n",
			removed:   "a = 1\n\n# the next one\n[b]\nc = [\n  2,\n]\n",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parseTOMLFile([]byte(tt.in), "mcp_servers")
			if err != nil {
				t.Fatal(err)
			}
			if err := f.set(block); err != nil {
				t.Fatal(err)
			}
			if got := string(f.bytes()); got != tt.installed {
				t.Fatalf("installed:\n%q\nwant\n%q", got, tt.installed)
			}
			if f, err = parseTOMLFile(f.bytes(), "mcp_servers"); err != nil {
				t.Fatal(err)
			}
			if found, same, err := f.entry(block); !found || !same || err != nil {
				t.Errorf("entry() = %v, %v, %v after install", found, same, err)
			}
			if err := f.remove(); err != nil {
				t.Fatal(err)
			}
			if got := string(f.bytes()); got != tt.removed {
				t.Errorf("removed:\n%q\nwant\n%q", got, tt.removed)
			}
		})
	}

	for _, tt := range []struct{ name, in, setErr, removeErr string }{
		{name: "inline server map", in: "mcp_servers = { a = { command = \"x\" } }\n", setErr: "add it by hand"},
		{name: "inline entry", in: "[mcp_servers]\ntairseach = { command = \"x\" }\n", setErr: "add it by hand", removeErr: "remove it by hand"},
		{name: "dotted entry", in: "mcp_servers.tairseach.command = \"x\"\n", setErr: "add it by hand", removeErr: "remove it by hand"},
		{name: "array of tables", in: "[[mcp_servers.tairseach]]\ncommand = \"x\"\n", setErr: "add it by hand", removeErr: "remove it by hand"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parseTOMLFile([]byte(tt.in), "mcp_servers")
			if err != nil {
				t.Fatal(err)
			}
			if err := f.set(block); err == nil || !strings.Contains(err.Error(), tt.setErr) {
				t.Errorf("set: %v, want %q", err, tt.setErr)
			}
			if tt.removeErr != "" {
				if err := f.remove(); err == nil || !strings.Contains(err.Error(), tt.removeErr) {
					t.Errorf("remove: %v, want %q", err, tt.removeErr)
				}
			}
			if string(f.bytes()) != tt.in {
				t.Errorf("the file changed:\n%s", f.bytes())
			}
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
	for _, c := range mcpClients {
		for _, existing := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, file %v", c.name, existing), func(t *testing.T) {
				home := installHome(t)
				path := configPathOf(t, c.name)
				if existing {
					writeFixture(t, path, fixtures[c.key])
					if _, stderr, code := cli("", "install", c.name); code != 0 { // an entry for uninstall to take out
						t.Fatalf("exit %d: %s", code, stderr)
					}
				}
				before := homeSnapshot(t, home)
				runs := [][]string{
					append(slices.Clone(fixedFlags), "--prefix", "p_", "install", c.name, "--print"),
					{"--transport", "http", "install", c.name, "--print"},
					{"uninstall", c.name, "--print"},
				}
				if c.name == "claude-desktop" {
					runs = append(runs, []string{"config", "claude"})
				}
				for _, args := range runs {
					stdout, stderr, code := cli("", args...)
					if code != 0 {
						t.Fatalf("%v: exit %d\n%s%s", args, code, stdout, stderr)
					}
					if args[0] == "--transport" && c.urlKey != "" && !strings.Contains(stdout, "<the token in "+filepath.Join(home, ".tairseach", "mcp-token")+">") {
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

// FuzzJSONFile: whatever the file, install and uninstall never panic,
// write a file that parses with the entry as meant, and leave the rest's
// values as they were; a non-empty server map without the entry comes back
// byte for byte.
func FuzzJSONFile(f *testing.F) {
	for _, s := range fixtures {
		f.Add(s)
	}
	for _, rt := range roundTrips {
		f.Add(rt.file)
	}
	f.Add("{\n  \"mcpServers\": {\"a\": 1,}, // x\n}")
	f.Add("{\"mcpServers\": {\"tairseach\": 1, \"tairseach\": 2}}")
	entry := []byte(`{"command":"/bin/ts","args":["--a"]}`)
	f.Fuzz(func(t *testing.T, in string) {
		for _, key := range []string{"mcpServers", "servers"} {
			jf, err := parseJSONFile([]byte(in), key)
			if err != nil {
				return
			}
			_, obj, err := jf.servers()
			if err != nil {
				return
			}
			exact := obj != nil && len(obj.Members) > 0 && lastMember(obj, entryName) < 0
			if err := jf.set(entry); err != nil {
				t.Fatalf("set: %v", err)
			}
			installed := jf.bytes()
			jf, err = parseJSONFile(installed, key)
			if err != nil {
				t.Fatalf("the installed file does not parse: %v\n%s", err, installed)
			}
			if found, same, err := jf.entry(entry); !found || !same || err != nil {
				t.Fatalf("entry() = %v, %v, %v:\n%s", found, same, err, installed)
			}
			if err := jf.remove(); err != nil {
				t.Fatal(err)
			}
			back := jf.bytes()
			if exact && string(back) != in {
				t.Fatalf("not restored byte for byte:\n%q\ninstalled\n%q\nback\n%q", in, installed, back)
			}
			if _, err := parseJSONFile(back, key); err != nil {
				t.Fatalf("the uninstalled file does not parse: %v\n%s", err, back)
			}
			if strings.TrimSpace(in) != "" && !sameJSON(valuesWithout(t, []byte(in), key), valuesWithout(t, back, key)) {
				t.Fatalf("values changed:\n%s\nback\n%s", in, back)
			}
		}
	})
}

// valuesWithout is a JSONC file as standard JSON, without the entry and
// without a server map left empty.
func valuesWithout(t *testing.T, data []byte, key string) []byte {
	std, err := hujson.Standardize(slices.Clone(data))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(std, &doc); err != nil {
		t.Fatalf("%v\n%s", err, std)
	}
	if servers, ok := doc[key].(map[string]any); ok {
		delete(servers, entryName)
		if len(servers) == 0 {
			delete(doc, key)
		}
	} else if doc[key] == nil {
		delete(doc, key)
	}
	b, _ := json.Marshal(doc)
	return b
}

// FuzzTOMLFile: whatever the file, install and uninstall never panic and
// write only what decodes as meant; a file without the entry comes back
// byte for byte.
func FuzzTOMLFile(f *testing.F) {
	f.Add(fixtures["mcp_servers"])
	f.Add(roundTrips[2].file)
	f.Add("a = 1\r\n[mcp_servers.tairseach]\r\ncommand = \"x\"\r\n[b]\r\n")
	f.Add("[mcp_servers]\ntairseach = { command = \"x\" }\n")
	block := tomlEntry("mcp_servers", serverEntry{command: "/bin/ts", args: []string{"--a"}}, "url")
	f.Fuzz(func(t *testing.T, in string) {
		tf, err := parseTOMLFile([]byte(in), "mcp_servers")
		if err != nil {
			return
		}
		_, had := tf.servers()[entryName]
		if err := tf.set(block); err != nil {
			if string(tf.bytes()) != in {
				t.Fatalf("a refused set changed the file")
			}
			return
		}
		installed := tf.bytes()
		if tf, err = parseTOMLFile(installed, "mcp_servers"); err != nil {
			t.Fatalf("the installed file does not parse: %v\n%s", err, installed)
		}
		if found, same, err := tf.entry(block); !found || !same || err != nil {
			t.Fatalf("entry() = %v, %v, %v:\n%s", found, same, err, installed)
		}
		if err := tf.remove(); err != nil {
			t.Fatalf("remove after set: %v\n%s", err, installed)
		}
		if back := tf.bytes(); !had && string(back) != in {
			t.Fatalf("not restored byte for byte:\n%q\ninstalled\n%q\nback\n%q", in, installed, back)
		}
	})
}
