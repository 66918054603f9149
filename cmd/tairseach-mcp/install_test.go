package main

// Tests of install and uninstall: each client's file under a temporary
// HOME, before and after, as golden files in testdata/install.

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/geilt/tairseach-mcp/cmd/tairseach-mcp/internal/install"
	"github.com/geilt/tairseach-mcp/internal/clientconfig"
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
	for _, v := range []string{"OPENCLAW_CONFIG_PATH", "OPENCLAW_STATE_DIR", "OPENCLAW_HOME"} {
		t.Setenv(v, "")
	}
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
	"mcp.servers": `// OpenClaw
{
  "agents": {"defaults": {"workspace": "~/work"}},
  "mcp": {
    "servers": {
      "github": {
        "command": "npx",
        "args": ["-y", "@modelcontextprotocol/server-github"],
        "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"}, // from the environment
      },
    },
  },
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

// fixture is fixtures' file for c's Key. A client whose Key has none fails
// here, not later over an empty file.
func fixture(t *testing.T, c install.Client) string {
	t.Helper()
	f, ok := fixtures[c.Key]
	if !ok {
		t.Fatalf("client %s: no fixture for its key %q; add to fixtures in install_test.go a %s file of %s's with another server under %q", c.Name, c.Key, c.Format.Name, c.Title, c.Key)
	}
	return f
}

// exePath is what os.Executable resolves to in this test process.
func exePath(t *testing.T) string {
	exe, err := install.Executable()
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
	c, err := install.Find(name)
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

// TestInstallClients installs into a missing file and into a file with
// another server, runs it again, and uninstalls, for every client.
func TestInstallClients(t *testing.T) {
	for _, c := range install.Clients {
		t.Run(c.Name, func(t *testing.T) {
			t.Run("fresh", func(t *testing.T) {
				home := installHome(t)
				path := configPathOf(t, c.Name)
				args := append(slices.Clone(fixedFlags), "install", c.Name)
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
				checkGolden(t, filepath.Join("install", c.Name+"_fresh"), installGolden(t, home, "", args, stdout, stderr, code, filepath.Dir(path)))
			})

			t.Run("merge, again, uninstall", func(t *testing.T) {
				home := installHome(t)
				path := configPathOf(t, c.Name)
				dir := filepath.Dir(path)
				before := fixture(t, c)
				writeFixture(t, path, before)
				args := append(slices.Clone(fixedFlags), "install", c.Name)
				stdout, stderr, code := cli("", args...)
				if code != 0 {
					t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
				}
				if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
					t.Errorf("the file's mode was not kept: %v %v", fi.Mode(), err)
				}
				checkGolden(t, filepath.Join("install", c.Name+"_merge"), installGolden(t, home, before, args, stdout, stderr, code, dir))

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
				uargs := []string{"uninstall", c.Name}
				stdout, stderr, code = cli("", uargs...)
				if code != 0 {
					t.Fatalf("uninstall: exit %d\n%s%s", code, stdout, stderr)
				}
				if after, _ := os.ReadFile(path); string(after) != before {
					t.Errorf("uninstall did not restore the file:\n%s\nwant\n%s", after, before)
				}
				checkGolden(t, filepath.Join("install", c.Name+"_uninstall"), installGolden(t, home, string(installed), uargs, stdout, stderr, code, dir))

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
	for _, c := range install.Clients {
		if !c.HTTP {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			home := installHome(t)
			tokenFile := filepath.Join(home, "token")
			if err := os.WriteFile(tokenFile, []byte("0123456789abcdef0123456789abcdef\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			path := configPathOf(t, c.Name)
			args := append(slices.Clone(fixedFlags), "--transport", "http", "--listen", "0.0.0.0:9876", "--auth-token-file", tokenFile, "install", c.Name)
			stdout, stderr, code := cli("", args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
			}
			checkGolden(t, filepath.Join("install", c.Name+"_http"), installGolden(t, home, "", args, stdout, stderr, code, filepath.Dir(path)))
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
		var got, wanted any
		if json.Unmarshal(b, &got) != nil || json.Unmarshal([]byte(want), &wanted) != nil || !reflect.DeepEqual(got, wanted) || strings.Count(string(b), `"tairseach":`) != 1 {
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
		for _, p := range []string{path, path + clientconfig.BackupSuffix} {
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: mode %v, %v; want 0600", p, fi.Mode().Perm(), err)
			}
		}
	})

	t.Run("unknown client", func(t *testing.T) {
		installHome(t)
		_, stderr, code := cli("", "install", "emacs")
		if code != 2 || !strings.Contains(stderr, "claude-desktop, claude-code, cursor, vscode, windsurf, gemini, openclaw, codex") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
}
