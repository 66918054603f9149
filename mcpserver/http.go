package mcpserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/socketrpc"
)

// Defaults of the HTTP transport.
const (
	// DefaultMaxRequestBytes caps one request body (the go-sdk's default).
	DefaultMaxRequestBytes = mcp.DefaultMaxRequestBodyBytes
	// HealthPingTimeout bounds each backend check of /healthz.
	HealthPingTimeout = time.Second
)

// Paths served by the HTTP transport.
const (
	MCPPath    = "/mcp"
	HealthPath = "/healthz"
)

// HTTPConfig configures the streamable HTTP transport.
type HTTPConfig struct {
	// Stateless serves every request in a session of its own: no
	// Mcp-Session-Id and no standalone stream, so no list_changed for
	// clients of the 2025 protocols.
	Stateless bool
	// Token, when not empty, is the bearer token every request (/mcp and
	// /healthz) must carry.
	Token string
	// MaxRequestBytes caps one request body; zero means DefaultMaxRequestBytes.
	MaxRequestBytes int64
	// SessionTimeout closes sessions that sent no request for this long;
	// zero keeps them until the client deletes them or the server stops.
	SessionTimeout time.Duration
	// DrainTimeout bounds how long shutdown waits for requests in flight;
	// zero waits as long as they take.
	DrainTimeout time.Duration
	// Manifests is the manifests directory, as /healthz reports it.
	Manifests string
}

// Health is what /healthz reports.
type Health struct {
	// Status is "ok" when every backend accepts connections, else "degraded".
	Status    string          `json:"status"`
	Tools     int             `json:"tools"`
	Manifests string          `json:"manifests,omitempty"`
	Backends  []BackendHealth `json:"backends"`
}

// BackendHealth is the state of one backend socket.
type BackendHealth struct {
	Socket    string `json:"socket"`
	Reachable bool   `json:"reachable"`
	Error     string `json:"error,omitempty"`
}

// Health checks the backends the served tools route to (and the default
// socket), each with a connect of at most HealthPingTimeout, at once.
func (s *Server) Health(ctx context.Context) Health {
	tools, clients := s.backends()
	h := Health{Status: "ok", Tools: tools, Backends: make([]BackendHealth, len(clients))}
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, HealthPingTimeout)
			defer cancel()
			b := BackendHealth{Socket: c.Path(), Reachable: true}
			if err := c.Ping(pctx); err != nil {
				b.Reachable, b.Error = false, err.Error()
			}
			h.Backends[i] = b
		})
	}
	wg.Wait()
	for _, b := range h.Backends {
		if !b.Reachable {
			h.Status = "degraded"
		}
	}
	return h
}

// backends returns the number of tools served and the clients of the
// sockets they route to, plus the default socket's, sorted by path.
func (s *Server) backends() (int, []*socketrpc.Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	table := s.routes.Load()
	seen := map[string]*socketrpc.Client{}
	def := s.client("")
	seen[def.Path()] = def
	for _, r := range table.byName {
		seen[r.client.Path()] = r.client
	}
	out := make([]*socketrpc.Client, 0, len(seen))
	for _, c := range seen {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *socketrpc.Client) int { return strings.Compare(a.Path(), b.Path()) })
	return len(table.byName), out
}

// httpHandler serves /mcp and /healthz and counts the requests that a
// shutdown must wait for.
type httpHandler struct {
	s       *Server
	cfg     HTTPConfig
	handler http.Handler // the whole tree, protections included
	// inFlight counts POSTs to /mcp being served, except subscriptions/listen
	// streams, which only end when their session does.
	inFlight atomic.Int64
}

// NewHTTPHandler returns the handler of the HTTP transport: MCP streamable
// HTTP at /mcp, served by the one shared go-sdk server so that every session
// sees the same tools and is told when they change, and /healthz. Requests
// with a cross-origin Origin are refused with 403, and so are requests that
// reached a loopback address under a Host that is not (DNS rebinding). With
// cfg.Token, every request needs "Authorization: Bearer <token>" (401
// otherwise).
func (s *Server) NewHTTPHandler(cfg HTTPConfig) http.Handler {
	return s.newHTTPHandler(cfg)
}

func (s *Server) newHTTPHandler(cfg HTTPConfig) *httpHandler {
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	h := &httpHandler{s: s, cfg: cfg}
	// MCP registers every tool with the go-sdk server first, so that the
	// go-sdk answers tool requests and tells every session of each reload.
	s.MCP()
	streamable := mcp.NewStreamableHTTPHandler(s.serverFor, &mcp.StreamableHTTPOptions{
		Stateless:           cfg.Stateless,
		SessionTimeout:      cfg.SessionTimeout,
		MaxRequestBodyBytes: cfg.MaxRequestBytes,
		Logger:              slog.New(newSlogHandler(s.log)),
		// DisableLocalhostProtection stays false: the go-sdk refuses a
		// request that reached a loopback address with a Host that is not
		// loopback.
	})
	mux := http.NewServeMux()
	mux.Handle(MCPPath, h.counting(s.narrowByHeaders(streamable)))
	mux.Handle(HealthPath, h.localhostOnly(http.HandlerFunc(h.serveHealth)))

	var handler http.Handler = mux
	if cfg.Token != "" {
		handler = requireToken(cfg.Token, s, handler)
	}
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.log.Debug().Str("origin", r.Header.Get("Origin")).Str("host", r.Host).Str("path", r.URL.Path).Msg("refused a cross-origin request")
		http.Error(w, "Forbidden: cross-origin request", http.StatusForbidden)
	}))
	h.handler = cop.Handler(handler)
	return h
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.handler.ServeHTTP(w, r) }

// counting counts the POSTs a shutdown waits for. A client of the 2026
// draft names the method in Mcp-Method (the go-sdk checks it against the
// body); its subscriptions/listen stream is not waited for.
func (h *httpHandler) counting(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Method") != "subscriptions/listen" {
			h.inFlight.Add(1)
			defer h.inFlight.Add(-1)
		}
		next.ServeHTTP(w, r)
	})
}

// localhostOnly is the go-sdk's DNS-rebinding check, for the paths it does
// not serve: a request that reached a loopback address must name a loopback
// host.
func (h *httpHandler) localhostOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && isLoopback(local.String()) && !isLoopback(r.Host) {
			h.s.log.Debug().Str("host", r.Host).Str("path", r.URL.Path).Msg("refused a request with a non-loopback Host on a loopback address")
			http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (h *httpHandler) serveHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	health := h.s.Health(r.Context())
	health.Manifests = h.cfg.Manifests
	b, err := json.Marshal(health)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(append(b, '\n'))
}

// requireToken refuses requests without "Authorization: Bearer token". The
// comparison is of SHA-256 digests in constant time, so that neither the
// token's bytes nor its length show in the timing.
func requireToken(token string, s *Server, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		sum := sha256.Sum256([]byte(strings.TrimSpace(got)))
		if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			s.log.Debug().Str("remote", r.RemoteAddr).Str("path", r.URL.Path).Msg("refused a request without the bearer token")
			w.Header().Set("WWW-Authenticate", `Bearer realm="tairseach-mcp"`)
			http.Error(w, "Unauthorized: a valid bearer token is required", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// isLoopback reports whether addr (host or host:port) is "localhost" or a
// loopback IP.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// IsLoopbackHost reports whether host (a name or an IP, without a port) is
// "localhost" or a loopback IP: a listener there is reachable from this
// machine only.
func IsLoopbackHost(host string) bool { return isLoopback(host) }

// ServeHTTPListener serves the HTTP transport on ln until ctx is cancelled,
// then shuts down gracefully: it stops accepting connections, waits for the
// requests in flight, closes every session and returns. When cfg.DrainTimeout
// passes first, it cuts the requests still running off by closing the
// backend connections, which leaves s closed. It closes ln.
func (s *Server) ServeHTTPListener(ctx context.Context, ln net.Listener, cfg HTTPConfig) error {
	h := s.newHTTPHandler(cfg)
	srv := &http.Server{
		Handler: h,
		// No ReadTimeout or WriteTimeout: event streams stay open as long
		// as their session.
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(newSlogHandler(s.log), slog.LevelDebug),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serving HTTP: %w", err)
	case <-ctx.Done():
	}

	start := time.Now()
	s.log.Info().Int64("in_flight", h.inFlight.Load()).Msg("shutting down: finishing the requests in flight")
	drainCtx := context.Background()
	if cfg.DrainTimeout > 0 {
		var cancel context.CancelFunc
		drainCtx, cancel = context.WithTimeout(drainCtx, cfg.DrainTimeout)
		defer cancel()
	}
	// Shutdown closes the listener and idle connections at once, then
	// waits for the active ones: requests in flight, and event streams,
	// which end when their sessions are closed below.
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(drainCtx) }()
	h.waitIdle(drainCtx)
	cutOff := drainCtx.Err() != nil
	if cutOff {
		s.log.Warn().Int64("in_flight", h.inFlight.Load()).Dur("drain_timeout", cfg.DrainTimeout).
			Msg("requests still running after the drain timeout; cutting them off")
		// Closing the backend connections fails the calls still running,
		// so that their handlers return and their sessions can close.
		_ = srv.Close()
		_ = s.Close()
	}
	s.closeSessions(sessionCloseGrace)
	if err := <-shut; err != nil && !cutOff {
		_ = srv.Close()
	}
	<-served
	s.log.Info().Dur("took", time.Since(start)).Msg("HTTP server stopped")
	return nil
}

// sessionCloseGrace bounds the wait for sessions to close at shutdown, once
// their requests are done or cut off.
const sessionCloseGrace = 2 * time.Second

// closeSessions closes every session at once: their event streams end and
// their subscriptions are cancelled. A session closes once its requests are
// answered; after grace, closeSessions stops waiting, leaving the closing
// goroutine to the process's exit.
func (s *Server) closeSessions(grace time.Duration) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for ss := range s.allSessions() {
			wg.Go(func() { _ = ss.Close() })
		}
		wg.Wait()
	}()
	select {
	case <-done:
	case <-time.After(grace):
		s.log.Warn().Dur("waited", grace).Msg("sessions still closing at shutdown; not waiting for them")
	}
}

// waitIdle returns when no counted request is in flight or ctx is done.
func (h *httpHandler) waitIdle(ctx context.Context) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for h.inFlight.Load() > 0 {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
