package install

// The MCP clients install knows, one row each.

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/geilt/tairseach-mcp/internal/clientconfig"
	"github.com/geilt/tairseach-mcp/internal/quote"
	"github.com/geilt/tairseach-mcp/mcpserver/streamable"
)

// Client is one row of the table of clients: everything install knows of
// a client, so that another client is another row. install's help and
// completion are made from the rows, and so are README.md's and
// docs/clients.md's tables of clients and docs/commands.md's list. A new
// row needs, besides itself, in cmd/tairseach-mcp (each test fails, naming
// what is missing and where it goes, until it is there):
//   - a fixture for its Key, if no row has that Key yet: fixtures in
//     install_test.go, a file of the client's with another server;
//   - its entry with settings the user added, as the client documents
//     them: keeps in install_keep_test.go;
//   - its file under a temporary HOME: TestDefaultPaths in
//     internal/install/clients_test.go;
//   - its golden files, testdata/install/NAME_*.golden and keep_NAME.golden,
//     which go test ./cmd/tairseach-mcp/ -run 'TestInstall' -update writes,
//     to read before committing;
//   - the docs: go test ./cmd/tairseach-mcp/ -run TestClientTables -update
//     rewrites the tables and the list from the rows.
type Client struct {
	Name   string // on the command line: claude-desktop
	Title  string // in messages: Claude Desktop
	File   string // where its file is, in install's help
	path   func(home, configDir string) string
	Format Format
	Key    string                              // the server map: its path of keys (JSON), the tables' prefix (TOML)
	Entry  func(e Server) []clientconfig.Field // the members install owns, in the client's words and in the order of a new entry
	// HTTP: the client reaches servers by URL, so that with --transport
	// http its entry is the server's address; else it starts them itself,
	// over stdio.
	HTTP     bool
	afterAdd string // what to do once the entry is written

	// In the docs made from the rows (also DocFiles, and the entry from
	// Key and Entry).
	Check    string // README.md: how to see that the client loaded the entry
	FileNote string // docs/clients.md: what moves the file elsewhere, if anything

	// OpenClaw's (openclaw.go).
	TokenRef  string   // what the Authorization header names in place of the token, which the client fills in from tokenFrom
	tokenFrom string   // where the client finds TokenRef's value
	misplaced string   // a server map where an entry was once written and the client rejects it
	keeps     []string // the members of a misplaced entry that the client reads, which a move keeps
}

// Format is the language of a client's file, and how it is parsed for
// editing.
type Format struct {
	Name  string // in messages: JSON, TOML
	parse func(data []byte, key, entry string) (clientconfig.File, error)
	// json5: the file is JSON5, edited in place only as far as hujson reads
	// it; the rest goes through the client's own command.
	json5 bool
}

var (
	jsonFile  = Format{Name: "JSON", parse: parseJSON}
	json5File = Format{Name: "JSON", parse: parseJSON, json5: true}
	tomlFile  = Format{Name: "TOML", parse: parseTOML}
)

func parseJSON(data []byte, key, entry string) (clientconfig.File, error) {
	f, err := clientconfig.ParseJSON(data, key, entry)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func parseTOML(data []byte, key, entry string) (clientconfig.File, error) {
	f, err := clientconfig.ParseTOML(data, key, entry)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Clients are the clients install knows, in the order help lists them.
var Clients = []Client{
	{
		Name: "claude-desktop", Title: "Claude Desktop", Format: jsonFile, Key: "mcpServers",
		File: "~/Library/Application Support/Claude/claude_desktop_config.json",
		path: func(_, configDir string) string {
			return filepath.Join(configDir, "Claude", "claude_desktop_config.json")
		},
		Entry: func(e Server) []clientconfig.Field {
			return []clientconfig.Field{none("type"), command(e), args(e), none("url"), headers("headers", e)}
		},
		afterAdd: "quit Claude Desktop and open it again to load it",
		Check:    "quit it (⌘Q) and open it again: the tools menu lists `tairseach_*`",
	},
	{
		Name: "claude-code", Title: "Claude Code", Format: jsonFile, Key: "mcpServers", HTTP: true,
		File: "~/.claude.json (user scope)",
		path: func(home, _ string) string {
			if dir := os.Getenv("CLAUDE_CONFIG_DIR"); filepath.IsAbs(dir) {
				return filepath.Join(dir, ".claude.json") // where Claude Code then keeps it
			}
			return filepath.Join(home, ".claude.json")
		},
		Entry: func(e Server) []clientconfig.Field {
			return []clientconfig.Field{kind(e), command(e), args(e), address("url", e), headers("headers", e)}
		},
		afterAdd: "new Claude Code sessions load it in every project (claude mcp list shows it)",
		Check:    "`claude mcp list`, in a new session", FileNote: "`$CLAUDE_CONFIG_DIR/.claude.json` when that is set",
	},
	{
		Name: "cursor", Title: "Cursor", Format: jsonFile, Key: "mcpServers", HTTP: true,
		File: "~/.cursor/mcp.json",
		path: func(home, _ string) string { return filepath.Join(home, ".cursor", "mcp.json") },
		Entry: func(e Server) []clientconfig.Field {
			return []clientconfig.Field{none("type"), command(e), args(e), address("url", e), headers("headers", e)}
		},
		afterAdd: "Cursor lists it under Settings > MCP; restart Cursor if it does not show",
		Check:    "Settings › MCP lists it",
	},
	{
		Name: "vscode", Title: "VS Code", Format: jsonFile, Key: "servers", HTTP: true,
		File: "~/Library/Application Support/Code/User/mcp.json",
		path: func(_, configDir string) string {
			return filepath.Join(configDir, "Code", "User", "mcp.json")
		},
		Entry: func(e Server) []clientconfig.Field {
			return []clientconfig.Field{kind(e), command(e), args(e), address("url", e), headers("headers", e)}
		},
		afterAdd: "in VS Code, run MCP: List Servers and start tairseach (Copilot agent mode uses its tools)",
		Check:    "*MCP: List Servers*, then start `tairseach`",
	},
	{
		Name: "windsurf", Title: "Windsurf", Format: jsonFile, Key: "mcpServers", HTTP: true,
		File: "~/.codeium/windsurf/mcp_config.json",
		path: func(home, _ string) string { return filepath.Join(home, ".codeium", "windsurf", "mcp_config.json") },
		Entry: func(e Server) []clientconfig.Field {
			return []clientconfig.Field{none("type"), command(e), args(e), address("serverUrl", e), none("url"), headers("headers", e)}
		},
		afterAdd: "press refresh in Windsurf's MCP servers panel (Cascade) to load it",
		Check:    "refresh the MCP servers panel of Cascade",
	},
	{
		Name: "gemini", Title: "Gemini CLI", Format: jsonFile, Key: "mcpServers", HTTP: true,
		File: "~/.gemini/settings.json (user scope)",
		path: func(home, _ string) string { return filepath.Join(home, ".gemini", "settings.json") },
		Entry: func(e Server) []clientconfig.Field {
			// url is Gemini CLI's word for an SSE server's address.
			return []clientconfig.Field{none("type"), command(e), args(e), address("httpUrl", e), none("url"), headers("headers", e)}
		},
		afterAdd: "new Gemini CLI sessions load it in every project (/mcp in a session lists its tools)",
		Check:    "`/mcp` in a new session",
	},
	{
		Name: "openclaw", Title: "OpenClaw", Format: json5File, Key: "mcp.servers", HTTP: true,
		File: "~/.openclaw/openclaw.json ($OPENCLAW_CONFIG_PATH when set), under mcp.servers",
		path: openClawPath,
		Entry: func(e Server) []clientconfig.Field {
			tr := none("transport") // none over stdio, as openclaw mcp add writes it
			if e.URL != "" {
				tr.Value = "streamable-http" // without it a URL is taken as SSE
			}
			return []clientconfig.Field{none("type"), command(e), args(e), address("url", e), tr, headers("headers", e)}
		},
		TokenRef: "${" + streamable.TokenEnv + "}", tokenFrom: "its environment or ~/.openclaw/.env", // its doctor warns of a literal token
		misplaced: "mcpServers", keeps: openClawKeeps,
		afterAdd: "new OpenClaw agent turns load it (openclaw mcp probe tairseach checks it; restart a running Gateway)",
		Check:    "`openclaw mcp probe tairseach`", FileNote: "`$OPENCLAW_CONFIG_PATH`, or `openclaw.json` in `$OPENCLAW_STATE_DIR`, when set; `$OPENCLAW_HOME` in place of `~`",
	},
	{
		Name: "codex", Title: "Codex", Format: tomlFile, Key: "mcp_servers", HTTP: true,
		File: "~/.codex/config.toml ($CODEX_HOME/config.toml when set)",
		path: func(home, _ string) string {
			if dir := os.Getenv("CODEX_HOME"); filepath.IsAbs(dir) {
				return filepath.Join(dir, "config.toml")
			}
			return filepath.Join(home, ".codex", "config.toml")
		},
		Entry: func(e Server) []clientconfig.Field {
			return []clientconfig.Field{command(e), args(e), address("url", e), headers("http_headers", e)}
		},
		afterAdd: "new Codex sessions load it (codex mcp list shows it; /mcp in a session lists its tools)",
		Check:    "`codex mcp list`", FileNote: "`$CODEX_HOME/config.toml` when that is set",
	},
}

// DocFiles are the client's file on macOS and elsewhere, from a home of
// ~, for the docs. A variable that moves the file (FileNote) must not be
// set.
func (c Client) DocFiles() (macOS, other string) {
	return c.path("~", filepath.Join("~", "Library", "Application Support")), c.path("~", filepath.Join("~", ".config"))
}

// Names are the clients' names, in the table's order.
func Names() []string {
	names := make([]string, 0, len(Clients))
	for _, c := range Clients {
		names = append(names, c.Name)
	}
	return names
}

// Find is the client of that name; an unknown name is an ErrUsage.
func Find(name string) (Client, error) {
	for _, c := range Clients {
		if c.Name == name {
			return c, nil
		}
	}
	return Client{}, usageError{fmt.Errorf("unknown client %s; want one of %s", quote.IdentLine(name, quote.Name), strings.Join(Names(), ", "))}
}

// DefaultPath is where the client keeps its user configuration on this
// system: ~/Library/Application Support on macOS, $XDG_CONFIG_HOME or
// ~/.config elsewhere.
func (c Client) DefaultPath() (string, error) {
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

// EntryName is the key of our server in every client's server map.
const EntryName = "tairseach"

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
