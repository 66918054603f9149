package install

// The entry install writes: the command that starts this binary with the
// flags that change what is served, or the URL and token of an HTTP server.

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/geilt/tairseach-mcp/internal/clientconfig"
	"github.com/geilt/tairseach-mcp/internal/quote"
	"github.com/geilt/tairseach-mcp/mcpserver/streamable"
)

// Server is what a client needs to reach tairseach: a command to start,
// or a URL and the token to send.
type Server struct {
	Command string
	Args    []string
	URL     string
	Token   string
}

// The members of the entries install writes, for the clients' rows. A
// member without a value is one install owns and that this form of the
// entry (command and args, or the address and headers) does not have, nor
// an entry of a client that does not take it: install takes it out.

// none is a member the entry does not have.
func none(key string) clientconfig.Field { return clientconfig.Field{Key: key} }

// kind is "type": "stdio" or "http".
func kind(e Server) clientconfig.Field {
	if e.URL != "" {
		return clientconfig.Field{Key: "type", Value: "http"}
	}
	return clientconfig.Field{Key: "type", Value: "stdio"}
}

// command is the command that starts the server, of a stdio entry.
func command(e Server) clientconfig.Field {
	if e.URL != "" {
		return none("command")
	}
	return clientconfig.Field{Key: "command", Value: e.Command}
}

// args are the command's arguments, of a stdio entry.
func args(e Server) clientconfig.Field {
	if e.URL != "" {
		return none("args")
	}
	return clientconfig.Field{Key: "args", Value: e.Args}
}

// address is the server's URL under key, of an HTTP entry.
func address(key string, e Server) clientconfig.Field {
	if e.URL == "" {
		return none(key)
	}
	return clientconfig.Field{Key: key, Value: e.URL}
}

// headers are the HTTP headers under key, of which install owns
// Authorization, of an HTTP entry.
func headers(key string, e Server) clientconfig.Field {
	if e.URL == "" {
		return none(key)
	}
	auth := none("Authorization")
	if e.Token != "" {
		auth.Value = "Bearer " + e.Token
	}
	return clientconfig.Field{Key: key, Sub: []clientconfig.Field{auth}}
}

// buildEntry is the client's entry for this binary and these flags, and
// notes for the user about what was carried or left out. A token cfg.Token
// does not give (--print makes none) is shown as a placeholder.
func buildEntry(c Client, cfg Config) (Server, []string, error) {
	exe, err := Executable()
	if err != nil {
		return Server{}, nil, err
	}
	notes := slices.Clone(cfg.Notes)
	if cfg.HTTP && c.HTTP {
		// The flags go to the server's command line, shown in a note.
		return buildHTTPEntry(c, cfg, exe)
	}
	if len(cfg.Left) > 0 {
		why := c.Title + " starts tairseach-mcp itself and talks to it on stdin and stdout"
		if cfg.HTTP {
			why = c.Title + " starts its servers itself, over stdio; its file takes no URLs"
		}
		notes = append(notes, fmt.Sprintf("left out of the entry: %s; %s", strings.Join(cfg.Left, ", "), why))
	}
	return Server{Command: exe, Args: cfg.Args}, notes, nil
}

func buildHTTPEntry(c Client, cfg Config, exe string) (Server, []string, error) {
	host, port, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return Server{}, nil, usageError{fmt.Errorf("--listen %s: want host:port, such as 127.0.0.1:8765", quote.Line(cfg.Listen, quote.Text))}
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1" // the server listens on every address; loopback is one of them
	}
	e := Server{URL: "http://" + net.JoinHostPort(host, port) + streamable.MCPPath}
	var notes []string
	// The server's own token, made now if it was never started (not
	// with --print, which writes nothing).
	from, token, err := cfg.Token()
	if err != nil {
		return Server{}, nil, err
	}
	switch {
	case c.TokenRef != "" && !cfg.NoAuth:
		e.Token = c.TokenRef
		where := "to the token in " + from
		if from == "" {
			where = "as it is set here"
		}
		notes = append(notes, fmt.Sprintf("the entry names %s, which %s fills in from %s: set it there %s", c.TokenRef, c.Title, c.tokenFrom, where))
	case token == "" && !cfg.NoAuth:
		e.Token = "<the token in " + from + ">"
		notes = append(notes, from+" does not exist yet: the entry shows a placeholder for the token; install without --print makes it (0600), as the server's first start would")
	case token != "":
		e.Token = token
		if from == "" {
			from = streamable.TokenEnv
		}
		notes = append(notes, "the entry carries the bearer token from "+from+"; keep the file private")
	default:
		notes = append(notes, "--no-auth: the entry has no Authorization header, and any local user can reach the tools")
	}
	serveArgs := append([]string{exe, "--transport=http", "--listen=" + cfg.Listen}, cfg.Args...)
	if cfg.AuthTokenFile != "" {
		serveArgs = append(serveArgs, "--auth-token-file="+cfg.AuthTokenFile)
	}
	if cfg.NoAuth {
		serveArgs = append(serveArgs, "--no-auth")
	}
	notes = append(notes, fmt.Sprintf("%s connects to %s: keep the server running there, for example with %s", c.Title, e.URL, strings.Join(serveArgs, " ")))
	return e, notes, nil
}

// Executable is the absolute path of this binary, symlinks resolved (a
// client starts it from a directory and PATH of its own), except that a
// Homebrew install is named by its opt link, which brew upgrade keeps valid,
// rather than by the versioned Cellar directory it replaces.
func Executable() (string, error) {
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
