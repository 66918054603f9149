package main

// Install run again over an entry the user has added settings to: it
// changes the members it owns and keeps every other one, byte for byte.

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
	"github.com/tailscale/hujson"

	"github.com/geilt/tairseach-mcp/cmd/tairseach-mcp/internal/install"
	"github.com/geilt/tairseach-mcp/internal/clientconfig"
)

// testToken is the token of the HTTP runs of keeps, in $HOME/token.
const testToken = "0123456789abcdef0123456789abcdef"

var httpFlags = []string{"--transport", "http", "--listen", "127.0.0.1:9876", "--auth-token-file", "$HOME/token"}

type keep struct {
	client string
	before string
	args   []string
	kept   []string
}

// keeps are client files whose tairseach entry, written by an earlier
// install, holds settings the user added, as each client documents them;
// and the flags of an install run again, which changes the entry's form
// or its arguments. kept is the user's text that must stay as it was.
var keeps = []keep{
	{
		client: "claude-desktop", // stdio, other flags
		args:   append(slices.Clone(fixedFlags), "--prefix", "ts_"),
		before: `{
  "mcpServers": {
    "tairseach": {
      "command": "/old/bin/tairseach-mcp",
      "args": ["--socket=/old/tairseach.sock"],
      "env": {"TAIRSEACH_LOG_LEVEL": "debug"},
      "disabled": true
    },
    "weather": {"command": "uvx", "args": ["mcp-weather"]}
  },
  "globalShortcut": "Alt+Space"
}
`,
		kept: []string{`"env": {"TAIRSEACH_LOG_LEVEL": "debug"},` + "\n      \"disabled\": true\n    },", `"weather": {"command": "uvx", "args": ["mcp-weather"]}`},
	},
	{
		client: "claude-code", // stdio to HTTP
		args:   httpFlags,
		before: `{
  "numStartups": 41,
  "mcpServers": {
    "tairseach": {
      "type": "stdio",
      "command": "/old/bin/tairseach-mcp",
      "args": [],
      "env": {
        "TAIRSEACH_LOG_LEVEL": "debug"
      },
      "disabled": true
    }
  },
  "projects": {"/Users/you/src": {"allowedTools": []}}
}
`,
		kept: []string{"      \"env\": {\n        \"TAIRSEACH_LOG_LEVEL\": \"debug\"\n      },\n      \"disabled\": true\n"},
	},
	{
		client: "cursor", // HTTP, another address and token; a header of the user's
		args:   httpFlags,
		before: `{
  "mcpServers": {
    "tairseach": {
      "url": "http://127.0.0.1:8765/mcp",
      "headers": {
        "Authorization": "Bearer fedcba9876543210fedcba9876543210",
        "X-Team": "platform"
      },
      "env": {"A": "b"},
      "disabled": false
    }
  }
}
`,
		kept: []string{"        \"X-Team\": \"platform\"\n      },\n      \"env\": {\"A\": \"b\"},\n      \"disabled\": false\n"},
	},
	{
		client: "vscode", // stdio, other flags; JSONC
		args:   fixedFlags,
		before: `{
	"servers": {
		"tairseach": {
			"type": "stdio",
			"command": "/old/bin/tairseach-mcp",
			"args": ["--manifests=/old/manifests"],
			// mine
			"env": {"TAIRSEACH_LOG_LEVEL": "debug"},
			"envFile": "${workspaceFolder}/.env",
			"dev": {"watch": "src/**/*.go", "debug": {"type": "go"}},
		},
	},
	"inputs": [],
}
`,
		kept: []string{"\t\t\t// mine\n\t\t\t\"env\": {\"TAIRSEACH_LOG_LEVEL\": \"debug\"},\n\t\t\t\"envFile\": \"${workspaceFolder}/.env\",\n\t\t\t\"dev\": {\"watch\": \"src/**/*.go\", \"debug\": {\"type\": \"go\"}},\n\t\t},\n\t},\n\t\"inputs\": [],\n}\n"},
	},
	{
		client: "windsurf", // HTTP to stdio
		args:   fixedFlags,
		before: `{
  "mcpServers": {
    "tairseach": {
      "serverUrl": "http://127.0.0.1:8765/mcp",
      "headers": {"Authorization": "Bearer fedcba9876543210fedcba9876543210"},
      "disabled": true,
      "disabledTools": ["tairseach_contacts_delete"],
      "env": {"A": "b"}
    }
  }
}
`,
		kept: []string{"      \"disabled\": true,\n      \"disabledTools\": [\"tairseach_contacts_delete\"],\n      \"env\": {\"A\": \"b\"}\n"},
	},
	{
		client: "gemini", // stdio to HTTP
		args:   httpFlags,
		before: `{
  "theme": "GitHub",
  "mcpServers": {
    "tairseach": {
      "command": "/old/bin/tairseach-mcp",
      "args": [],
      "cwd": "/Users/you/src",
      "env": {"TAIRSEACH_LOG_LEVEL": "debug"},
      "timeout": 30000,
      "trust": true,
      "includeTools": ["tairseach_contacts_search", "tairseach_contacts_delete"],
      "excludeTools": ["tairseach_contacts_delete"]
    }
  }
}
`,
		kept: []string{"      \"cwd\": \"/Users/you/src\",\n      \"env\": {\"TAIRSEACH_LOG_LEVEL\": \"debug\"},\n      \"timeout\": 30000,\n      \"trust\": true,\n      \"includeTools\": [\"tairseach_contacts_search\", \"tairseach_contacts_delete\"],\n      \"excludeTools\": [\"tairseach_contacts_delete\"]\n"},
	},
	{
		client: "openclaw", // HTTP to stdio, in OpenClaw's JSON5 with comments and trailing commas
		args:   fixedFlags,
		before: `// OpenClaw
{
  "agents": {"defaults": {"workspace": "~/work"}},
  "mcp": {
    "servers": {
      // tairseach, from install; the rest is mine
      "tairseach": {
        "url": "http://127.0.0.1:8765/mcp",
        "transport": "streamable-http",
        "headers": {"Authorization": "Bearer ${TAIRSEACH_MCP_TOKEN}"},
        "requestTimeoutMs": 20000, // slow calls
        "toolFilter": {"exclude": ["tairseach_screen_*"]},
      },
    },
  },
}
`,
		kept: []string{
			"// OpenClaw\n{\n  \"agents\": {\"defaults\": {\"workspace\": \"~/work\"}},\n  \"mcp\": {\n    \"servers\": {\n      // tairseach, from install; the rest is mine\n      \"tairseach\": {\n",
			"\"requestTimeoutMs\": 20000, // slow calls\n        \"toolFilter\": {\"exclude\": [\"tairseach_screen_*\"]},\n      },\n    },\n  },\n}\n",
		},
	},
	{
		client: "codex", // stdio to HTTP
		args:   httpFlags,
		before: `model = "gpt-5-codex"

# tairseach, from install; the rest is mine
[mcp_servers.tairseach]
command = "/old/bin/tairseach-mcp"
args = ["--socket=/old/tairseach.sock"]
enabled = false # for now
startup_timeout_sec = 20
tool_timeout_sec = 120

[mcp_servers.tairseach.env]
TAIRSEACH_LOG_LEVEL = "debug"

[profiles.fast]
model = "o4-mini"
`,
		kept: []string{
			"model = \"gpt-5-codex\"\n\n# tairseach, from install; the rest is mine\n[mcp_servers.tairseach]\n",
			"enabled = false # for now\nstartup_timeout_sec = 20\ntool_timeout_sec = 120\n\n[mcp_servers.tairseach.env]\nTAIRSEACH_LOG_LEVEL = \"debug\"\n\n[profiles.fast]\nmodel = \"o4-mini\"\n",
		},
	},
}

// TestInstallKeepsSettings installs over each of keeps: the members
// install owns are those of the new entry, every other member of the
// entry and of the file is as it was, and the user's text stays byte for
// byte. Run again, install changes nothing and makes no backup.
func TestInstallKeepsSettings(t *testing.T) {
	for _, c := range install.Clients {
		if !slices.ContainsFunc(keeps, func(k keep) bool { return k.client == c.Name }) {
			t.Errorf("client %s: no entry with settings the user added; add one to keeps in install_keep_test.go", c.Name)
		}
	}
	for _, k := range keeps {
		t.Run(k.client, func(t *testing.T) {
			home := installHome(t)
			if err := os.WriteFile(filepath.Join(home, "token"), []byte(testToken+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			c, _ := install.Find(k.client)
			path := configPathOf(t, k.client)
			writeFixture(t, path, k.before)
			args := []string{}
			for _, a := range k.args {
				args = append(args, strings.ReplaceAll(a, "$HOME", home))
			}
			args = append(args, "install", k.client)
			stdout, stderr, code := cli("", args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
			}
			after, _ := os.ReadFile(path)
			for _, s := range k.kept {
				if !strings.Contains(string(after), s) {
					t.Errorf("the user's text is not kept as it was:\n%s\nin\n%s", s, after)
				}
			}

			// The entry: owned members as a new entry has them; the others as
			// they were.
			e := install.Server{Command: exePath(t), Args: []string{"--manifests=/srv/tairseach/manifests", "--socket=" + fixedSocket}}
			if slices.Contains(k.args, "--prefix") {
				e.Args = slices.Insert(e.Args, 1, "--prefix=ts_")
			}
			if slices.Contains(k.args, "http") {
				e = install.Server{URL: "http://127.0.0.1:9876/mcp", Token: testToken}
			}
			old, _ := entryOf(t, c, []byte(k.before)).(map[string]any)
			if got, want := entryOf(t, c, after), clientconfig.Merge(old, c.Entry(e)); !reflect.DeepEqual(got, any(want)) {
				t.Errorf("the entry reads\n%v\nwant\n%v", got, want)
			}
			got, _ := entryOf(t, c, after).(map[string]any)
			for key, v := range old {
				if !owned(c)[key] && !reflect.DeepEqual(got[key], v) {
					t.Errorf("%s reads %v, want %v as it was", key, got[key], v)
				}
			}
			if got, want := restOf(t, c, after), restOf(t, c, []byte(k.before)); !reflect.DeepEqual(got, want) {
				t.Errorf("the rest of the file changed:\n%v\nwant\n%v", got, want)
			}
			if b, _ := os.ReadFile(path + clientconfig.BackupSuffix); string(b) != k.before {
				t.Errorf("the backup is not the file before:\n%s", b)
			}
			golden := installGolden(t, home, k.before, args, stdout, stderr, code, filepath.Dir(path))
			checkGolden(t, filepath.Join("install", "keep_"+k.client), strings.ReplaceAll(golden, testToken, "$TOKEN"))

			// Again: nothing written, no second backup.
			files, mtimes := dirSnapshot(t, filepath.Dir(path))
			stdout, stderr, code = cli("", args...)
			if code != 0 || !strings.Contains(stdout, "nothing changed") {
				t.Errorf("again: exit %d, stdout %q, stderr %q; want nothing changed", code, stdout, stderr)
			}
			if files2, mtimes2 := dirSnapshot(t, filepath.Dir(path)); !maps.Equal(files, files2) || !maps.Equal(mtimes, mtimes2) {
				t.Errorf("install run again changed the directory: %v", slices.Sorted(maps.Keys(files2)))
			}
		})
	}
}

// owned are the names of the members install owns in c's entries, of
// either form.
func owned(c install.Client) map[string]bool {
	out := map[string]bool{}
	for _, e := range []install.Server{{Command: "x"}, {URL: "u", Token: "t"}} {
		for _, f := range c.Entry(e) {
			out[f.Key] = true
		}
	}
	return out
}

// decoded is a client file's values, and its server map's.
func decoded(t *testing.T, c install.Client, data []byte) (doc, servers map[string]any) {
	t.Helper()
	var err error
	if c.Format.Name == "TOML" {
		err = toml.Unmarshal(data, &doc)
	} else if data, err = hujson.Standardize(slices.Clone(data)); err == nil {
		err = json.Unmarshal(data, &doc)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	servers = doc
	for _, k := range strings.Split(c.Key, ".") {
		servers, _ = servers[k].(map[string]any)
	}
	return doc, servers
}

// entryOf is the tairseach entry of a client file, decoded.
func entryOf(t *testing.T, c install.Client, data []byte) any {
	t.Helper()
	_, servers := decoded(t, c, data)
	return servers[install.EntryName]
}

// restOf is a client file decoded, without the entry.
func restOf(t *testing.T, c install.Client, data []byte) any {
	t.Helper()
	doc, servers := decoded(t, c, data)
	delete(servers, install.EntryName)
	return doc
}
