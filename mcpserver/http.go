package mcpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/internal/jsonenc"
	"github.com/geilt/tairseach-mcp/socketrpc"
)

// Defaults of the HTTP transport.
const (
	// DefaultMaxRequestBytes caps one request body (the go-sdk's default).
	DefaultMaxRequestBytes = mcp.DefaultMaxRequestBodyBytes
	// HealthPingTimeout bounds each backend check of /healthz.
	HealthPingTimeout = time.Second
	// DefaultBodyTimeout bounds the read of one request body.
	DefaultBodyTimeout = 30 * time.Second
	// ReadHeaderTimeout bounds the read of a request's headers.
	ReadHeaderTimeout = 10 * time.Second
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
	// SessionTimeout closes sessions that had no request being served, event
	// streams included, for this long; zero keeps them until the client
	// deletes them or the server stops.
	SessionTimeout time.Duration
	// MaxSessions caps the live sessions of the 2025 revisions: when a new
	// one would go over it, the session idle the longest is closed first.
	// It caps the open subscriptions/listen streams of the 2026 revision
	// too: one more is refused with 503. Zero means no cap.
	MaxSessions int
	// ReadTimeout bounds the read of one request's headers (at most
	// ReadHeaderTimeout) and of its body, so that a client that sends them
	// slowly cannot hold a connection; zero means DefaultBodyTimeout.
	ReadTimeout time.Duration
	// DrainTimeout bounds how long shutdown waits for requests in flight;
	// zero waits as long as they take.
	DrainTimeout time.Duration
	// Manifests is the manifests directory, as /healthz reports it.
	Manifests string
	// TokenHint says where a client finds the token ("the token in
	// ~/.tairseach/mcp-token"); a refused request is told it.
	TokenHint string
}

// Health is what /healthz reports.
type Health struct {
	// Status is "ok" when every backend accepts connections, else "degraded".
	Status    string `json:"status"`
	Tools     int    `json:"tools"`
	Manifests string `json:"manifests,omitempty"`
	// Sessions is the number of live HTTP sessions (2025 revisions).
	Sessions int `json:"sessions"`
	// Listening is the number of open subscriptions/listen streams (2026).
	Listening int             `json:"listening"`
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
	// stateful serves the clients of the 2025 revisions, in sessions;
	// stateless serves those of 2026-07-28 and later, which have none.
	stateful, stateless http.Handler
	sessions            *sessionTracker
	listening           atomic.Int64 // open subscriptions/listen streams
	// inFlight counts POSTs to /mcp being served, except subscriptions/listen
	// streams, which only end when their session does.
	inFlight atomic.Int64
}

// NewHTTPHandler returns the handler of the HTTP transport: MCP streamable
// HTTP at /mcp, served by the one shared go-sdk server so that every session
// sees the same tools and is told when they change, and /healthz. Requests
// with a cross-origin Origin or Sec-Fetch-Site are refused with 403 whatever
// their method, and so are requests that reached a loopback address under a
// Host that is not (DNS rebinding). With cfg.Token, every request needs
// "Authorization: Bearer <token>" (401 otherwise).
//
// Clients of the 2025 revisions get sessions (Mcp-Session-Id); a request
// without a session that names revision 2026-07-28 or later, in its
// MCP-Protocol-Version header or its _meta, is served on its own, as that
// revision wants, by the same go-sdk server.
func (s *Server) NewHTTPHandler(cfg HTTPConfig) http.Handler {
	return s.newHTTPHandler(cfg)
}

func (s *Server) newHTTPHandler(cfg HTTPConfig) *httpHandler {
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = DefaultBodyTimeout
	}
	h := &httpHandler{s: s, cfg: cfg}
	// MCP registers every tool with the go-sdk server first, so that the
	// go-sdk answers tool requests and tells every session of each reload.
	// A request's server is the shared one, or one narrowed to the tools its
	// X-MCP-* headers select.
	s.MCP()
	getServer := s.serverFor
	logger := slog.New(newSlogHandler(s.log))
	// DisableLocalhostProtection stays false in both: the go-sdk refuses a
	// request that reached a loopback address with a Host that is not
	// loopback.
	h.stateless = mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		MaxRequestBodyBytes: cfg.MaxRequestBytes,
		Logger:              logger,
		// A 2026 request is its POST: when the client goes away, nobody
		// can get the answer, so the call to the backend is cancelled.
		PropagateRequestCancellation: true,
	})
	if cfg.Stateless {
		h.stateful = h.stateless
	} else {
		// The tracker expires idle sessions, not the go-sdk: the go-sdk
		// counts only POSTs as activity, so it would close under a client
		// the session whose event stream (GET) is open and waiting for
		// list_changed. A client that died with its stream open is found
		// out by TCP keep-alive, which ends the stream.
		h.sessions = newSessionTracker(s, cfg.MaxSessions, cfg.SessionTimeout)
		h.stateful = h.sessions.wrap(mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
			MaxRequestBodyBytes: cfg.MaxRequestBytes,
			Logger:              logger,
		}))
	}
	mux := http.NewServeMux()
	mux.Handle(MCPPath, h.counting(h.slowBodyGuard(s.narrowByHeaders(http.HandlerFunc(h.serveMCP)))))
	mux.Handle(HealthPath, h.localhostOnly(http.HandlerFunc(h.serveHealth)))

	var handler http.Handler = mux
	if cfg.Token != "" {
		handler = requireToken(cfg.Token, cfg.TokenHint, s, handler)
	}
	h.handler = sameOriginOnly(s, handler)
	return h
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.handler.ServeHTTP(w, r) }

// Protocol revisions and headers the routing looks at.
const (
	sessionlessRevision   = "2026-07-28"
	protocolVersionHeader = "Mcp-Protocol-Version"
	sessionIDHeader       = "Mcp-Session-Id"
	metaProtocolVersion   = "io.modelcontextprotocol/protocolVersion"
)

// serveMCP routes a request of revision 2026-07-28 or later without a
// session to the stateless handler, everything else to the stateful one.
func (h *httpHandler) serveMCP(w http.ResponseWriter, r *http.Request) {
	if h.sessionless(w, r) {
		if r.Header.Get("Mcp-Method") == "subscriptions/listen" {
			// Each listen stream holds a go-sdk session of its own as long
			// as it is open: they count against the same cap as sessions.
			n := h.listening.Add(1)
			defer h.listening.Add(-1)
			if max := h.cfg.MaxSessions; max > 0 && n > int64(max) {
				h.s.log.Warn().Int("max_sessions", max).Msg("refused a subscriptions/listen stream: too many open")
				http.Error(w, fmt.Sprintf("Service Unavailable: %d subscriptions/listen streams are open already (--max-sessions)", max), http.StatusServiceUnavailable)
				return
			}
		}
		h.stateless.ServeHTTP(w, r)
		return
	}
	h.stateful.ServeHTTP(w, r)
}

// sessionless reports whether r is a POST without a session of a revision
// that has none: its MCP-Protocol-Version header or the _meta of its body
// says so. It leaves r.Body as it found it.
func (h *httpHandler) sessionless(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost || r.Header.Get(sessionIDHeader) != "" {
		return false
	}
	if r.Header.Get(protocolVersionHeader) >= sessionlessRevision {
		return true
	}
	// Without the header, or with an older one, the _meta decides: a
	// request of 2026-07-28 with a missing or wrong header then gets the
	// go-sdk's "header required" or "does not match", not a refusal of the
	// revision. Such POSTs are rare (initialize), so peeking costs little.
	if r.Body == nil || r.Body == http.NoBody {
		return false
	}
	// Read at most the limit and one byte more; the handler that serves the
	// request refuses a body over the limit with 413.
	body, err := io.ReadAll(io.LimitReader(r.Body, h.cfg.MaxRequestBytes+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), errReader{err}), r.Body}
	if err != nil || !bytes.Contains(body, []byte(metaProtocolVersion)) {
		return false
	}
	var msg struct {
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return false
	}
	v, _ := msg.Params.Meta[metaProtocolVersion].(string)
	return v >= sessionlessRevision
}

// errReader returns err, or io.EOF when err is nil.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	return 0, io.EOF
}

// slowBodyGuard bounds the read of a request body by cfg.ReadTimeout: a
// client that sends its body a byte at a time gets its connection closed
// instead of holding it (and a goroutine) forever. The deadline is lifted
// once the body is read, so that the response can stream as long as it
// needs.
func (h *httpHandler) slowBodyGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if rc.SetReadDeadline(time.Now().Add(h.cfg.ReadTimeout)) != nil {
			next.ServeHTTP(w, r)
			return
		}
		r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the connection's read deadline at the end of the body.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// counting counts the POSTs a shutdown waits for. A client of the 2026
// revision names the method in Mcp-Method (the go-sdk checks it against the
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

// sameOriginOnly refuses, with 403 and whatever the method or path, a
// request that a browser sent from another site: its Sec-Fetch-Site is
// neither same-origin nor none, or its Origin does not name the host the
// request was sent to. Requests without either header (curl, the SDK
// clients) pass. Go's http.CrossOriginProtection lets GET, HEAD and OPTIONS
// through; here they are refused too, since GET /mcp opens an event stream
// and GET /healthz tells the backends' paths.
func sameOriginOnly(s *Server, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if why := crossOrigin(r); why != "" {
			s.log.Debug().Str("origin", r.Header.Get("Origin")).Str("host", r.Host).Str("method", r.Method).Str("path", r.URL.Path).
				Str("why", why).Msg("refused a cross-origin request")
			http.Error(w, "Forbidden: cross-origin request ("+why+")", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// crossOrigin says why r comes from another origin, or "" when it does not.
func crossOrigin(r *http.Request) string {
	switch site := r.Header.Values("Sec-Fetch-Site"); {
	case len(site) > 1:
		return "more than one Sec-Fetch-Site"
	case len(site) == 1 && site[0] != "same-origin" && site[0] != "none":
		return "Sec-Fetch-Site " + site[0]
	}
	origins := r.Header.Values("Origin")
	switch {
	case len(origins) == 0:
		return ""
	case len(origins) > 1:
		return "more than one Origin"
	}
	u, err := url.Parse(origins[0])
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "Origin " + origins[0] + " is not an http(s) origin"
	}
	if !strings.EqualFold(u.Host, r.Host) {
		return "Origin " + origins[0] + " is not " + r.Host
	}
	return ""
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
	if h.sessions != nil {
		health.Sessions = h.sessions.live()
	}
	health.Listening = int(h.listening.Load())
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
//
// The refusal says where the token is, and does not say "Unauthorized":
// mcp-remote, finding no OAuth metadata, registers itself at /register and
// shows the body of the refusal; a message with "Unauthorized" in it would
// make it wait for a browser sign-in that never comes, any other fails it
// at once with the message.
func requireToken(token, hint string, s *Server, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	if hint == "" {
		hint = "the token the server was given"
	}
	body := []byte(`{"error":"invalid_token","error_description":`)
	body = jsonenc.AppendString(body, "tairseach-mcp needs a bearer token, not an OAuth sign-in: send the header "+
		"Authorization: Bearer TOKEN, with "+hint, false)
	body = append(body, "}\n"...)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		sum := sha256.Sum256([]byte(strings.TrimSpace(got)))
		if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			s.log.Debug().Str("remote", r.RemoteAddr).Str("path", r.URL.Path).Msg("refused a request without the bearer token")
			w.Header().Set("WWW-Authenticate", `Bearer realm="tairseach-mcp"`)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write(body)
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
		ReadHeaderTimeout: min(ReadHeaderTimeout, h.cfg.ReadTimeout),
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

// sessionTracker caps the live sessions of the stateful handler and closes
// those idle too long. It sees every request that names a session and
// every session the handler creates. A session is idle when none of its
// requests, event streams included, is being served; after timeout idle, it
// is closed. When a new session would go over the cap, the one idle the
// longest is closed, preferring one with no request running. Sessions the
// go-sdk closes by itself (DELETE) leave stale entries that are dropped at
// the next count.
type sessionTracker struct {
	s       *Server
	max     int
	timeout time.Duration

	mu   sync.Mutex
	byID map[string]*trackedSession
}

type trackedSession struct {
	lastSeen time.Time
	running  int         // requests of this session being served
	timer    *time.Timer // fires after timeout idle; nil without a timeout
}

func newSessionTracker(s *Server, max int, timeout time.Duration) *sessionTracker {
	return &sessionTracker{s: s, max: max, timeout: timeout, byID: map[string]*trackedSession{}}
}

// wrap tracks the sessions of next, the stateful go-sdk handler.
func (t *sessionTracker) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(sessionIDHeader)
		if id == "" {
			next.ServeHTTP(w, r)
			// The go-sdk names a session it created in the response.
			if id := w.Header().Get(sessionIDHeader); id != "" && r.Method == http.MethodPost {
				t.added(id)
			}
			return
		}
		t.begin(id)
		defer t.end(id)
		next.ServeHTTP(w, r)
		if r.Method == http.MethodDelete {
			t.forget(id)
		}
	})
}

func (t *sessionTracker) begin(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ts := t.byID[id]; ts != nil {
		ts.running++
		ts.lastSeen = time.Now()
		if ts.timer != nil {
			ts.timer.Stop()
		}
	}
}

func (t *sessionTracker) end(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ts := t.byID[id]; ts != nil {
		ts.running--
		ts.lastSeen = time.Now()
		if ts.running == 0 && ts.timer != nil {
			ts.timer.Reset(t.timeout)
		}
	}
}

func (t *sessionTracker) forget(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dropLocked(id)
}

// dropLocked stops tracking id; t.mu is held.
func (t *sessionTracker) dropLocked(id string) {
	if ts := t.byID[id]; ts != nil {
		if ts.timer != nil {
			ts.timer.Stop()
		}
		delete(t.byID, id)
	}
}

// expire closes session id if it is still idle.
func (t *sessionTracker) expire(id string) {
	t.mu.Lock()
	ts := t.byID[id]
	if ts == nil || ts.running > 0 || time.Since(ts.lastSeen) < t.timeout {
		t.mu.Unlock()
		return
	}
	t.dropLocked(id)
	t.mu.Unlock()
	for ss := range t.s.allSessions() {
		if ss.ID() == id {
			t.s.log.Debug().Str("session", id).Stringer("idle", t.timeout).Msg("closing an idle session")
			_ = ss.Close()
			return
		}
	}
}

// added records a new session and, over the cap, closes the sessions idle
// the longest.
func (t *sessionTracker) added(id string) {
	t.mu.Lock()
	ts := &trackedSession{lastSeen: time.Now()}
	if t.timeout > 0 {
		ts.timer = time.AfterFunc(t.timeout, func() { t.expire(id) })
	}
	t.byID[id] = ts
	if t.max <= 0 || len(t.byID) <= t.max {
		t.mu.Unlock()
		return
	}
	// The snapshot is taken under t.mu, so that no session added meanwhile
	// is pruned as gone.
	live := t.liveSessions()
	t.prune(live)
	type victim struct {
		id   string
		busy bool
	}
	var victims []victim
	for len(t.byID) > t.max {
		v := t.idlest(id)
		if v == "" {
			break
		}
		victims = append(victims, victim{v, t.byID[v].running > 0})
		t.dropLocked(v)
	}
	t.mu.Unlock()
	for _, v := range victims {
		ss := live[v.id]
		if ss == nil {
			continue
		}
		t.s.log.Info().Str("session", v.id).Int("max_sessions", t.max).Bool("busy", v.busy).Msg("closing the session idle the longest: too many sessions")
		if v.busy {
			// Close waits for the session's requests: not here.
			go func() { _ = ss.Close() }()
		} else {
			_ = ss.Close()
		}
	}
}

// idlest returns the session idle the longest other than keep, preferring
// one with no request running; t.mu is held.
func (t *sessionTracker) idlest(keep string) string {
	var best string
	var bestTS *trackedSession
	for id, ts := range t.byID {
		if id == keep {
			continue
		}
		idle, bestIdle := ts.running == 0, bestTS != nil && bestTS.running == 0
		switch {
		case bestTS == nil,
			idle && !bestIdle,
			idle == bestIdle && ts.lastSeen.Before(bestTS.lastSeen):
			best, bestTS = id, ts
		}
	}
	return best
}

// prune drops the entries of sessions that are gone; t.mu is held.
func (t *sessionTracker) prune(live map[string]*mcp.ServerSession) {
	for id := range t.byID {
		if live[id] == nil {
			t.dropLocked(id)
		}
	}
}

// liveSessions returns the go-sdk server's sessions by id.
func (t *sessionTracker) liveSessions() map[string]*mcp.ServerSession {
	live := map[string]*mcp.ServerSession{}
	for ss := range t.s.allSessions() {
		if id := ss.ID(); id != "" {
			live[id] = ss
		}
	}
	return live
}

// live returns the number of live sessions.
func (t *sessionTracker) live() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.prune(t.liveSessions())
	return len(t.byID)
}
