package main

// The MCP clients install knows: their names, their files and the words
// their files use for an entry.

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/geilt/tairseach-mcp/internal/quote"
)

// mcpClient is an MCP client whose configuration file install edits.
type mcpClient struct {
	name     string // on the command line: claude-desktop
	title    string // in messages: Claude Desktop
	key      string // the server map: the top-level key (JSON), the tables' prefix (TOML)
	toml     bool   // the file is TOML, not JSON
	typed    bool   // entries carry "type": "stdio" or "http"
	urlKey   string // the key of an HTTP entry's address; "" when the client only starts servers over stdio
	path     func(home, configDir string) string
	afterAdd string // what to do once the entry is written

	// OpenClaw's (install_openclaw.go).
	transport bool     // an HTTP entry carries "transport": "streamable-http"
	tokenRef  bool     // the Authorization header names ${TAIRSEACH_MCP_TOKEN}, which the client fills in, not the token
	json5     bool     // the file is JSON5: what hujson cannot read goes through the client's own command
	misplaced string   // a server map where an entry was once written and the client rejects it
	keeps     []string // the members of a misplaced entry that the client reads, which a move keeps
}

var mcpClients = []mcpClient{
	{
		name: "claude-desktop", title: "Claude Desktop", key: "mcpServers",
		path: func(_, configDir string) string {
			return filepath.Join(configDir, "Claude", "claude_desktop_config.json")
		},
		afterAdd: "quit Claude Desktop and open it again to load it",
	},
	{
		name: "claude-code", title: "Claude Code", key: "mcpServers", typed: true, urlKey: "url",
		path: func(home, _ string) string {
			if dir := os.Getenv("CLAUDE_CONFIG_DIR"); filepath.IsAbs(dir) {
				return filepath.Join(dir, ".claude.json") // where Claude Code then keeps it
			}
			return filepath.Join(home, ".claude.json")
		},
		afterAdd: "new Claude Code sessions load it in every project (claude mcp list shows it)",
	},
	{
		name: "cursor", title: "Cursor", key: "mcpServers", urlKey: "url",
		path:     func(home, _ string) string { return filepath.Join(home, ".cursor", "mcp.json") },
		afterAdd: "Cursor lists it under Settings > MCP; restart Cursor if it does not show",
	},
	{
		name: "vscode", title: "VS Code", key: "servers", typed: true, urlKey: "url",
		path: func(_, configDir string) string {
			return filepath.Join(configDir, "Code", "User", "mcp.json")
		},
		afterAdd: "in VS Code, run MCP: List Servers and start tairseach (Copilot agent mode uses its tools)",
	},
	{
		name: "windsurf", title: "Windsurf", key: "mcpServers", urlKey: "serverUrl",
		path:     func(home, _ string) string { return filepath.Join(home, ".codeium", "windsurf", "mcp_config.json") },
		afterAdd: "press refresh in Windsurf's MCP servers panel (Cascade) to load it",
	},
	{
		name: "gemini", title: "Gemini CLI", key: "mcpServers", urlKey: "httpUrl",
		path:     func(home, _ string) string { return filepath.Join(home, ".gemini", "settings.json") },
		afterAdd: "new Gemini CLI sessions load it in every project (/mcp in a session lists its tools)",
	},
	{
		name: "openclaw", title: "OpenClaw", key: "mcp.servers", urlKey: "url",
		transport: true, tokenRef: true, json5: true, misplaced: "mcpServers", keeps: openClawKeeps,
		path:     openClawPath,
		afterAdd: "new OpenClaw agent turns load it (openclaw mcp probe tairseach checks it; restart a running Gateway)",
	},
	{
		name: "codex", title: "Codex", key: "mcp_servers", toml: true, urlKey: "url",
		path: func(home, _ string) string {
			if dir := os.Getenv("CODEX_HOME"); filepath.IsAbs(dir) {
				return filepath.Join(dir, "config.toml")
			}
			return filepath.Join(home, ".codex", "config.toml")
		},
		afterAdd: "new Codex sessions load it (codex mcp list shows it; /mcp in a session lists its tools)",
	},
}

func clientNames() []string {
	names := make([]string, 0, len(mcpClients))
	for _, c := range mcpClients {
		names = append(names, c.name)
	}
	return names
}

func findClient(name string) (mcpClient, error) {
	for _, c := range mcpClients {
		if c.name == name {
			return c, nil
		}
	}
	return mcpClient{}, usageError{fmt.Errorf("unknown client %s; want one of %s", quote.IdentLine(name, quote.Name), strings.Join(clientNames(), ", "))}
}

// defaultPath is where the client keeps its user configuration on this
// system: ~/Library/Application Support on macOS, $XDG_CONFIG_HOME or
// ~/.config elsewhere.
func (c mcpClient) defaultPath() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding your home directory: %w; pass --config FILE", err)
	}
	configDir := filepath.Join(home, ".config")
	if runtime.GOOS == "darwin" {
		configDir = filepath.Join(home, "Library", "Application Support")
	} else if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		configDir = x
	}
	return c.path(home, configDir), nil
}

// format names the file's language in messages.
func (c mcpClient) format() string {
	if c.toml {
		return "TOML"
	}
	return "JSON"
}

// entryName is the key of our server in every client's server map.
const entryName = "tairseach"

// openClawKeeps are the members of an entry that OpenClaw reads besides
// those install owns (its schema's mcp.servers.*): what a move of the
// app's misplaced entry keeps.
var openClawKeeps = []string{
	"enabled", "env", "cwd", "workingDirectory", "connectionTimeoutMs", "requestTimeoutMs",
	"supportsParallelToolCalls", "auth", "oauth", "sslVerify", "clientCert", "clientKey", "toolFilter", "codex",
}

// openClawPath is OpenClaw's configuration file: $OPENCLAW_CONFIG_PATH,
// else openclaw.json in $OPENCLAW_STATE_DIR, else in .openclaw in
// $OPENCLAW_HOME or the home directory, as OpenClaw finds it.
func openClawPath(home, _ string) string {
	if p := os.Getenv("OPENCLAW_CONFIG_PATH"); filepath.IsAbs(p) {
		return p
	}
	if dir := os.Getenv("OPENCLAW_STATE_DIR"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "openclaw.json")
	}
	if h := os.Getenv("OPENCLAW_HOME"); filepath.IsAbs(h) {
		home = h
	}
	return filepath.Join(home, ".openclaw", "openclaw.json")
}
