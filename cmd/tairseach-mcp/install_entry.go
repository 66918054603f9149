package main

// The entry install writes: the command that starts this binary with the
// flags that change what is served, or the URL and token of an HTTP server.

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/geilt/tairseach-mcp/internal/clientconfig"
	"github.com/geilt/tairseach-mcp/internal/quote"
	"github.com/geilt/tairseach-mcp/mcpserver/streamable"
)

// serverEntry is what a client needs to reach tairseach: a command to
// start, or a URL and the token to send.
type serverEntry struct {
	command string
	args    []string
	url     string
	token   string
}

// The members of the entries install writes, for the clients' rows. A
// member without a value is one install owns and that this form of the
// entry (command and args, or the address and headers) does not have, nor
// an entry of a client that does not take it: install takes it out.

// none is a member the entry does not have.
func none(key string) clientconfig.Field { return clientconfig.Field{Key: key} }

// kind is "type": "stdio" or "http".
func kind(e serverEntry) clientconfig.Field {
	if e.url != "" {
		return clientconfig.Field{Key: "type", Value: "http"}
	}
	return clientconfig.Field{Key: "type", Value: "stdio"}
}

// command is the command that starts the server, of a stdio entry.
func command(e serverEntry) clientconfig.Field {
	if e.url != "" {
		return none("command")
	}
	return clientconfig.Field{Key: "command", Value: e.command}
}

// args are the command's arguments, of a stdio entry.
func args(e serverEntry) clientconfig.Field {
	if e.url != "" {
		return none("args")
	}
	return clientconfig.Field{Key: "args", Value: e.args}
}

// address is the server's URL under key, of an HTTP entry.
func address(key string, e serverEntry) clientconfig.Field {
	if e.url == "" {
		return none(key)
	}
	return clientconfig.Field{Key: key, Value: e.url}
}

// headers are the HTTP headers under key, of which install owns
// Authorization, of an HTTP entry.
func headers(key string, e serverEntry) clientconfig.Field {
	if e.url == "" {
		return none(key)
	}
	auth := none("Authorization")
	if e.token != "" {
		auth.Value = "Bearer " + e.token
	}
	return clientconfig.Field{Key: key, Sub: []clientconfig.Field{auth}}
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
	if o.transport == "http" && c.http {
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
		return serverEntry{}, nil, usageError{fmt.Errorf("--listen %s: want host:port, such as 127.0.0.1:8765", quote.Line(o.http.listen, quote.Text))}
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1" // the server listens on every address; loopback is one of them
	}
	e := serverEntry{url: "http://" + net.JoinHostPort(host, port) + streamable.MCPPath}
	var notes []string
	// The server's own token, made now if it was never started (not
	// with --print, which writes nothing).
	from, token, err := entryToken(o, print)
	if err != nil {
		return serverEntry{}, nil, err
	}
	switch {
	case c.tokenRef != "" && !o.http.noAuth:
		e.token = c.tokenRef
		where := "to the token in " + from
		if from == "" {
			where = "as it is set here"
		}
		notes = append(notes, fmt.Sprintf("the entry names %s, which %s fills in from %s: set it there %s", c.tokenRef, c.title, c.tokenFrom, where))
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
	path, token, _, _, err = o.http.loadToken(false)
	if err != nil && errors.Is(err, fs.ErrNotExist) && o.http.authTokenFile == "" && os.Getenv(tokenEnv) == "" {
		return streamable.DefaultTokenPath(), "", nil
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

// clientToken returns what an HTTP client of this server needs: the token
// and the file it is in (path is "" when the token comes from
// TAIRSEACH_MCP_TOKEN; both are "" with --no-auth). It creates the default
// token file when missing, as the server's first start would, so that a
// client can be configured before the server ever ran.
func clientToken(o *options) (path, token string, err error) {
	if o.http.noAuth {
		return "", "", nil
	}
	path, token, _, _, err = o.http.loadToken(true)
	return path, token, err
}
