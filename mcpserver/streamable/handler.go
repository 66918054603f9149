// Package streamable is the streamable HTTP transport, beside stdio: the
// handler of /mcp and /healthz (Handler) and its shutdown (Handler.Serve),
// the guards (RequireToken, SameOriginOnly, LocalhostOnly, SlowBodyGuard),
// the bearer token, the cap and idle timeout of sessions (Sessions), and
// the exact ids and progress tokens of HTTP clients (ExactIDs). Which
// go-sdk server serves a request (a header selection's) is the Server's
// to say, asked once per request (Server.Choose): the transport decides
// nothing about tools.
package streamable

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/internal/quote"
	"github.com/geilt/tairseach-mcp/mcpserver/internal/sdklog"
	"github.com/geilt/tairseach-mcp/mcpserver/shutdown"
)

// Server is what the transport serves; mcpserver's Server is one. The
// transport decides nothing about a request's tools: it asks the server,
// once per request to /mcp, which go-sdk server serves it (Choose).
type Server interface {
	// Choose answers the one question the transport asks of a request to
	// /mcp: which go-sdk server serves it, with every tool registered, and
	// what to do once it has been served; or a Refusal, the request's
	// answer instead (a 400 for bad X-MCP-* headers, a 503 when no header
	// selection can be served).
	Choose(r *http.Request) (Choice, *Refusal)
	// Sessions are the live sessions of every go-sdk server it serves.
	Sessions() iter.Seq[*mcp.ServerSession]
	// Health checks the backends, for /healthz.
	Health(ctx context.Context) Health
	// CutOff closes the backend connections at a shutdown's hurry: the
	// calls still running fail, so their handlers return.
	CutOff()
}

// Choice is a Server's answer for one request to /mcp.
type Choice struct {
	// Server serves the request: the go-sdk makes a new session on it. A
	// request of a session is served by the server that began it.
	Server *mcp.Server
	// Done, when not nil, is called once the request has been served.
	Done func(Served)
}

// Served is what the transport saw of a request once it was served.
type Served struct {
	// Began is the session the go-sdk began in answer to a POST that
	// named none; "" when it began none.
	Began string
	// Deleted is a DELETE of the request's session that ended it: the
	// go-sdk answered it with a 2xx status.
	Deleted bool
}

// Refusal is a request to /mcp a Server will not serve, as it is answered.
type Refusal struct {
	Status     int    // 400 or 503
	Text       string // the body, "Bad Request: ..." or "Service Unavailable: ..."
	RetryAfter string // the Retry-After header; "" for none
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

// Defaults of the HTTP transport.
const (
	// DefaultMaxRequestBytes caps one request body (the go-sdk's default).
	DefaultMaxRequestBytes = mcp.DefaultMaxRequestBodyBytes
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

// Config configures the streamable HTTP transport.
type Config struct {
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
	// End owns the end of the serving: it says when to drain (a stop
	// signal), when to cut off what is left and when to give up on it.
	// Nil: an Owner of the transport's own, drained when ctx is cancelled,
	// without deadlines.
	End *shutdown.Owner
	// Manifests is the manifests directory, as /healthz reports it.
	Manifests string
	// TokenHint says where a client finds the token ("the token in
	// ~/.tairseach/mcp-token"); a refused request is told it.
	TokenHint string
}

// Handler serves /mcp and /healthz for a Server and counts the requests
// that a shutdown must wait for.
type Handler struct {
	s       Server
	log     zerolog.Logger
	cfg     Config
	handler http.Handler // the whole tree, protections included
	// stateful serves the clients of the 2025 revisions, in sessions;
	// stateless serves those of 2026-07-28 and later, which have none.
	stateful, stateless http.Handler
	sessions            *Sessions
	listening           atomic.Int64 // open subscriptions/listen streams
	// inFlight counts POSTs to /mcp being served, except subscriptions/listen
	// streams, which only end when their session does.
	inFlight atomic.Int64
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.handler.ServeHTTP(w, r) }

// Protocol revisions and headers the routing looks at.
const (
	sessionlessRevision   = "2026-07-28"
	protocolVersionHeader = "Mcp-Protocol-Version"
	metaProtocolVersion   = "io.modelcontextprotocol/protocolVersion"
)

// serveMCP routes a request of revision 2026-07-28 or later without a
// session to the stateless handler, everything else to the stateful one.
func (h *Handler) serveMCP(w http.ResponseWriter, r *http.Request) {
	if h.sessionless(w, r) {
		if r.Header.Get("Mcp-Method") == "subscriptions/listen" {
			// Each listen stream holds a go-sdk session of its own as long
			// as it is open: they count against the same cap as sessions.
			n := h.listening.Add(1)
			defer h.listening.Add(-1)
			if max := h.cfg.MaxSessions; max > 0 && n > int64(max) {
				h.log.Warn().Int("max_sessions", max).Msg("refused a subscriptions/listen stream: too many open")
				http.Error(w, fmt.Sprintf("Service Unavailable: %d subscriptions/listen streams are open already (--max-sessions)", max), http.StatusServiceUnavailable)
				return
			}
		}
		h.stateless.ServeHTTP(w, r)
		return
	}
	if !h.cfg.Stateless && h.refuseWithoutSession(w, r) {
		return
	}
	h.stateful.ServeHTTP(w, r)
}

// choose asks the Server which go-sdk server serves r (Server.Choose),
// answers r itself when the Server refuses it, hands the go-sdk the server
// chosen, and tells the Server what came of r once it has been served.
func (h *Handler) choose(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ref := h.s.Choose(r)
		if ref != nil {
			if ref.RetryAfter != "" {
				w.Header().Set("Retry-After", ref.RetryAfter)
			}
			http.Error(w, ref.Text, ref.Status)
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), chosenKey{}, c.Server))
		if c.Done == nil {
			next.ServeHTTP(w, r)
			return
		}
		var served Served
		defer func() { c.Done(served) }()
		switch {
		case r.Header.Get(SessionIDHeader) == "":
			next.ServeHTTP(w, r)
			// The go-sdk names a session it began in the response.
			if r.Method == http.MethodPost {
				served.Began = w.Header().Get(SessionIDHeader)
			}
		case r.Method == http.MethodDelete:
			served.Deleted = Deleted(w, r, next)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// chosenKey is the context key of the go-sdk server choose chose: the
// go-sdk's getServer has only the request to go on.
type chosenKey struct{}

// chosenServer is the go-sdk's getServer: the server choose chose for r.
func chosenServer(r *http.Request) *mcp.Server {
	s, _ := r.Context().Value(chosenKey{}).(*mcp.Server)
	return s
}

// refuseWithoutSession answers a request other than initialize or ping
// that comes without a session with 400, as the 2025 revisions ask, and a
// JSON-RPC error that says what to do (the go-sdk would answer it with code
// 0). It reports whether it answered. It leaves r.Body as it found it.
func (h *Handler) refuseWithoutSession(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost || r.Header.Get(SessionIDHeader) != "" || r.Body == nil || r.Body == http.NoBody {
		return false
	}
	body, err := PeekBody(r, h.cfg.MaxRequestBytes)
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err != nil || json.Unmarshal(body, &req) != nil || len(req.ID) == 0 || string(req.ID) == "null" ||
		req.Method == "" || req.Method == "initialize" || req.Method == "ping" {
		return false
	}
	type wireError struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	resp, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   wireError       `json:"error"`
	}{"2.0", req.ID, wireError{jsonrpc.CodeInvalidRequest, fmt.Sprintf(
		"%s needs a session: send initialize first, then this request with the %s header of its response",
		quote.Word(req.Method, quote.Name), SessionIDHeader)}})
	if err != nil {
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(append(resp, '\n'))
	return true
}

// sessionless reports whether r is a POST without a session of a revision
// that has none: its MCP-Protocol-Version header or the _meta of its body
// says so. It leaves r.Body as it found it.
func (h *Handler) sessionless(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost || r.Header.Get(SessionIDHeader) != "" {
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
	body, err := PeekBody(r, h.cfg.MaxRequestBytes)
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

// counting counts the POSTs a shutdown waits for. A client of the 2026
// revision names the method in Mcp-Method (the go-sdk checks it against the
// body); its subscriptions/listen stream is not waited for.
func (h *Handler) counting(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Method") != "subscriptions/listen" {
			h.inFlight.Add(1)
			defer h.inFlight.Add(-1)
		}
		next.ServeHTTP(w, r)
	})
}

func (h *Handler) serveHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	health := h.s.Health(r.Context())
	health.Manifests = h.cfg.Manifests
	if h.sessions != nil {
		health.Sessions = h.sessions.Live()
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

// waitIdle returns when no counted request is in flight or done is closed.
func (h *Handler) waitIdle(done <-chan struct{}) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for h.inFlight.Load() > 0 {
		select {
		case <-done:
			return
		case <-tick.C:
		}
	}
}

// NewHandler returns the handler of the HTTP transport for s: MCP streamable
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
func NewHandler(s Server, cfg Config, log zerolog.Logger) *Handler {
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = DefaultBodyTimeout
	}
	h := &Handler{s: s, log: log, cfg: cfg}
	// The go-sdk asks for the server of each request it serves: the one
	// Server.Choose chose, in choose.
	getServer := chosenServer
	logger := slog.New(sdklog.New(log))
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
		h.sessions = NewSessions(s.Sessions, log, cfg.MaxSessions, cfg.SessionTimeout)
		h.stateful = h.sessions.Wrap(mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
			MaxRequestBodyBytes: cfg.MaxRequestBytes,
			Logger:              logger,
		}))
	}
	mux := http.NewServeMux()
	mux.Handle(MCPPath, h.counting(SlowBodyGuard(cfg.ReadTimeout, h.choose(ExactIDs(http.HandlerFunc(h.serveMCP), cfg.MaxRequestBytes)))))
	mux.Handle(HealthPath, LocalhostOnly(log, http.HandlerFunc(h.serveHealth)))

	var handler http.Handler = mux
	if cfg.Token != "" {
		handler = RequireToken(cfg.Token, cfg.TokenHint, log, handler)
	}
	h.handler = SameOriginOnly(log, handler)
	return h
}

// Serve serves the HTTP transport on ln until cfg.End drains
// (a stop signal) or ctx is cancelled, then shuts down gracefully: it stops
// accepting connections, waits for the requests in flight and closes every
// session once its requests are answered. When cfg.End hurries first, it
// cuts off what is still running by closing the backend connections, which
// leaves the server closed (Server.CutOff), and waits until each handler
// cut off has returned (each call recorded) or cfg.End abandons them. It
// closes ln.
func (h *Handler) Serve(ctx context.Context, ln net.Listener) error {
	end := h.cfg.End
	if end == nil {
		end = shutdown.New(shutdown.Config{})
		defer end.Close()
	}
	srv := &http.Server{
		Handler: h,
		// No ReadTimeout or WriteTimeout: event streams stay open as long
		// as their session.
		ReadHeaderTimeout: min(ReadHeaderTimeout, h.cfg.ReadTimeout),
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(sdklog.New(h.log), slog.LevelDebug),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer context.AfterFunc(ctx, func() { end.Drain(shutdown.StopSignal) })()
	select {
	case err := <-served:
		return fmt.Errorf("serving HTTP: %w", err)
	case <-end.Draining():
	}

	start := time.Now()
	h.log.Info().Int64("in_flight", h.inFlight.Load()).Str("why", string(end.Reason())).
		Msg("shutting down: finishing the requests in flight")
	hurry := end.HurryContext()
	// Shutdown closes the listener and idle connections at once, then
	// waits for the active ones: requests in flight, and event streams,
	// which end when their sessions are closed below.
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(hurry) }()
	h.waitIdle(hurry.Done())
	closed := h.closeSessions()
	select {
	case <-closed:
	case <-hurry.Done():
	}
	cutOff := hurry.Err() != nil
	if cutOff {
		st := end.Status()
		h.log.Warn().Int64("in_flight", h.inFlight.Load()).Dur("limit", st.Limit.Round(time.Millisecond)).
			Msg("requests still running at the " + string(st.Hurry) + "; cutting them off")
		// Closing the backend connections fails the calls still running,
		// so that their handlers return, each call recorded, and their
		// sessions can close.
		_ = srv.Close()
		h.s.CutOff()
		h.waitIdle(end.Abandoned())
		select {
		case <-closed:
		case <-end.Abandoned():
			h.log.Warn().Msg("sessions still closing at shutdown; not waiting for them")
		}
	}
	if err := <-shut; err != nil && !cutOff {
		_ = srv.Close()
	}
	<-served
	h.log.Info().Dur("took", time.Since(start)).Msg("HTTP server stopped")
	return nil
}

// closeSessions closes every session at once: their event streams end and
// their subscriptions are cancelled. A session closes once its requests are
// answered; the channel returned is closed when all have. The goroutine
// closing them is left to the process's exit if one never does.
func (h *Handler) closeSessions() <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for ss := range h.s.Sessions() {
			wg.Go(func() { _ = ss.Close() })
		}
		wg.Wait()
	}()
	return done
}
