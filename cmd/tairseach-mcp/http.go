package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
	// tokenFileName is the default token file, under ~/.tairseach.
	tokenFileName = "mcp-token"
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

	// Filled in by resolveHTTP.
	token       string
	tokenSource string // --auth-token-file, TAIRSEACH_MCP_TOKEN or the default file
	tokenPath   string // the file the token is in, "" when from the environment
	tokenMade   bool   // the default file was created by this start
}

func (h *httpOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&h.listen, "listen", "127.0.0.1:8765", "with --transport http: address to serve on, `HOST:PORT`")
	f.BoolVar(&h.stateless, "stateless", false, "with --transport http: no sessions; each request stands alone (no list_changed for 2025 clients)")
	f.StringVar(&h.authTokenFile, "auth-token-file", "", "with --transport http: `FILE` holding the bearer token clients must send (default ~/.tairseach/"+tokenFileName+", created at first start; or set "+tokenEnv+")")
	f.BoolVar(&h.noAuth, "no-auth", false, "with --transport http on loopback: serve without a token, to every local user (unsafe)")
	f.Int64Var(&h.maxRequestBytes, "max-request-bytes", mcpserver.DefaultMaxRequestBytes, "with --transport http: largest request body accepted")
	f.DurationVar(&h.sessionTimeout, "session-timeout", defaultSessionTimeout, "with --transport http: close sessions idle this long, with no request and no event stream open (0: never)")
	f.DurationVar(&h.readTimeout, "read-timeout", mcpserver.DefaultBodyTimeout, "with --transport http: longest wait for a request's headers and body (a slow client is cut off)")
	f.IntVar(&h.maxSessions, "max-sessions", defaultMaxSessions, "with --transport http: most live sessions; over it, the one idle the longest is closed (0: no cap)")
}

// resolveHTTP checks the HTTP flags and reads (or, the first time, makes)
// the token. Every local user can reach a loopback port, so a token is
// needed there too; --no-auth waives it on loopback only.
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
		if !mcpserver.IsLoopbackHost(host) {
			shown := host
			if shown == "" {
				shown = "every interface"
			}
			return usageError{fmt.Errorf("--no-auth --listen %s: serving on %s without a token would let the network call your tools; "+
				"drop --no-auth (clients then send the token in ~/.tairseach/%s), or listen on 127.0.0.1", h.listen, shown, tokenFileName)}
		}
		return nil
	}
	path, token, made, source, err := o.loadToken(true)
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
func (o *options) loadToken(create bool) (path, token string, made bool, source string, err error) {
	h := &o.http
	switch {
	case h.authTokenFile != "":
		home, _ := os.UserHomeDir()
		path = expandHome(h.authTokenFile, home)
		source = "--auth-token-file " + path
		token, err = readTokenFile(path)
		if err != nil {
			return "", "", false, "", fmt.Errorf("--auth-token-file: %w", err)
		}
	case os.Getenv(tokenEnv) != "":
		token, source = strings.TrimSpace(os.Getenv(tokenEnv)), tokenEnv
	default:
		path = defaultTokenPath()
		source = path
		token, made, err = readOrMakeTokenFile(path, create)
		if err != nil {
			return "", "", false, "", err
		}
	}
	if len(token) < minTokenLen || strings.ContainsFunc(token, func(r rune) bool { return r <= ' ' || r >= 0x7f }) {
		return "", "", false, "", fmt.Errorf("the token in %s must be at least %d printable ASCII characters without spaces; make one with: openssl rand -hex 32", source, minTokenLen)
	}
	return path, token, made, source, nil
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
	path, token, _, _, err = o.loadToken(true)
	return path, token, err
}

// defaultTokenPath is ~/.tairseach/mcp-token.
func defaultTokenPath() string {
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".tairseach", tokenFileName)
}

// readTokenFile reads a token file that only its owner, the user running
// the server, can read: a symlink, anything but a regular file, a file of
// another user or one readable by group or others is refused, since anyone
// who can read or swap it can call the tools.
func readTokenFile(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return "", fmt.Errorf("%s is a symlink; a token file must be a regular file: rm %s, then start again to make a new one (or point at the real file)", path, path)
		}
		return "", wrappedError{fmt.Sprintf("%s: %s", path, describeOSError(err)), err}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file (%s); a token file must be one: remove it and start again to make a new one", path, fi.Mode().Type())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return "", fmt.Errorf("%s belongs to uid %d, not to you (uid %d); another user could read or change it: remove it and start again to make a new one", path, st.Uid, os.Geteuid())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("%s is readable by other users (mode %s), who could then call your tools: chmod 600 %s (and make a new token if others may have read it)", path, perm, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", fmt.Errorf("%s: %s", path, describeOSError(err))
	}
	return strings.TrimSpace(string(b)), nil
}

// wrappedError is a message for people that still matches its cause.
type wrappedError struct {
	msg   string
	cause error
}

func (e wrappedError) Error() string { return e.msg }
func (e wrappedError) Unwrap() error { return e.cause }

// readOrMakeTokenFile reads the token file at path or, when it does not
// exist and create is set, makes it: 32 random bytes in hex, mode 0600, in
// a directory made 0700 when missing. The file is written under a temporary
// name and linked into place, which fails when the name exists: of two
// servers starting at once, one makes the token and both use it, and no one
// ever reads a half-written file.
func readOrMakeTokenFile(path string, create bool) (token string, made bool, err error) {
	token, err = readTokenFile(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) || !create {
		return token, false, err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", false, fmt.Errorf("making %s for the token: %s", dir, describeOSError(err))
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", false, err
	}
	token = hex.EncodeToString(raw)
	tmp, err := os.CreateTemp(dir, "."+tokenFileName+".*")
	if err != nil {
		return "", false, fmt.Errorf("writing the token in %s: %s", dir, describeOSError(err))
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600.
	_, err = tmp.WriteString(token + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", false, fmt.Errorf("writing the token in %s: %s", dir, describeOSError(err))
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			// Another server made it first: use that one.
			token, err = readTokenFile(path)
			return token, false, err
		}
		return "", false, fmt.Errorf("writing the token to %s: %s", path, describeOSError(err))
	}
	return token, true, nil
}

// serveHTTP serves srv over streamable HTTP until ctx is cancelled.
func serveHTTP(ctx context.Context, o *options, srv *mcpserver.Server, hurry <-chan struct{}, log zerolog.Logger) error {
	h := &o.http
	host, _, _ := net.SplitHostPort(h.listen) // checked by resolveHTTP
	switch {
	case h.noAuth:
		log.Warn().Msg("--no-auth: every user and process on this machine can call the tools")
	case h.tokenMade:
		log.Info().Str("token_file", h.tokenPath).Msg("made a new bearer token; clients send it as Authorization: Bearer <token>")
	}
	ln, err := net.Listen("tcp", h.listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", h.listen, err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	if h.token == "" && !addr.IP.IsLoopback() {
		// A name such as "localhost" resolved to something else.
		ln.Close()
		return fmt.Errorf("--no-auth --listen %s bound %s, which is not loopback; drop --no-auth, or listen on 127.0.0.1", h.listen, addr)
	}
	ev := log.Info().Bool("stateless", h.stateless).Bool("auth", h.token != "")
	if h.token != "" {
		ev = ev.Str("token_from", h.tokenSource)
	}
	if !h.stateless {
		ev = ev.Stringer("session_timeout", h.sessionTimeout).Int("max_sessions", h.maxSessions)
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
		MaxSessions:     h.maxSessions,
		ReadTimeout:     h.readTimeout,
		// The HTTP transport ends only on a stop signal.
		DrainTimeout: min(o.drainTimeout, o.shutdownGrace),
		Manifests:    o.manifests,
		TokenHint:    tokenHint(h.tokenPath),
		Hurry:        hurry,
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// tokenHint says where a client finds the token: its file, with ~ for the
// home directory, or the server's environment.
func tokenHint(path string) string {
	if path == "" {
		return "the token in TAIRSEACH_MCP_TOKEN of the server's environment"
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" && strings.HasPrefix(path, home+string(filepath.Separator)) {
		path = "~" + path[len(home):]
	}
	return "the token in " + path
}
