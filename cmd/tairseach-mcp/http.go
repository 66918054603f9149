package main

// The flags of --transport http and the bearer token they lead to;
// serveHTTP (serve.go) serves on them.

import (
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/geilt/tairseach-mcp/internal/quote"
	"github.com/geilt/tairseach-mcp/mcpserver/streamable"
)

// tokenEnv holds the bearer token itself (streamable.TokenEnv).
const tokenEnv = streamable.TokenEnv

// Defaults of the HTTP flags.
const (
	// defaultSessionTimeout closes a session idle this long: longer than a
	// person leaves a chat open without a word, short enough that abandoned
	// sessions do not pile up. A client of the protocol starts a new session
	// when told (404) that its own is gone.
	defaultSessionTimeout = 30 * time.Minute
	// defaultMaxSessions is far more than one machine's clients open at once
	// and bounds what abandoned sessions hold (~15 KB each).
	defaultMaxSessions = 1000
)

// httpOptions are the flags of --transport http.
type httpOptions struct {
	listen          string
	stateless       bool
	authTokenFile   string
	noAuth          bool
	maxRequestBytes int64
	sessionTimeout  time.Duration
	maxSessions     int
	readTimeout     time.Duration

	// Filled in by resolve.
	token       string
	tokenSource string // --auth-token-file, TAIRSEACH_MCP_TOKEN or the default file
	tokenPath   string // the file the token is in, "" when from the environment
	tokenMade   bool   // the default file was created by this start
}

func (h *httpOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&h.listen, "listen", "127.0.0.1:8765", "with --transport http: address to serve on, `HOST:PORT`")
	f.BoolVar(&h.stateless, "stateless", false, "with --transport http: no sessions; each request stands alone (no list_changed for 2025 clients)")
	f.StringVar(&h.authTokenFile, "auth-token-file", "", "with --transport http: `FILE` holding the bearer token clients must send (default ~/.tairseach/"+streamable.TokenFileName+", created at first start; or set "+tokenEnv+")")
	f.BoolVar(&h.noAuth, "no-auth", false, "with --transport http on loopback: serve without a token, to every local user (unsafe)")
	f.Int64Var(&h.maxRequestBytes, "max-request-bytes", streamable.DefaultMaxRequestBytes, "with --transport http: largest request body accepted")
	f.DurationVar(&h.sessionTimeout, "session-timeout", defaultSessionTimeout, "with --transport http: close sessions idle this long, with no request and no event stream open (0: never)")
	f.DurationVar(&h.readTimeout, "read-timeout", streamable.DefaultBodyTimeout, "with --transport http: longest wait for a request's headers and body (a slow client is cut off)")
	f.IntVar(&h.maxSessions, "max-sessions", defaultMaxSessions, "with --transport http: most live sessions; over it, the one idle the longest is closed (0: no cap)")
}

// resolve checks the HTTP flags and reads (or, the first time, makes)
// the token. Every local user can reach a loopback port, so a token is
// needed there too; --no-auth waives it on loopback only.
func (h *httpOptions) resolve() error {
	host, port, err := net.SplitHostPort(h.listen)
	if err != nil {
		return usageError{fmt.Errorf("--listen %s: want host:port, such as 127.0.0.1:8765", quote.Line(h.listen, quote.Text))}
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return usageError{fmt.Errorf("--listen %s: bad port %s", quote.Line(h.listen, quote.Text), quote.Line(port, quote.Text))}
	}
	if h.maxRequestBytes <= 0 {
		return usageError{fmt.Errorf("--max-request-bytes %d: must be positive", h.maxRequestBytes)}
	}
	if h.sessionTimeout < 0 {
		return usageError{fmt.Errorf("--session-timeout %s: must not be negative", h.sessionTimeout)}
	}
	if h.readTimeout <= 0 {
		return usageError{fmt.Errorf("--read-timeout %s: must be positive", h.readTimeout)}
	}
	if h.maxSessions < 0 {
		return usageError{fmt.Errorf("--max-sessions %d: must not be negative", h.maxSessions)}
	}
	if h.noAuth {
		if h.authTokenFile != "" {
			return usageError{fmt.Errorf("--no-auth and --auth-token-file: pass one or the other")}
		}
		if !streamable.IsLoopbackHost(host) {
			shown := host
			if shown == "" {
				shown = "every interface"
			}
			return usageError{fmt.Errorf("--no-auth --listen %s: serving on %s without a token would let the network call your tools; "+
				"drop --no-auth (clients then send the token in ~/.tairseach/%s), or listen on 127.0.0.1", h.listen, shown, streamable.TokenFileName)}
		}
		return nil
	}
	path, token, made, source, err := h.loadToken(true)
	if err != nil {
		return usageError{err}
	}
	h.tokenPath, h.token, h.tokenMade, h.tokenSource = path, token, made, source
	return nil
}

// loadToken finds the token the way the server does: --auth-token-file,
// else TAIRSEACH_MCP_TOKEN, else the default file, which is created when
// missing and create is set. It returns the file ("" for the environment),
// the token, whether the file was created, and where the token came from.
func (h *httpOptions) loadToken(create bool) (path, token string, made bool, source string, err error) {
	switch {
	case h.authTokenFile != "":
		home, _ := os.UserHomeDir()
		path = expandHome(h.authTokenFile, home)
		source = "--auth-token-file " + path
		token, err = streamable.ReadTokenFile(path)
		if err != nil {
			return "", "", false, "", fmt.Errorf("--auth-token-file: %w", err)
		}
	case os.Getenv(tokenEnv) != "":
		token, source = strings.TrimSpace(os.Getenv(tokenEnv)), tokenEnv
	default:
		path = streamable.DefaultTokenPath()
		source = path
		token, made, err = streamable.ReadOrMakeTokenFile(path, create)
		if err != nil {
			return "", "", false, "", err
		}
	}
	if err := streamable.CheckToken(token, source); err != nil {
		return "", "", false, "", err
	}
	return path, token, made, source, nil
}
