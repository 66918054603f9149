package main

// install and uninstall: add one "tairseach" entry to an MCP client's
// configuration file, or take it out, leaving every other byte of the file
// as it was (install_json.go, install_toml.go).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/geilt/tairseach-mcp/mcpserver"
)

// entryName is the key of our server in every client's server map.
const entryName = "tairseach"

// backupSuffix names the one backup of a client file: written before the
// first change, never replaced.
const backupSuffix = ".tairseach-backup"

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
	return mcpClient{}, usageError{fmt.Errorf("unknown client %q; want one of %s", name, strings.Join(clientNames(), ", "))}
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

type installFlags struct {
	config string // --config: the client's configuration file
	print  bool   // --print: show the resulting file, write nothing
}

func newInstallCmd(o *options, stdout, stderr io.Writer) *cobra.Command {
	var f installFlags
	cmd := &cobra.Command{
		Use:   "install CLIENT",
		Short: "Add tairseach to an MCP client's configuration (" + strings.Join(clientNames(), ", ") + ")",
		Long: `Add a "tairseach" server to the configuration file of an MCP client, so that the client
starts this binary (by its absolute path) with the flags given here, and those set through
TAIRSEACH_* environment variables, which the client would not see.

Only the entry is written: other servers and settings, comments, trailing commas and the
layout of the file stay as they were, and uninstall takes out exactly what install put in.
Before its first change to a file, install copies it to FILE` + backupSuffix + ` (kept, never
replaced). Running the command again when the entry is already there changes nothing.
--print shows the file as it would be written and writes nothing at all.

With --transport http, clients that reach servers by URL (claude-code, cursor, vscode,
windsurf, gemini, codex) get an HTTP entry with the bearer token; start the server yourself.

Clients and their files (macOS; ~/.config on Linux):
  claude-desktop  ~/Library/Application Support/Claude/claude_desktop_config.json
  claude-code     ~/.claude.json (user scope)
  cursor          ~/.cursor/mcp.json
  vscode          ~/Library/Application Support/Code/User/mcp.json
  windsurf        ~/.codeium/windsurf/mcp_config.json
  gemini          ~/.gemini/settings.json (user scope)
  codex           ~/.codex/config.toml ($CODEX_HOME/config.toml when set)`,
		Example: `  tairseach-mcp install claude-desktop
  tairseach-mcp --socket /tmp/tairseach.sock install cursor
  tairseach-mcp install vscode --print
  tairseach-mcp --transport http install codex`,
		Args:              exactClient,
		ValidArgsFunction: completeClient,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := findClient(args[0])
			if err != nil {
				return err
			}
			return runInstall(cmd, o, c, f, stdout, stderr)
		},
	}
	cmd.Flags().StringVar(&f.config, "config", "", "the client's configuration file (default: its usual place)")
	cmd.Flags().BoolVar(&f.print, "print", false, "print the file as it would be written, and write nothing")
	return cmd
}

func newUninstallCmd(stdout, stderr io.Writer) *cobra.Command {
	var f installFlags
	cmd := &cobra.Command{
		Use:   "uninstall CLIENT",
		Short: "Remove tairseach from an MCP client's configuration",
		Long: `Remove the "tairseach" server from an MCP client's configuration file. Nothing else in the
file changes: after install and uninstall it is as it was, byte for byte. Before its first change
to a file, the command copies it to FILE` + backupSuffix + ` (kept, never replaced).`,
		Args:              exactClient,
		ValidArgsFunction: completeClient,
		RunE: func(_ *cobra.Command, args []string) error {
			c, err := findClient(args[0])
			if err != nil {
				return err
			}
			return runUninstall(c, f, stdout, stderr)
		},
	}
	cmd.Flags().StringVar(&f.config, "config", "", "the client's configuration file (default: its usual place)")
	cmd.Flags().BoolVar(&f.print, "print", false, "print the file as it would be written, and write nothing")
	return cmd
}

func completeClient(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return clientNames(), cobra.ShellCompDirectiveNoFileComp
}

func exactClient(_ *cobra.Command, args []string) error {
	if len(args) != 1 {
		return usageError{fmt.Errorf("name one client: %s", strings.Join(clientNames(), ", "))}
	}
	return nil
}

// clientFile is a client's file parsed for editing its tairseach entry,
// given in the file's own language (a JSON value, a TOML table).
type clientFile interface {
	// entry reports whether the file has the entry, and whether it is e.
	entry(e []byte) (found, same bool, err error)
	set(e []byte) error
	remove() error
	bytes() []byte
}

// configFile is a client's configuration file as read.
type configFile struct {
	path  string // symlinks resolved: the file written
	shown string // the path as the user knows it
	data  []byte // nil when the file does not exist
	mode  fs.FileMode
	doc   clientFile
}

func (f installFlags) open(c mcpClient) (*configFile, error) {
	p := f.config
	if p == "" {
		var err error
		if p, err = c.defaultPath(); err != nil {
			return nil, err
		}
	} else if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	cf := &configFile{path: p, shown: p, mode: 0o600}
	// A symlinked file (dotfiles) is written through, not replaced.
	if real, err := filepath.EvalSymlinks(p); err == nil {
		cf.path = real
	}
	fi, err := os.Stat(cf.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("reading %s: %w", p, err)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file; pass --config FILE", p)
	default:
		cf.mode = fi.Mode().Perm()
		if cf.data, err = os.ReadFile(cf.path); err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
	}
	if c.toml {
		cf.doc, err = parseTOMLFile(cf.data, c.key)
	} else {
		cf.doc, err = parseJSONFile(cf.data, c.key)
	}
	if err != nil {
		const leave = "left as it is: fix it, or move it aside and run this again"
		if se := (*syntaxError)(nil); errors.As(err, &se) {
			return nil, fmt.Errorf("%s:%d:%d: not valid %s: %s; %s", p, se.line, se.col, c.format(), se.cause, leave)
		}
		return nil, fmt.Errorf("%s: %v; %s", p, err, leave)
	}
	return cf, nil
}

func runInstall(cmd *cobra.Command, o *options, c mcpClient, f installFlags, stdout, stderr io.Writer) error {
	cf, err := f.open(c)
	if err != nil {
		return err
	}
	entry, notes, err := buildEntry(cmd, o, c, f.print)
	if err != nil {
		return err
	}
	enc := c.encode(entry)
	found, same, err := cf.doc.entry(enc)
	if err != nil {
		return fmt.Errorf("%s: %w", cf.shown, err)
	}
	if same && !f.print {
		for _, n := range notes {
			fmt.Fprintf(stderr, "tairseach-mcp: %s\n", n)
		}
		fmt.Fprintf(stdout, "%s already has this tairseach entry in %s; nothing changed\n", c.title, cf.shown)
		return nil
	}
	verb := "added"
	if found {
		verb = "updated"
	}
	if err := cf.doc.set(enc); err != nil {
		return fmt.Errorf("%s: %w", cf.shown, err)
	}
	if entry.token != "" && cf.data != nil && cf.mode&0o077 != 0 {
		if f.print {
			notes = append(notes, fmt.Sprintf("%s is readable by others (%04o); install makes it 0600, as it will hold the token", cf.shown, cf.mode))
		} else {
			notes = append(notes, fmt.Sprintf("%s was readable by others (%04o); now 0600, as it holds the token", cf.shown, cf.mode))
		}
		cf.mode = 0o600
	}
	for _, n := range notes {
		fmt.Fprintf(stderr, "tairseach-mcp: %s\n", n)
	}
	if f.print {
		return printConfig(cf, stdout, stderr)
	}
	backup, err := cf.write()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s the tairseach entry in %s%s\n%s\n", verb, cf.shown, backup, c.afterAdd)
	if missing := missingSetup(o); len(missing) > 0 {
		verb := "does not exist yet, so " + c.title + " will see no tools until it does"
		if len(missing) > 1 {
			verb = "do not exist yet, so " + c.title + " will see no tools until they do"
		}
		fmt.Fprintf(stderr, "tairseach-mcp: %s %s; tairseach-mcp doctor checks the setup\n", strings.Join(missing, " and "), verb)
	}
	return nil
}

// missingSetup names what the server needs and does not find: the
// manifests directory, the socket.
func missingSetup(o *options) []string {
	var missing []string
	for _, p := range []string{o.manifests, o.socket} {
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, p)
		}
	}
	return missing
}

func runUninstall(c mcpClient, f installFlags, stdout, stderr io.Writer) error {
	cf, err := f.open(c)
	if err != nil {
		return err
	}
	found, _, err := cf.doc.entry(nil)
	if err != nil {
		return fmt.Errorf("%s: %w", cf.shown, err)
	}
	if !found {
		if cf.data == nil {
			fmt.Fprintf(stdout, "%s does not exist; no tairseach entry to remove\n", cf.shown)
		} else {
			fmt.Fprintf(stdout, "no tairseach entry in %s; nothing changed\n", cf.shown)
		}
		return nil
	}
	if err := cf.doc.remove(); err != nil {
		return fmt.Errorf("%s: %w", cf.shown, err)
	}
	if f.print {
		return printConfig(cf, stdout, stderr)
	}
	backup, err := cf.write()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "removed the tairseach entry from %s%s\n", cf.shown, backup)
	return nil
}

func printConfig(cf *configFile, stdout, stderr io.Writer) error {
	fmt.Fprintf(stderr, "tairseach-mcp: --print: %s not written; it would read:\n", cf.shown)
	_, err := stdout.Write(cf.doc.bytes())
	return err
}

// write backs the old file up if it never was, then replaces it in one
// rename, with the old file's permissions (0600 for a new one, in a 0700
// directory). It returns a note on the backup for the user.
func (cf *configFile) write() (note string, err error) {
	dir := filepath.Dir(cf.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("creating %s: %w", dir, err)
	}
	if cf.data != nil {
		if note, err = writeBackup(cf.path, cf.data); err != nil {
			return "", err
		}
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(cf.path)+".*.tmp")
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", cf.shown, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing left to remove
	_, err = tmp.Write(cf.doc.bytes())
	if err == nil {
		err = tmp.Chmod(cf.mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), cf.path)
	}
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", cf.shown, err)
	}
	return note, nil
}

// writeBackup copies data to path.tairseach-backup unless that exists: the
// one backup holds the file as it was before the first change, and is
// never replaced. Backups are 0600: client files hold tokens.
func writeBackup(path string, data []byte) (string, error) {
	name := path + backupSuffix
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return " (" + name + " keeps the file from before the first change)", nil
	}
	if err != nil {
		return "", fmt.Errorf("backing up %s: %w", path, err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", fmt.Errorf("backing up %s to %s: %w", path, name, err)
	}
	return " (the old file is in " + name + ")", nil
}

// serverEntry is what a client needs to reach tairseach: a command to
// start, or a URL and the token to send.
type serverEntry struct {
	command string
	args    []string
	url     string
	token   string
}

// encode is e in the client's file format and words.
func (c mcpClient) encode(e serverEntry) []byte {
	if c.toml {
		return tomlEntry(c.key, e, c.urlKey)
	}
	var ms []member
	typ := "stdio"
	if e.url != "" {
		typ = "http"
	}
	if c.typed {
		ms = append(ms, member{"type", marshalEntry(typ)})
	}
	if e.url == "" {
		ms = append(ms, member{"command", marshalEntry(e.command)}, member{"args", marshalEntry(e.args)})
		return encodeObject(ms)
	}
	ms = append(ms, member{c.urlKey, marshalEntry(e.url)})
	if e.token != "" {
		ms = append(ms, member{"headers", encodeObject([]member{{"Authorization", marshalEntry("Bearer " + e.token)}})})
	}
	return encodeObject(ms)
}

// buildEntry is the client's entry for this binary and these flags, and
// notes for the user about what was carried or left out. With print set it
// makes nothing: a token not made yet is shown as a placeholder.
func buildEntry(cmd *cobra.Command, o *options, c mcpClient, print bool) (serverEntry, []string, error) {
	exe, err := executable()
	if err != nil {
		return serverEntry{}, nil, err
	}
	args, left, notes := entryArgs(cmd)
	if o.transport == "http" && c.urlKey != "" {
		// The flags go to the server's command line, shown in a note.
		return buildHTTPEntry(o, c, exe, args, print)
	}
	if len(left) > 0 {
		why := c.title + " starts tairseach-mcp itself and talks to it on stdin and stdout"
		if o.transport == "http" {
			why = c.title + " starts its servers itself, over stdio; its file takes no URLs"
		}
		notes = append(notes, fmt.Sprintf("left out of the entry: %s; %s", strings.Join(left, ", "), why))
	}
	return serverEntry{command: exe, args: args}, notes, nil
}

func buildHTTPEntry(o *options, c mcpClient, exe string, args []string, print bool) (serverEntry, []string, error) {
	host, port, err := net.SplitHostPort(o.http.listen)
	if err != nil {
		return serverEntry{}, nil, usageError{fmt.Errorf("--listen %q: want host:port, such as 127.0.0.1:8765", o.http.listen)}
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1" // the server listens on every address; loopback is one of them
	}
	e := serverEntry{url: "http://" + net.JoinHostPort(host, port) + mcpserver.MCPPath}
	var notes []string
	// The server's own token, made now if it was never started (not
	// with --print, which writes nothing).
	from, token, err := entryToken(o, print)
	if err != nil {
		return serverEntry{}, nil, err
	}
	switch {
	case token == "" && !o.http.noAuth:
		e.token = "<the token in " + from + ">"
		notes = append(notes, from+" does not exist yet: the entry shows a placeholder for the token; install without --print makes it (0600), as the server's first start would")
	case token != "":
		e.token = token
		if from == "" {
			from = tokenEnv
		}
		notes = append(notes, "the entry carries the bearer token from "+from+"; keep the file private")
	default:
		notes = append(notes, "--no-auth: the entry has no Authorization header, and any local user can reach the tools")
	}
	serveArgs := append([]string{exe, "--transport=http", "--listen=" + o.http.listen}, args...)
	if o.http.authTokenFile != "" {
		serveArgs = append(serveArgs, "--auth-token-file="+absPath(o.http.authTokenFile))
	}
	if o.http.noAuth {
		serveArgs = append(serveArgs, "--no-auth")
	}
	notes = append(notes, fmt.Sprintf("%s connects to %s: keep the server running there, for example with %s", c.title, e.url, strings.Join(serveArgs, " ")))
	return e, notes, nil
}

// entryToken is the token an HTTP entry carries and the file it is in (""
// for TAIRSEACH_MCP_TOKEN; both "" with --no-auth). Without print the
// default file is made when missing; with print a missing default file
// gives its path and no token.
func entryToken(o *options, print bool) (path, token string, err error) {
	if !print {
		return clientToken(o)
	}
	if o.http.noAuth {
		return "", "", nil
	}
	path, token, _, _, err = o.loadToken(false)
	if err != nil && errors.Is(err, fs.ErrNotExist) && o.http.authTokenFile == "" && os.Getenv(tokenEnv) == "" {
		return defaultTokenPath(), "", nil
	}
	return path, token, err
}

// executable is the absolute path of this binary, symlinks resolved (a
// client starts it from a directory and PATH of its own), except that a
// Homebrew install is named by its opt link, which brew upgrade keeps valid,
// rather than by the versioned Cellar directory it replaces.
func executable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding this binary: %w", err)
	}
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	return homebrewOpt(exe), nil
}

// homebrewOpt maps PREFIX/Cellar/NAME/VERSION/bin/BIN to
// PREFIX/opt/NAME/bin/BIN when that leads to the same file.
func homebrewOpt(exe string) string {
	prefix, rest, ok := strings.Cut(exe, string(filepath.Separator)+"Cellar"+string(filepath.Separator))
	if !ok {
		return exe
	}
	parts := strings.Split(rest, string(filepath.Separator))
	if len(parts) != 4 || parts[2] != "bin" {
		return exe
	}
	opt := filepath.Join(prefix, "opt", parts[0], "bin", parts[3])
	if real, err := filepath.EvalSymlinks(opt); err == nil && real == exe {
		return opt
	}
	return exe
}

// entryArgs are the flags of the command line and the environment that
// change what is served, as --name=value. left names those a stdio entry
// cannot carry; notes say which came from the environment.
func entryArgs(cmd *cobra.Command) (args, left, notes []string) {
	args = []string{}
	flags := cmd.Flags()
	cmd.Root().PersistentFlags().VisitAll(func(g *pflag.Flag) {
		f := flags.Lookup(g.Name)
		if f == nil || f.Hidden {
			return
		}
		env := envName(f.Name)
		fromEnv := !f.Changed && os.Getenv(env) != ""
		if !f.Changed && !fromEnv {
			return
		}
		switch {
		case f.Name == "transport" && f.Value.String() == "stdio":
			return
		case f.Name == "transport", f.Name == "linger", strings.HasPrefix(f.Usage, "with --transport http"):
			shown := "--" + f.Name
			if fromEnv {
				shown = env
			}
			left = append(left, shown)
			return
		}
		v := f.Value.String()
		if f.Name == "manifests" || f.Name == "socket" {
			v = absPath(v) // the client starts servers in a directory of its own
		}
		args = append(args, "--"+f.Name+"="+v)
		if fromEnv {
			notes = append(notes, fmt.Sprintf("%s carried into the entry as --%s=%s", env, f.Name, v))
		}
	})
	return args, left, notes
}

func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

func marshalEntry(e any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(e)
	return bytes.TrimSpace(buf.Bytes())
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// member is one member of a JSON object, kept in file order.
type member struct {
	key   string
	value json.RawMessage
}

// encodeObject is ms as one compact JSON object.
func encodeObject(ms []member) json.RawMessage {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(marshalEntry(m.key))
		buf.WriteByte(':')
		_ = json.Compact(&buf, m.value)
	}
	buf.WriteByte('}')
	return buf.Bytes()
}
