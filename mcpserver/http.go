package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/mcpserver/shutdown"
	"github.com/geilt/tairseach-mcp/mcpserver/streamable"
)

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

// httpHandler serves /mcp and /healthz and counts the requests that a
// shutdown must wait for.
type httpHandler struct {
	s       *Server
	cfg     HTTPConfig
	handler http.Handler // the whole tree, protections included
	// stateful serves the clients of the 2025 revisions, in sessions;
	// stateless serves those of 2026-07-28 and later, which have none.
	stateful, stateless http.Handler
	sessions            *streamable.Sessions
	listening           atomic.Int64 // open subscriptions/listen streams
	// inFlight counts POSTs to /mcp being served, except subscriptions/listen
	// streams, which only end when their session does.
	inFlight atomic.Int64
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.handler.ServeHTTP(w, r) }

// Protocol revisions and headers the routing looks at.
const (
	sessionlessRevision   = "2026-07-28"
	protocolVersionHeader = "Mcp-Protocol-Version"
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
	if !h.cfg.Stateless && h.refuseWithoutSession(w, r) {
		return
	}
	h.stateful.ServeHTTP(w, r)
}

// refuseWithoutSession answers a request other than initialize or ping
// that comes without a session with 400, as the 2025 revisions ask, and a
// JSON-RPC error that says what to do (the go-sdk would answer it with code
// 0). It reports whether it answered. It leaves r.Body as it found it.
func (h *httpHandler) refuseWithoutSession(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost || r.Header.Get(streamable.SessionIDHeader) != "" || r.Body == nil || r.Body == http.NoBody {
		return false
	}
	body, err := streamable.PeekBody(r, h.cfg.MaxRequestBytes)
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
		req.Method, streamable.SessionIDHeader)}})
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
func (h *httpHandler) sessionless(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost || r.Header.Get(streamable.SessionIDHeader) != "" {
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
	body, err := streamable.PeekBody(r, h.cfg.MaxRequestBytes)
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
func (h *httpHandler) counting(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Method") != "subscriptions/listen" {
			h.inFlight.Add(1)
			defer h.inFlight.Add(-1)
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
func (h *httpHandler) waitIdle(done <-chan struct{}) {
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
