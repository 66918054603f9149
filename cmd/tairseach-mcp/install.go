package main

// install and uninstall: merge one "tairseach" entry into an MCP client's
// configuration file, or take it out, touching nothing else in the file.

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
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/geilt/tairseach-mcp/mcpserver"
)

// entryName is the key of our server in every client's server map.
const entryName = "tairseach"

// mcpClient is an MCP client whose configuration file install edits.
type mcpClient struct {
	name     string // on the command line: claude-desktop
	title    string // in messages: Claude Desktop
	key      string // the top-level key of the server map
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

Other servers and settings in the file are kept. The file is backed up first (FILE.bak), and
running the command again when the entry is already there changes nothing.

With --transport http, clients that reach servers by URL (claude-code, cursor, vscode,
windsurf) get an HTTP entry with the bearer token; start the server yourself.

Clients and their files (macOS; ~/.config on Linux):
  claude-desktop  ~/Library/Application Support/Claude/claude_desktop_config.json
  claude-code     ~/.claude.json (user scope)
  cursor          ~/.cursor/mcp.json
  vscode          ~/Library/Application Support/Code/User/mcp.json
  windsurf        ~/.codeium/windsurf/mcp_config.json`,
		Example: `  tairseach-mcp install claude-desktop
  tairseach-mcp --socket /tmp/tairseach.sock install cursor
  tairseach-mcp install vscode --print
  tairseach-mcp --transport http install claude-code`,
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
		Use:               "uninstall CLIENT",
		Short:             "Remove tairseach from an MCP client's configuration",
		Long:              `Remove the "tairseach" server from an MCP client's configuration file, after backing the file up. Nothing else in the file changes.`,
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

// configFile is a client's configuration file as read.
type configFile struct {
	path    string // symlinks resolved: the file written
	shown   string // the path as the user knows it
	data    []byte // nil when the file does not exist
	mode    fs.FileMode
	members []member // top-level members, in file order
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
		return cf, nil
	case err != nil:
		return nil, fmt.Errorf("reading %s: %w", p, err)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file; pass --config FILE", p)
	}
	cf.mode = fi.Mode().Perm()
	if cf.data, err = os.ReadFile(cf.path); err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	if cf.members, err = parseObject(cf.data); err != nil {
		hint := ""
		if strings.Contains(err.Error(), "invalid character '/'") {
			hint = " (" + c.title + " may accept comments; this command does not: remove them)"
		}
		return nil, fmt.Errorf("%s is not valid JSON (%v); left as it is: fix it%s, or move it aside and run this again", p, err, hint)
	}
	return cf, nil
}

// servers returns the client's server map, in file order.
func (cf *configFile) servers(c mcpClient) ([]member, error) {
	i := lastIndex(cf.members, c.key)
	if i < 0 || string(cf.members[i].value) == "null" {
		return nil, nil
	}
	ms, err := parseObject(cf.members[i].value)
	if err != nil {
		return nil, fmt.Errorf("%s: %q is not a JSON object (%v); fix it or move the file aside", cf.shown, c.key, err)
	}
	return ms, nil
}

// setServers replaces the client's server map, or appends it.
func (cf *configFile) setServers(c mcpClient, servers []member) {
	v := encodeObject(servers)
	if i := lastIndex(cf.members, c.key); i >= 0 {
		cf.members[i].value = v
		return
	}
	cf.members = append(cf.members, member{c.key, v})
}

func runInstall(cmd *cobra.Command, o *options, c mcpClient, f installFlags, stdout, stderr io.Writer) error {
	entry, notes, err := buildEntry(cmd, o, c)
	if err != nil {
		return err
	}
	secret := bytes.Contains(entry, []byte(`"Authorization"`))
	cf, err := f.open(c)
	if err != nil {
		return err
	}
	servers, err := cf.servers(c)
	if err != nil {
		return err
	}
	i := lastIndex(servers, entryName)
	dups := countKey(servers, entryName) > 1
	if i >= 0 && !dups && sameJSON(servers[i].value, entry) && !f.print {
		for _, n := range notes {
			fmt.Fprintf(stderr, "tairseach-mcp: %s\n", n)
		}
		fmt.Fprintf(stdout, "%s already has this tairseach entry in %s; nothing changed\n", c.title, cf.shown)
		return nil
	}
	verb := "added"
	if i >= 0 {
		verb = "updated"
		servers[i].value = entry
		// A JSON object holds one value per name: the earlier ones go.
		for j := i - 1; j >= 0; j-- {
			if servers[j].key == entryName {
				servers = slices.Delete(servers, j, j+1)
			}
		}
	} else {
		servers = append(servers, member{entryName, entry})
	}
	if secret && cf.data != nil && cf.mode&0o077 != 0 {
		notes = append(notes, fmt.Sprintf("%s was readable by others (%04o); now 0600, as it holds the token", cf.shown, cf.mode))
		cf.mode = 0o600
	}
	cf.setServers(c, servers)
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
	fmt.Fprintf(stdout, "%s the tairseach entry in %s%s\n%s\n", verb, cf.shown, backupNote(backup), c.afterAdd)
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
	servers, err := cf.servers(c)
	if err != nil {
		return err
	}
	if lastIndex(servers, entryName) < 0 {
		if cf.data == nil {
			fmt.Fprintf(stdout, "%s does not exist; no tairseach entry to remove\n", cf.shown)
		} else {
			fmt.Fprintf(stdout, "no tairseach entry in %s; nothing changed\n", cf.shown)
		}
		return nil
	}
	servers = slices.DeleteFunc(servers, func(m member) bool { return m.key == entryName })
	cf.setServers(c, servers)
	if f.print {
		return printConfig(cf, stdout, stderr)
	}
	backup, err := cf.write()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "removed the tairseach entry from %s%s\n", cf.shown, backupNote(backup))
	return nil
}

// lastIndex is the index of the last member named key, the one a JSON
// parser keeps, or -1.
func lastIndex(ms []member, key string) int {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].key == key {
			return i
		}
	}
	return -1
}

func countKey(ms []member, key string) int {
	n := 0
	for _, m := range ms {
		if m.key == key {
			n++
		}
	}
	return n
}

func backupNote(backup string) string {
	if backup == "" {
		return ""
	}
	return " (the old file is in " + backup + ")"
}

func printConfig(cf *configFile, stdout, stderr io.Writer) error {
	fmt.Fprintf(stderr, "tairseach-mcp: --print: %s not written; it would read:\n", cf.shown)
	_, err := stdout.Write(encodeFile(cf.members))
	return err
}

// write backs the old file up, then replaces it in one rename, with the
// old file's permissions (0600 for a new one, in a 0700 directory).
func (cf *configFile) write() (backup string, err error) {
	dir := filepath.Dir(cf.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("creating %s: %w", dir, err)
	}
	if cf.data != nil {
		if backup, err = writeBackup(cf.path, cf.data); err != nil {
			return "", err
		}
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(cf.path)+".*.tmp")
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", cf.shown, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing left to remove
	_, err = tmp.Write(encodeFile(cf.members))
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
	return backup, nil
}

// writeBackup copies data to path.bak, or to a timestamped name when that
// exists already, never overwriting an earlier backup. Backups are 0600:
// client files hold tokens.
func writeBackup(path string, data []byte) (string, error) {
	names := []string{path + ".bak", path + "." + time.Now().UTC().Format("20060102T150405Z") + ".bak"}
	for _, name := range names {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
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
		return name, nil
	}
	return "", fmt.Errorf("backing up %s: %s and %s exist already; move one aside", path, names[0], names[1])
}

// stdioEntry starts this binary; Type is set for clients that want it.
type stdioEntry struct {
	Type    string   `json:"type,omitempty"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// httpEntry reaches a running server: URL or ServerURL, per client.
type httpEntry struct {
	Type      string            `json:"type,omitempty"`
	URL       string            `json:"url,omitempty"`
	ServerURL string            `json:"serverUrl,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
}

// buildEntry is the client's entry for this binary and these flags, and
// notes for the user about what was carried or left out.
func buildEntry(cmd *cobra.Command, o *options, c mcpClient) (json.RawMessage, []string, error) {
	exe, err := executable()
	if err != nil {
		return nil, nil, err
	}
	args, left, notes := entryArgs(cmd)
	if o.transport == "http" && c.urlKey != "" {
		// The flags go to the server's command line, shown in a note.
		return buildHTTPEntry(o, c, exe, args, nil)
	}
	if len(left) > 0 {
		why := c.title + " starts tairseach-mcp itself and talks to it on stdin and stdout"
		if o.transport == "http" {
			why = c.title + " starts its servers itself, over stdio; its file takes no URLs"
		}
		notes = append(notes, fmt.Sprintf("left out of the entry: %s; %s", strings.Join(left, ", "), why))
	}
	e := stdioEntry{Command: exe, Args: args}
	if c.typed {
		e.Type = "stdio"
	}
	return marshalEntry(e), notes, nil
}

func buildHTTPEntry(o *options, c mcpClient, exe string, args, notes []string) (json.RawMessage, []string, error) {
	host, port, err := net.SplitHostPort(o.http.listen)
	if err != nil {
		return nil, nil, usageError{fmt.Errorf("--listen %q: want host:port, such as 127.0.0.1:8765", o.http.listen)}
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1" // the server listens on every address; loopback is one of them
	}
	url := "http://" + net.JoinHostPort(host, port) + mcpserver.MCPPath
	e := httpEntry{}
	if c.urlKey == "serverUrl" {
		e.ServerURL = url
	} else {
		e.URL = url
	}
	if c.typed {
		e.Type = "http"
	}
	// The server's own token, made now if it was never started.
	from, token, err := clientToken(o)
	if err != nil {
		return nil, nil, err
	}
	if from == "" {
		from = tokenEnv
	}
	switch {
	case token != "":
		e.Headers = map[string]string{"Authorization": "Bearer " + token}
		notes = append(notes, "the entry carries the bearer token from "+from+"; keep the file private")
	case o.http.noAuth:
		notes = append(notes, "--no-auth: the entry has no Authorization header, and any local user can reach the tools")
	}
	serveArgs := append([]string{exe, "--transport=http", "--listen=" + o.http.listen}, args...)
	if o.http.authTokenFile != "" {
		serveArgs = append(serveArgs, "--auth-token-file="+absPath(o.http.authTokenFile))
	}
	if o.http.noAuth {
		serveArgs = append(serveArgs, "--no-auth")
	}
	notes = append(notes, fmt.Sprintf("%s connects to %s: keep the server running there, for example with %s", c.title, url, strings.Join(serveArgs, " ")))
	return marshalEntry(e), notes, nil
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

// parseObject reads a JSON object as its members in order. An empty file
// is an empty object.
func parseObject(data []byte) ([]member, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	fail := func(err error) ([]member, error) {
		// The decoder counts a nested value's offsets from its start;
		// Unmarshal reports them from the start of the file.
		var v any
		if uerr := json.Unmarshal(data, &v); uerr != nil {
			err = uerr
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			// Offset counts the bad byte.
			return nil, fmt.Errorf("%s: %s", where(data, se.Offset-1), se.Error())
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errors.New("unexpected end of the file")
		}
		return nil, fmt.Errorf("%s: %v", where(data, dec.InputOffset()), err)
	}
	tok, err := dec.Token()
	if err != nil {
		return fail(err)
	}
	if tok != json.Delim('{') {
		return nil, fmt.Errorf("the top level is %s, not an object", describeToken(tok))
	}
	var ms []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return fail(err)
		}
		ms = append(ms, member{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return fail(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: more after the top-level object", where(data, dec.InputOffset()))
	}
	return ms, nil
}

func describeToken(tok json.Token) string {
	switch tok.(type) {
	case json.Delim:
		return "an array"
	case string:
		return "a string"
	case nil:
		return "null"
	case bool:
		return "a boolean"
	}
	return "a number"
}

func where(data []byte, off int64) string {
	line, col := lineCol(data, off)
	return fmt.Sprintf("line %d, column %d", line, col)
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

// encodeFile is the file's content: the members indented by two spaces,
// as the clients write their own files.
func encodeFile(ms []member) []byte {
	var buf bytes.Buffer
	_ = json.Indent(&buf, encodeObject(ms), "", "  ")
	buf.WriteByte('\n')
	return buf.Bytes()
}
