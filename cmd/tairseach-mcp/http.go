package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/pflag"

	"github.com/geilt/tairseach-mcp/mcpserver"
)

// tokenEnv holds the bearer token itself; it has no flag, so that the token
// never shows in a process listing.
const tokenEnv = "TAIRSEACH_MCP_TOKEN"

// minTokenLen keeps guessable tokens off the network.
const minTokenLen = 16

// httpOptions are the flags of --transport http.
type httpOptions struct {
	listen          string
	stateless       bool
	authTokenFile   string
	maxRequestBytes int64
	sessionTimeout  time.Duration

	// Filled in by resolveHTTP.
	token       string
	tokenSource string // --auth-token-file or TAIRSEACH_MCP_TOKEN
}

func (h *httpOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&h.listen, "listen", "127.0.0.1:8765", "with --transport http: address to serve on; other than loopback needs a token")
	f.BoolVar(&h.stateless, "stateless", false, "with --transport http: no sessions; each request stands alone (no list_changed)")
	f.StringVar(&h.authTokenFile, "auth-token-file", "", "with --transport http: file holding the bearer token clients must send (or set "+tokenEnv+")")
	f.Int64Var(&h.maxRequestBytes, "max-request-bytes", mcpserver.DefaultMaxRequestBytes, "with --transport http: largest request body accepted")
	f.DurationVar(&h.sessionTimeout, "session-timeout", 0, "with --transport http: close sessions idle this long (default: keep them)")
}

// resolveHTTP checks the HTTP flags and reads the token. Serving on an
// address other than loopback without a token is refused.
func (o *options) resolveHTTP() error {
	h := &o.http
	host, port, err := net.SplitHostPort(h.listen)
	if err != nil {
		return usageError{fmt.Errorf("--listen %q: want host:port, such as 127.0.0.1:8765", h.listen)}
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return usageError{fmt.Errorf("--listen %q: bad port %q", h.listen, port)}
	}
	if h.maxRequestBytes <= 0 {
		return usageError{fmt.Errorf("--max-request-bytes %d: must be positive", h.maxRequestBytes)}
	}
	if h.sessionTimeout < 0 {
		return usageError{fmt.Errorf("--session-timeout %s: must not be negative", h.sessionTimeout)}
	}
	switch {
	case h.authTokenFile != "":
		b, err := os.ReadFile(h.authTokenFile)
		if err != nil {
			return usageError{fmt.Errorf("--auth-token-file: %w", err)}
		}
		h.token, h.tokenSource = strings.TrimSpace(string(b)), "--auth-token-file "+h.authTokenFile
	case os.Getenv(tokenEnv) != "":
		h.token, h.tokenSource = strings.TrimSpace(os.Getenv(tokenEnv)), tokenEnv
	}
	if h.tokenSource != "" {
		if len(h.token) < minTokenLen || strings.ContainsFunc(h.token, func(r rune) bool { return r <= ' ' || r >= 0x7f }) {
			return usageError{fmt.Errorf("the token in %s must be at least %d printable ASCII characters without spaces; make one with: openssl rand -hex 32", h.tokenSource, minTokenLen)}
		}
	}
	if h.token == "" && !mcpserver.IsLoopbackHost(host) {
		shown := host
		if shown == "" {
			shown = "every interface"
		}
		return usageError{fmt.Errorf("--listen %s: serving on %s, beyond this machine, needs a bearer token; "+
			"put one in a file and pass --auth-token-file FILE (or set %s), for example: openssl rand -hex 32 > ~/.tairseach/mcp-token && chmod 600 ~/.tairseach/mcp-token; "+
			"or listen on 127.0.0.1", h.listen, shown, tokenEnv)}
	}
	return nil
}

// serveHTTP serves srv over streamable HTTP until ctx is cancelled.
func serveHTTP(ctx context.Context, o *options, srv *mcpserver.Server, log zerolog.Logger) error {
	h := &o.http
	host, _, _ := net.SplitHostPort(h.listen) // checked by resolveHTTP
	if h.authTokenFile != "" {
		if fi, err := os.Stat(h.authTokenFile); err == nil && fi.Mode().Perm()&0o077 != 0 {
			log.Warn().Str("file", h.authTokenFile).Str("mode", fi.Mode().Perm().String()).
				Msg("the token file is readable by other users; chmod 600 it")
		}
	}
	ln, err := net.Listen("tcp", h.listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", h.listen, err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	if h.token == "" && !addr.IP.IsLoopback() {
		// A name such as "localhost" resolved to something else.
		ln.Close()
		return fmt.Errorf("--listen %s bound %s, which is not loopback; pass --auth-token-file FILE, or listen on 127.0.0.1", h.listen, addr)
	}
	ev := log.Info().Bool("stateless", h.stateless).Bool("auth", h.token != "")
	if h.token != "" {
		ev = ev.Str("token_from", h.tokenSource)
	}
	// Log the host asked for (0.0.0.0 rather than Go's [::]) with the port bound.
	shown := net.JoinHostPort(host, fmt.Sprint(addr.Port))
	if host == "" {
		shown = addr.String()
	}
	ev.Msgf("listening on http://%s%s", shown, mcpserver.MCPPath)
	err = srv.ServeHTTPListener(ctx, ln, mcpserver.HTTPConfig{
		Stateless:       h.stateless,
		Token:           h.token,
		MaxRequestBytes: h.maxRequestBytes,
		SessionTimeout:  h.sessionTimeout,
		DrainTimeout:    o.drainTimeout,
		Manifests:       o.manifests,
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
